"""Conformance of every registered game and preset to the engine API (OpenSpiel's
random_sim_test, generic): random playouts never crash, legal actions are never empty before
the end, current_player() is -1 exactly when the deal is over, an illegal action raises
IllegalActionError and changes nothing, observations are JSON, and a replay log round-trips
through games.verify exactly (while a tampered action or score makes it fail).

Everything here goes through the public API only, so it covers every game that registers.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

import games
from games.base import Action, Game, State
from games.cards import DECK_SIZE, card_name
from games.errors import IllegalActionError
from tests.games.engine_helpers import snapshot

CASES = [
    pytest.param(name, preset, id=f"{name}-{preset}")
    for name in games.game_names()
    for preset in games.game_class(name).presets
]

# Random deals per preset. Hearts' four presets make 10,400 deals (the suite's floor is
# 10,000); other games play fewer here and run their own long tests.
DEALS = {"hearts": 2600}
OTHER_DEALS = 100
THOROUGH_DEALS = 12  # deals checked at every step (illegal actions, JSON, clones)
MAX_STEPS = 20_000  # per deal: a deal that never ends is a bug
MAX_DEALS_PER_MATCH = 500

GARBAGE: list[Any] = ["XX", "", "2X", 7, -1, None, True, 1.5, [], ["2C", "2C", "2C"], {"x": 1}]
CARD_NAMES: list[Any] = [card_name(c) for c in range(DECK_SIZE)]


def json_round_trip(value: object) -> Any:
    return json.loads(json.dumps(value, allow_nan=False))


def illegal_candidates(legal: list[Action], rng: random.Random, count: int = 6) -> list[Any]:
    """Actions that are not legal now: garbage, and card names that are not in the list."""
    pool = [c for c in GARBAGE + rng.sample(CARD_NAMES, 12) if c not in legal]
    return pool[:count]


def check_step(state: State, legal: list[Action], rng: random.Random) -> None:
    players = state.game.players
    assert json_round_trip(legal) == legal
    assert json_round_trip(state.history()) == [list(item) for item in state.history()]
    for seat in range(players):
        obs = state.observation(seat)
        assert json_round_trip(obs) == obs
    before = snapshot(state)
    for action in illegal_candidates(legal, rng):
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    assert snapshot(state) == before, "an illegal action changed the state"
    tricks = [t.as_json() for t in state.tricks()]
    if tricks:  # trick-taking games show every finished trick, as tricks() gives them
        assert state.observation(state.current_player())["tricks"] == tricks
    other = state.clone()
    other.apply_action(rng.choice(legal))
    assert snapshot(state) == before, "playing on a clone changed the original"


def play_random(state: State, rng: random.Random, *, thorough: bool = False) -> int:
    """Play a deal to its end with uniformly random legal actions; the number of steps."""
    players = state.game.players
    steps = 0
    while not state.is_terminal():
        seat = state.current_player()
        assert 0 <= seat < players
        legal = state.legal_actions()
        assert legal, f"no legal action before the end, step {steps}"
        if thorough:
            check_step(state, legal, rng)
        state.apply_action(rng.choice(legal))
        steps += 1
        assert steps < MAX_STEPS
    assert state.current_player() == -1
    assert state.legal_actions() == []
    assert len(state.points()) == players
    return steps


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_random_playouts(name: str, preset: str) -> None:
    game = games.load(name, preset)
    rng = random.Random(f"playouts/{name}/{preset}")
    for index in range(DEALS.get(name, OTHER_DEALS)):
        state = game.new_deal(index, seed=rng.randrange(2**32))
        thorough = index < THOROUGH_DEALS
        steps = play_random(state, rng, thorough=thorough)
        assert len(state.history()) == steps
        if thorough:
            for seat in range(game.players):
                assert json_round_trip(state.observation(seat)) == state.observation(seat)
            assert json_round_trip(state.summary()) == state.summary()
            with pytest.raises(IllegalActionError):
                state.apply_action(CARD_NAMES[0])


def play_match(game: Game[object], seed: int, rng: random.Random) -> dict[str, Any]:
    match = game.new_match(seed)
    for _ in range(MAX_DEALS_PER_MATCH):
        play_random(match.state, rng)
        if match.is_over():
            break
        match.next_deal()
    assert match.is_over()
    log: dict[str, Any] = json_round_trip(match.log())
    assert log["places"] == game.places(log["scores"])
    return log


def illegal_in_place(game: Game[object], entry: dict[str, Any], step: int) -> Any:
    """An action that is illegal at that step of that deal."""
    state = game.deal_from_record(entry["index"], entry["deal"])
    for _, action in entry["actions"][:step]:
        state.apply_action(action)
    legal = state.legal_actions()
    candidate = next(c for c in GARBAGE if c not in legal)
    with pytest.raises(IllegalActionError):
        state.clone().apply_action(candidate)
    return candidate


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_replay_round_trip(name: str, preset: str) -> None:
    game = games.load(name, preset)
    rng = random.Random(f"replay/{name}/{preset}")
    for _ in range(3):
        log = play_match(game, rng.randrange(2**32), rng)
        verdict = games.verify(log)
        assert verdict.ok, verdict

        # The deals re-create from the seed alone.
        for entry in log["deals"]:
            state = game.new_deal(entry["index"], seed=log["seed"])
            assert json_round_trip(state.deal_record()) == entry["deal"]

        # Any one action replaced by an illegal one: verify names the deal and the step.
        k = rng.randrange(len(log["deals"]))
        entry = log["deals"][k]
        step = rng.randrange(len(entry["actions"]))
        bad = copy.deepcopy(log)
        bad["deals"][k]["actions"][step][1] = illegal_in_place(game, entry, step)
        verdict = games.verify(bad)
        assert not verdict.ok
        assert (verdict.deal, verdict.step) == (k, step)

        # An action by the wrong seat.
        bad = copy.deepcopy(log)
        seat, action = bad["deals"][k]["actions"][step]
        bad["deals"][k]["actions"][step] = [(seat + 1) % game.players, action]
        assert not games.verify(bad).ok

        # A wrong score, a wrong total, a wrong place, a missing deal.
        bad = copy.deepcopy(log)
        bad["deals"][k]["points"][0] += 1
        assert not games.verify(bad).ok
        bad = copy.deepcopy(log)
        bad["totals"][-1] -= 1
        assert not games.verify(bad).ok
        bad = copy.deepcopy(log)
        bad["places"] = list(reversed(bad["places"])) if len(set(bad["places"])) > 1 else None
        if bad["places"] is not None:
            assert not games.verify(bad).ok
        if len(log["deals"]) > 1:
            bad = copy.deepcopy(log)
            bad["deals"].pop()
            assert not games.verify(bad).ok


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_deals_are_a_pure_function_of_seed_and_index(name: str, preset: str) -> None:
    game = games.load(name, preset)
    first = [game.new_deal(i, seed=99).deal_record() for i in range(4)]
    again = [games.load(name, preset).new_deal(i, seed=99).deal_record() for i in range(4)]
    assert first == again
    assert len({json.dumps(r, sort_keys=True) for r in first}) == 4
    assert game.new_deal(0, seed=100).deal_record() != first[0]


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_catalogue_describes_every_option(name: str, preset: str) -> None:
    entry = next(e for e in games.catalogue() if e["name"] == name)
    assert json_round_trip(entry) == entry
    options = entry["options"]
    assert isinstance(options, list)
    names = {o["name"] for o in options}
    presets = entry["presets"]
    assert isinstance(presets, list)
    values = next(p["values"] for p in presets if p["name"] == preset)
    assert set(values) <= names
    for option in options:
        assert option["doc"], f"{name}: option {option['name']} has no documentation"
        assert option["allowed"]
