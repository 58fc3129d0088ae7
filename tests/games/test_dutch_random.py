"""Dutch (``dutch``) random playouts: 5,040 rounds (2 to 10 players, 1 and 2 decks) that never
crash and always end, cards conserved after every action, replay logs that games.verify accepts,
legal actions that are exactly the accepted ones, and no leak of unseen cards."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import games
from games.base import JSON
from games.dutch import DutchGame, DutchState, Phase
from games.errors import IllegalActionError
from games.log import verify

MATCHES_PER_SETTING = 28
ROUNDS_PER_MATCH = 10  # 18 settings * 28 matches * 10 rounds = 5,040 rounds


def dutch(**overrides: object) -> DutchGame:
    game = games.load("dutch", **overrides)
    assert isinstance(game, DutchGame)
    return game


def choose(rng: random.Random, state: DutchState, legal: list[JSON], call: float) -> JSON:
    """A cheap random policy: uniform, but calls Dutch with probability ``call`` and claims
    only one time in three (so that rounds end and hands do not grow without bound)."""
    phase = state.phase
    if phase == Phase.CALL:
        return "dutch" if rng.random() < call else "pass"
    if phase == Phase.CLAIM and rng.random() < 0.67:
        return "pass"
    return rng.choice(legal)


def play_round(state: DutchState, rng: random.Random, call: float, *, check: bool) -> int:
    total = 52 * state.game.rules.decks
    n = state.game.players
    steps = 0
    while not state.is_terminal():
        seat = state.current_player()
        assert 0 <= seat < n
        legal = state.legal_actions()
        assert legal, state
        state.apply_action(choose(rng, state, legal, call))
        steps += 1
        if check:
            cards = state.all_cards()
            assert len(cards) == total, (len(cards), state)
            assert len(set(cards)) == total, state
    assert state.current_player() == -1
    assert state.legal_actions() == []
    # Scores: the sums, plus the penalty for a caller without the lowest sum.
    sums, points = state.sums(), state.points()
    caller = state.caller
    for seat in range(n):
        extra = points[seat] - sums[seat]
        if seat == caller and sums[seat] > min(sums):
            assert extra == state.game.rules.call_penalty
        else:
            assert extra == 0
    limit = state.game.rules.turn_cap * n
    assert state.turns <= limit + n - 1
    assert caller is not None or state.turns == limit
    return steps


def settings_grid() -> Iterator[tuple[int, int]]:
    for players in range(2, 11):
        for decks in (1, 2):
            yield players, decks


@pytest.mark.parametrize(("players", "decks"), list(settings_grid()))
def test_random_rounds_end_conserve_cards_and_replay(players: int, decks: int) -> None:
    rng = random.Random(players * 10 + decks)
    rounds = 0
    for m in range(MATCHES_PER_SETTING):
        # Some matches never call: their rounds run to a (short) turn cap.
        capped = m % 7 == 0
        game = dutch(
            players=players,
            decks=decks,
            fixed_deals=ROUNDS_PER_MATCH,
            turn_cap=4 if capped else 60,
        )
        call = 0.0 if capped else rng.choice([0.05, 0.2, 0.5])
        match = game.new_match(seed=rng.randrange(1 << 32))
        while True:
            state = match.state
            assert isinstance(state, DutchState)
            play_round(state, rng, call, check=True)
            rounds += 1
            if match.is_over():
                break
            match.next_deal()
        log = json.loads(json.dumps(match.log()))  # the log is JSON-safe
        verdict = verify(log)
        assert verdict.ok, verdict
        assert log["places"] == game.places(log["totals"])
    assert rounds == MATCHES_PER_SETTING * ROUNDS_PER_MATCH


def test_a_tampered_log_is_caught() -> None:
    game = dutch(players=3, fixed_deals=2)
    match = game.new_match(seed=5)
    rng = random.Random(5)
    while True:
        state = match.state
        assert isinstance(state, DutchState)
        play_round(state, rng, 0.2, check=False)
        if match.is_over():
            break
        match.next_deal()
    log = match.log()
    assert verify(log).ok
    deals = log["deals"]
    assert isinstance(deals, list)
    assert isinstance(deals[0], dict)
    actions = deals[0]["actions"]
    assert isinstance(actions, list)
    bad = json.loads(json.dumps(log))
    bad["deals"][0]["actions"][0] = [actions[0][0], "replace:9"]  # type: ignore[index]
    verdict = verify(bad)
    assert not verdict.ok
    assert verdict.step == 0
    bad = json.loads(json.dumps(log))
    bad["deals"][0]["points"][0] += 1  # type: ignore[index]
    assert not verify(bad).ok
    bad = json.loads(json.dumps(log))
    stock = bad["deals"][0]["deal"]["stock"]  # type: ignore[index]
    stock[0], stock[1] = stock[1], stock[0]
    assert "not the deal its seed gives" in verify(bad).message


def candidate_actions(players: int) -> list[JSON]:
    """Every action that might be legal somewhere (slots up to 7), and some junk."""
    words: list[JSON] = ["draw", "take", "discard", "pass", "dutch"]
    for k in range(8):
        words += [f"replace:{k}", f"claim:{k}", f"peek:{k}"]
        words += [f"swap:{s}:{k}" for s in range(players + 1)]
    words += [f"give:{s}" for s in range(players + 1)]
    words += ["", "DRAW", "swap:0", "give:-1", "replace:x", 0, None, ["draw"], {"a": 1}]
    return words


def fingerprint(state: DutchState) -> object:
    """Everything a state holds (its slot attributes, compared by value)."""
    return [getattr(state, name) for name in DutchState.__slots__]


@pytest.mark.parametrize(("players", "decks"), [(2, 1), (3, 2), (4, 2), (7, 1), (10, 2)])
def test_legal_actions_are_exactly_the_accepted_ones(players: int, decks: int) -> None:
    rng = random.Random(players)
    game = dutch(players=players, decks=decks)
    candidates = candidate_actions(players)
    phases = set()
    for index in range(4):
        state = game.new_deal(index, seed=index)
        for _ in range(300):
            if state.is_terminal():
                break
            legal = state.legal_actions()
            phases.add(state.phase)
            assert len(set(map(str, legal))) == len(legal)
            before = fingerprint(state)
            for action in candidates:
                trial = state.clone()
                try:
                    trial.apply_action(action)
                except IllegalActionError:
                    assert action not in legal, action
                    assert fingerprint(trial) == before, action
                else:
                    assert action in legal, action
            state.apply_action(choose(rng, state, legal, 0.1))
    assert phases >= {Phase.DRAW, Phase.STOCK_CARD, Phase.TAKEN_CARD, Phase.CLAIM, Phase.CALL}


def test_legal_actions_are_in_the_documented_order() -> None:
    rng = random.Random(1)
    game = dutch(players=5)

    def key(action: JSON) -> tuple[int, ...]:
        assert isinstance(action, str)
        head, *numbers = action.split(":")
        rank = ["draw", "take", "pass", "discard", "dutch"].index(head) if not numbers else 9
        return (rank, *map(int, numbers))

    for index in range(20):
        state = game.new_deal(index, seed=index)
        while not state.is_terminal():
            legal = state.legal_actions()
            assert legal == sorted(legal, key=key)
            state.apply_action(choose(rng, state, legal, 0.1))


def play_and_watch(
    state: DutchState, observer: int, rng: random.Random, call: float
) -> tuple[list[dict[str, JSON]], set[int], set[int]]:
    """Play a round at random; return the observer's observation before every action and at
    the end, the cards the rules let it see, and the cards only other seats saw privately.

    What the observer may see is worked out from the referee's view, not from observations:
    every card that reaches the discard pile, every card shown by a claim, and the cards it
    drew or peeked at itself."""
    observations = []
    seen = set(state.discard_pile())
    private: set[int] = set()  # drawn or peeked at by another seat
    while True:
        observations.append(state.observation(observer))
        if state.is_terminal():
            return observations, seen, private - seen
        seat = state.current_player()
        action = choose(rng, state, state.legal_actions(), call)
        assert isinstance(action, str)
        verb, *numbers = action.split(":")
        if verb == "claim":
            card = state.slots(seat)[int(numbers[0])]
            assert card is not None
            seen.add(card)
        state.apply_action(action)
        seen.update(state.discard_pile())
        if verb == "draw" or verb == "peek":
            card = state.held() if verb == "draw" else state.slots(seat)[int(numbers[0])]
            assert card is not None
            (seen if seat == observer else private).add(card)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    players=st.integers(2, 10),
    decks=st.sampled_from([1, 2]),
    call=st.sampled_from([0.05, 0.3]),
    data=st.data(),
)
def test_cards_a_player_never_saw_do_not_change_its_observations(
    seed: int, players: int, decks: int, call: float, data: st.DataObject
) -> None:
    """Play a round; swap two cards of different ranks that the observer never saw (in the
    deal), replay the same actions: every action stays legal and every observation of the
    observer is identical. Cards other seats saw privately are chosen first."""
    observer = data.draw(st.integers(0, players - 1))
    game = dutch(players=players, decks=decks)
    state = game.new_deal(2, seed=seed)
    observations, seen, private = play_and_watch(state, observer, random.Random(seed), call)
    record = state.deal_record()
    hands, stock = record["hands"], record["stock"]
    assert isinstance(hands, list)
    assert isinstance(stock, list)
    rows = [[c for c in h if isinstance(c, int)] for h in hands if isinstance(h, list)]
    rows.append([c for c in stock if isinstance(c, int)])
    # Cards seen privately by others first, then cards dealt to slots, then the stock.
    places = [(r, k) for r, row in enumerate(rows) for k, c in enumerate(row) if c not in seen]
    places.sort(key=lambda p: (rows[p[0]][p[1]] not in private, p[0] == len(rows) - 1))
    assume(places)
    r1, k1 = places[0]
    second = [p for p in places[1:] if rows[p[0]][p[1]] % 13 != rows[r1][k1] % 13]
    assume(second)
    r2, k2 = data.draw(st.sampled_from(second))
    rows[r1][k1], rows[r2][k2] = rows[r2][k2], rows[r1][k1]
    other = game.new_deal(2, hands=rows[:-1], stock=rows[-1], reshuffle_seed=seed)
    start = other.deal_record()
    assert (start["hands"], start["stock"]) != (hands, stock)
    for step, (_, action) in enumerate(state.history()):
        assert other.observation(observer) == observations[step], step
        other.apply_action(action)
    # The end of the round reveals every card: only the points may differ.
    final = other.observation(observer)
    assert other.is_terminal()
    assert {**final, "points": None} == {**observations[-1], "points": None}
