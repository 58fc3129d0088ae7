"""The int fast path (games.hearts_fast) plays by the same rules as the named API: every fast
playout, replayed card by card through the checked state, is legal and scores the same."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import games
from games.hearts import HeartsGame, HeartsState, Phase
from games.hearts_fast import (
    RANKS_OF,
    random_card,
    random_deal,
    random_deal_points,
    random_playout,
    random_subset,
)

VARIANTS = [
    ("whisthub", {}),
    ("whisthub", {"hearts_broken_by": "heart-or-qs-played", "td_bonus": True}),
    ("classic-fr", {}),
    ("classic-fr", {"players": 3}),
    ("classic-fr", {"players": 5, "first_trick_points": "forbidden"}),
    ("classic-fr", {"players": 6, "lead_restriction": "none"}),
    ("classic-fr-sourdine", {}),
    ("two-player", {}),
    ("two-player", {"first_trick_points": "forbidden", "moon": "others-plus-26"}),
]


def load(preset: str, overrides: dict[str, object]) -> HeartsGame:
    game = games.load("hearts", preset, **overrides)
    assert isinstance(game, HeartsGame)
    return game


def replay_trace(state: HeartsState, trace: list[int]) -> HeartsState:
    copy = state.clone()
    for item in trace:
        if copy.phase is Phase.PASS:
            copy.apply_pass_mask(item)
        else:
            copy.apply_card(item)  # checked: raises if the fast path played an illegal card
    return copy


@pytest.mark.parametrize(("preset", "overrides"), VARIANTS)
def test_fast_playouts_replay_legally_with_the_same_points(
    preset: str, overrides: dict[str, object]
) -> None:
    game = load(preset, overrides)
    rng = random.Random(f"{preset}{overrides}")
    for index in range(150):
        state = game.new_deal(index, seed=rng.randrange(2**32))
        for _ in range(rng.randrange(0, 40)):  # start anywhere: pass phase, mid-trick, ...
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))
        before = state.history()
        trace: list[int] = []
        points = random_playout(state, rng, trace)
        assert state.history() == before  # the state itself is untouched
        done = replay_trace(state, trace)
        assert done.is_terminal()
        assert done.points() == points


@pytest.mark.parametrize(("preset", "overrides"), VARIANTS)
def test_random_deal_points_follow_the_rules(preset: str, overrides: dict[str, object]) -> None:
    game = load(preset, overrides)
    rng = random.Random(5)
    rules = game.rules
    base = 26 - (10 if rules.td_bonus else 0)
    moon = {
        "none": {base},
        "others-plus-26": {base, base - 26 + 26 * (game.players - 1)},
        "self-minus-26": {base, base - 52},
    }[rules.moon]
    for index in range(300):
        points = random_deal_points(game, index, rng)
        assert len(points) == game.players
        assert sum(points) in moon


def test_random_deal_is_a_valid_deal() -> None:
    game = load("classic-fr", {"players": 5})
    state = random_deal(game, 0, random.Random(1))
    record = state.deal_record()
    assert record["seed"] is None
    rebuilt = game.deal_from_record(0, record)
    assert rebuilt.deal_record() == record


def test_random_card_and_subset_are_uniform_over_the_set() -> None:
    rng = random.Random(3)
    cards = 0b1011_0000_0110_0001
    counts = Counter(random_card(cards, rng.random) for _ in range(6000))
    assert set(counts) == {0, 5, 6, 12, 13, 15}
    assert all(800 < n < 1200 for n in counts.values())
    for _ in range(200):
        subset = random_subset(cards, 3, rng.random)
        assert subset.bit_count() == 3
        assert subset & ~cards == 0


def test_rank_table() -> None:
    assert RANKS_OF[0] == ()
    assert RANKS_OF[0b1_0000_0000_0101] == (0, 2, 12)
    assert all(len(RANKS_OF[m]) == m.bit_count() for m in range(8192))


def test_random_deals_give_every_card_to_every_seat_alike() -> None:
    """The fast path's shuffle (Fisher-Yates on 32-bit words) is not skewed: over 2,000 deals
    each card goes to each of the four seats about 500 times (a standard deviation of 19)."""
    game = load("whisthub", {})
    rng = random.Random(11)
    holders: Counter[tuple[int, int]] = Counter()
    for _ in range(2000):
        state = random_deal(game, 3, rng)
        for seat in range(4):
            hand = state.hand(seat)
            holders.update((card, seat) for card in range(52) if hand >> card & 1)

    assert len(holders) == 52 * 4
    assert 400 < min(holders.values()) <= max(holders.values()) < 600
