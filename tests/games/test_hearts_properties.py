"""Hypothesis properties of the Hearts engine over random rules, seeds and play: cards are
conserved, a deal's points are what its tricks say (26 in all for whisthub, 16 with the TD
bonus, unless a moon changes it), and observations leak nothing hidden."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import games
from games.cards import DECK_SIZE, card_name, parse_card
from games.errors import IllegalActionError
from games.hearts import HeartsGame, HeartsState

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def hearts_games(draw: st.DrawFn) -> HeartsGame:
    """A Hearts game: a preset, and for the classic presets any player count and options."""
    preset = draw(st.sampled_from(["whisthub", "classic-fr", "classic-fr-sourdine", "two-player"]))
    overrides: dict[str, object] = {}
    if preset.startswith("classic"):
        overrides["players"] = players = draw(st.integers(3, 6))
        schedules = ["left", "right", "left-right", "left-right-none", "none"]
        if players == 4:
            schedules.append("left-right-across-none")
        overrides["pass_schedule"] = draw(st.sampled_from(schedules))
    if draw(st.booleans()):
        overrides["first_trick_points"] = draw(st.sampled_from(["forbidden", "allowed"]))
        overrides["lead_restriction"] = draw(st.sampled_from(["hearts", "hearts-and-qs", "none"]))
        overrides["hearts_broken_by"] = draw(
            st.sampled_from(["heart-played", "heart-or-qs-played", "heart-or-spade-discarded"])
        )
        overrides["moon"] = draw(st.sampled_from(["others-plus-26", "self-minus-26", "none"]))
        overrides["td_bonus"] = draw(st.booleans())
    game = games.load("hearts", preset, **overrides)
    assert isinstance(game, HeartsGame)
    return game


def names(mask: int) -> set[str]:
    return {card_name(c) for c in range(DECK_SIZE) if mask >> c & 1}


def record_of(state: HeartsState) -> dict[str, Any]:
    return dict(state.deal_record())


def obs(state: HeartsState, seat: int) -> dict[str, Any]:
    return dict(state.observation(seat))


def played_cards(state: HeartsState) -> list[str]:
    return [c for t in state.tricks() for c in t.cards] + list(obs(state, 0)["trick"]["cards"])


def check_cards_conserved(state: HeartsState) -> None:
    game = state.game
    record: dict[str, Any] = dict(state.deal_record())
    parts: list[list[str]] = [sorted(names(state.hand(s))) for s in range(game.players)]
    parts.append(played_cards(state))
    parts.append(list(record.get("reserve", [])))
    stock = list(record.get("stock", []))
    left = obs(state, 0).get("stock_size", 0)
    parts.append(stock[len(stock) - left :])
    everything = [c for part in parts for c in part]
    assert len(everything) == DECK_SIZE
    assert {parse_card(c) for c in everything} == set(range(DECK_SIZE))


@PROPERTY_SETTINGS
@given(game=hearts_games(), seed=st.integers(0, 2**40), index=st.integers(0, 11), rnd=st.randoms())
def test_cards_are_conserved_at_every_step(
    game: HeartsGame, seed: int, index: int, rnd: random.Random
) -> None:
    state = game.new_deal(index, seed=seed)
    check_cards_conserved(state)
    while not state.is_terminal():
        state.apply_action(rnd.choice(state.legal_actions()))
        check_cards_conserved(state)
    assert all(state.hand(s) == 0 for s in range(game.players))


def expected_points(game: HeartsGame, state: HeartsState) -> list[int]:
    """The points of a finished deal, recomputed from its tricks and the rules' text."""
    rules = game.rules
    n = game.players
    taken = [0] * n
    penalty = [0] * n
    reserve: list[str] = list(record_of(state).get("reserve", []))
    for k, trick in enumerate(state.tricks()):
        cards = list(trick.cards) + (reserve if k == 0 else [])
        pen = sum(c.endswith("H") for c in cards) + 13 * ("QS" in cards)
        penalty[trick.winner] += pen
        taken[trick.winner] += pen - (10 if rules.td_bonus and "TD" in cards else 0)
    shooter = next((s for s in range(n) if penalty[s] == 26), None)
    if shooter is None or rules.moon == "none":
        return taken
    if rules.moon == "others-plus-26":
        return [p - 26 if s == shooter else p + 26 for s, p in enumerate(taken)]
    return [p - 52 if s == shooter else p for s, p in enumerate(taken)]


@PROPERTY_SETTINGS
@given(game=hearts_games(), seed=st.integers(0, 2**40), index=st.integers(0, 11), rnd=st.randoms())
def test_points_per_deal(game: HeartsGame, seed: int, index: int, rnd: random.Random) -> None:
    state = game.new_deal(index, seed=seed)
    while not state.is_terminal():
        state.apply_action(rnd.choice(state.legal_actions()))
    points = state.points()
    assert points == expected_points(game, state)
    rules = game.rules
    base = 26 - (10 if rules.td_bonus else 0)
    shooter = state.moon_shooter()
    if shooter is None or rules.moon == "none":
        assert sum(points) == base  # 26 for whisthub, 16 with the TD bonus
    elif rules.moon == "others-plus-26":
        assert sum(points) == base - 26 + 26 * (game.players - 1)
    else:
        assert sum(points) == base - 52
    # Trick points (cards only) plus the reserve's make the deal's points before the moon.
    reserve: list[str] = list(record_of(state).get("reserve", []))
    in_reserve = sum(c.endswith("H") for c in reserve) + 13 * ("QS" in reserve)
    in_reserve -= 10 if rules.td_bonus and "TD" in reserve else 0
    assert sum(t.points for t in state.tricks()) + in_reserve == base


def hidden_cards(state: HeartsState, seat: int) -> list[tuple[str, str]]:
    """(location, card) for every card ``seat`` cannot know the place of: cards other seats
    were dealt, kept and still hold; the reserve before it is won; the stock cards not yet
    drawn, or drawn and still held by another seat. Before the first lead the low clubs are
    left out (who leads is public)."""
    game = state.game
    assert isinstance(game, HeartsGame)
    record: dict[str, Any] = dict(state.deal_record())
    passed = {s: set(a) for s, a in state.history() if isinstance(a, list)}
    out: list[tuple[str, str]] = []
    others = set()
    for other in range(game.players):
        if other == seat:
            continue
        held = names(state.hand(other))
        others |= held
        kept = held & set(record["hands"][other]) - passed.get(other, set())
        out.extend((f"hand{other}", c) for c in sorted(kept))
    if not state.tricks():
        out.extend(("reserve", c) for c in record.get("reserve", []))
    stock = list(record.get("stock", []))
    drawn = len(stock) - obs(state, seat).get("stock_size", 0)
    out.extend(("stock", c) for k, c in enumerate(stock) if k >= drawn or c in others)
    if obs(state, seat)["phase"] == "play" and not played_cards(state):
        # Who leads first is public: keep the lowest club in hand where it is (every club,
        # when no hand holds one), and every club below it out of the hands.
        in_hands = 0
        for s in range(game.players):
            in_hands |= state.hand(s)
        clubs = in_hands & 0x1FFF
        limit = (clubs & -clubs).bit_length() - 1 if clubs else 12
        out = [(loc, c) for loc, c in out if not (c.endswith("C") and parse_card(c) <= limit)]
    return out


def swapped_deal(game: HeartsGame, state: HeartsState, a: str, b: str) -> HeartsState:
    record: dict[str, Any] = dict(state.deal_record())

    def swap(cards: list[str]) -> list[str]:
        return [b if c == a else a if c == b else c for c in cards]

    hands = [swap(list(h)) for h in record["hands"]]
    if "stock" in record:
        return game.new_deal(state.deal_index, hands=hands, stock=swap(list(record["stock"])))
    reserve = swap(list(record["reserve"])) if "reserve" in record else None
    return game.new_deal(state.deal_index, hands=hands, reserve=reserve)


def hidden_passes(state: HeartsState, seat: int) -> list[int]:
    """Indexes in the history of passes ``seat`` cannot know: every other seat's pass before
    the exchange; after it, the passes that neither come from nor go to ``seat``."""
    game = state.game
    assert isinstance(game, HeartsGame)
    offset = game.table.pass_offset(state.deal_index) % game.players
    exchanged = obs(state, seat)["phase"] != "pass"
    out = []
    for i, (giver, action) in enumerate(state.history()):
        hidden = not exchanged or (giver + offset) % game.players != seat
        if isinstance(action, list) and giver != seat and hidden:
            out.append(i)
    return out


def replay(
    game: HeartsGame, state: HeartsState, deal: HeartsState | None, history: list[Any]
) -> HeartsState:
    other = deal or game.deal_from_record(state.deal_index, state.deal_record())
    try:
        for seat, action in history:
            assume(seat == other.current_player())
            other.apply_action(action)
    except IllegalActionError:
        assume(False)  # the change made the same actions illegal: not an indistinguishable deal
    # Who is to act is public: a change that moves it is not hidden from anyone.
    assume(other.current_player() == state.current_player())
    return other


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=hearts_games(), seed=st.integers(0, 2**40), index=st.integers(0, 11), data=st.data())
def test_observations_leak_nothing(
    game: HeartsGame, seed: int, index: int, data: st.DataObject
) -> None:
    """Two deals that differ only in what a seat cannot know (where two cards hidden from it
    lie, or what another seat passed out of its sight), after the same public actions, give
    that seat the same observation."""
    rnd = data.draw(st.randoms())
    state = game.new_deal(index, seed=seed)
    for _ in range(data.draw(st.integers(0, 6) | st.integers(0, 60))):  # passes often
        if state.is_terminal():
            break
        state.apply_action(rnd.choice(state.legal_actions()))
    assume(not state.is_terminal())
    seat = data.draw(st.integers(0, game.players - 1))
    history: list[Any] = state.history()
    passes = hidden_passes(state, seat)
    change_a_pass = data.draw(st.booleans())
    if passes and change_a_pass:
        # Another seat passed other cards.
        i = data.draw(st.sampled_from(passes))
        giver = history[i][0]
        record: dict[str, Any] = dict(state.deal_record())
        dealt = list(record["hands"][giver])
        chosen = sorted(data.draw(st.permutations(dealt))[: game.rules.pass_count], key=parse_card)
        assume(chosen != history[i][1])
        history[i] = (giver, chosen)
        other = replay(game, state, None, history)
        owner = (giver + game.table.pass_offset(index)) % game.players
        changed = [giver] + ([owner] if obs(state, seat)["phase"] != "pass" else [])
    else:
        hidden = hidden_cards(state, seat)
        assume(len(hidden) >= 2)
        first = data.draw(st.sampled_from(hidden))
        elsewhere = [
            h for h in hidden if h[1] != first[1] and (h[0] != first[0] or h[0] == "stock")
        ]
        assume(elsewhere)
        same_suit = [h for h in elsewhere if h[1][1] == first[1][1]]
        second = data.draw(st.sampled_from(same_suit or elsewhere))
        other = replay(game, state, swapped_deal(game, state, first[1], second[1]), history)
        changed = [int(loc[4:]) for loc, _ in (first, second) if loc.startswith("hand")]
    assert obs(other, seat) == obs(state, seat)
    # The test can see a difference: a seat whose cards changed sees it.
    for owner in changed:
        assert obs(other, owner) != obs(state, owner)
