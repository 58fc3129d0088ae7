"""What the platform asks of a game instead of knowing it (issue 12): decisions per deal, the
pass phase and the cards passed, and the allowed numbers of deals."""

from __future__ import annotations

import json
import random

import pytest

import games
from games.base import Game, State
from games.errors import OptionError

CASES = [
    pytest.param(name, preset, id=f"{name}-{preset}")
    for name in games.game_names()
    for preset in games.game_class(name).presets
]


def play_out(state: State, rng: random.Random) -> int:
    """Random legal actions to the end of the deal; how many were taken."""
    steps = 0
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
        steps += 1
    return steps


def passes_seen(state: State) -> list[object] | None:
    """Each seat's passed cards as its own observation shows them (None: no pass)."""
    passed = [state.observation(seat).get("passed") for seat in range(state.game.players)]
    return None if all(p is None for p in passed) else passed


@pytest.mark.parametrize(("name", "preset"), CASES)
def test_passes_are_read_from_the_actions_of_a_deal(name: str, preset: str) -> None:
    game = games.load(name, preset)
    rng = random.Random(3)
    seen_pass = False
    for deal_index in range(4):
        state = game.new_deal(deal_index, seed=21)
        play_out(state, rng)
        history = state.history()
        expected = passes_seen(state)
        assert game.passes(history) == expected
        # The same from a replay log's JSON actions ([seat, action] lists).
        actions = json.loads(json.dumps([[seat, action] for seat, action in history]))
        assert game.passes(actions) == expected
        seen_pass = seen_pass or expected is not None
    assert seen_pass == game.has_passes


@pytest.mark.parametrize(
    ("name", "options", "has_passes"),
    [
        ("hearts", {}, True),
        ("hearts", {"pass_schedule": "none"}, False),
        ("hearts", {"players": 2, "leftover_cards": "stock", "pass_schedule": "none"}, False),
        ("roi", {}, False),
        ("dutch", {}, False),
    ],
)
def test_has_passes(name: str, options: dict[str, object], has_passes: bool) -> None:
    assert games.load(name, **options).has_passes is has_passes


@pytest.mark.parametrize(("name", "preset"), [c for c in CASES if c.values[0] != "dutch"])
def test_trick_games_take_exactly_their_decisions_per_deal(name: str, preset: str) -> None:
    """Hearts and Roi: a deal with a pass (or any Roi deal) takes exactly decisions_per_deal
    decisions, and a deal without a pass takes one per seat fewer."""
    game = games.load(name, preset)
    rng = random.Random(8)
    for deal_index in range(4):
        state = game.new_deal(deal_index, seed=5)
        steps = play_out(state, rng)
        with_pass = game.passes(state.history()) is not None
        assert steps == game.decisions_per_deal - (
            0 if with_pass else game.players * game.has_passes
        )


def test_roi_and_hearts_decisions_per_deal() -> None:
    assert games.load("roi").decisions_per_deal == 52
    assert games.load("hearts").decisions_per_deal == 56
    assert games.load("hearts", pass_schedule="none").decisions_per_deal == 52
    assert games.load("hearts", "classic-fr", players=3).decisions_per_deal == 3 * 17 + 3


def test_dutch_decisions_per_deal_is_a_documented_estimate() -> None:
    """n players * min(turn_cap, 8) turns * (n + 3) decisions per turn."""
    assert [games.load("dutch", players=n).decisions_per_deal for n in (2, 4, 10)] == [
        2 * 8 * 5,
        4 * 8 * 7,
        10 * 8 * 13,
    ]
    assert games.load("dutch", turn_cap=2).decisions_per_deal == 4 * 2 * 7
    # Random players call early: their rounds are well inside the estimate on average.
    game = games.load("dutch")
    rng = random.Random(2)
    lengths = [play_out(game.new_deal(d, seed=9), rng) for d in range(30)]
    assert sum(lengths) / len(lengths) < game.decisions_per_deal


@pytest.mark.parametrize("name", games.game_names())
def test_round_deals_up_gives_a_deal_count_the_rules_accept(name: str) -> None:
    game: Game[object] = games.load(name)
    multiple = game.deals_multiple
    for deals in range(1, 26):
        rounded = game.round_deals_up(deals)
        assert rounded >= deals
        assert rounded % multiple == 0
        assert rounded - deals < multiple
        assert games.load(name, fixed_deals=rounded).match_over([[0] * game.players] * rounded)
        if rounded != deals:
            with pytest.raises(OptionError):
                games.load(name, fixed_deals=deals)


def test_roi_deals_come_in_whole_games() -> None:
    roi = games.load("roi")
    assert roi.deals_multiple == 10
    assert [roi.round_deals_up(d) for d in (1, 2, 10, 11)] == [10, 10, 10, 20]
    assert games.load("hearts").round_deals_up(2) == 2
