"""Differential test against OpenSpiel's ``hearts``: the same hands and the same random choices
through both engines must give the same legal sets at every decision and the same points.

OpenSpiel's options set to match ``whisthub``:

- ``pass_cards=False`` (the no-pass deal; a second test turns passing on and maps the
  directions), ``no_pts_on_first_trick=True``, ``must_break_hearts=True``,
  ``qs_breaks_hearts=False`` (QS does not break hearts on Whisthub);
- ``can_lead_any_club=False`` (2C is the only legal first lead);
- ``jd_bonus=False`` and ``avoid_all_tricks_bonus=False`` (no jack-of-diamonds bonus and no
  bonus for taking no trick: neither is a Whisthub rule);
- ``can_lead_hearts_instead_of_qs=False`` (a leader holding only QS and hearts, hearts not
  broken, must lead QS, as whisthub's rule "hearts may not be led ... unless the leader holds
  only hearts" says).

OpenSpiel always scores the moon as "shooter 0, every other player 26" (our
``moon="others-plus-26"``, the whisthub value) and reports returns as ``26 - points``.

Its card encoding is ``rank * 4 + suit`` (suits C D H S, ranks 2..A), ours ``suit * 13 + rank``;
its deal gives the i-th chance card to seat ``i % 4``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import games
from games.cards import card_name, parse_card
from games.hearts import HeartsGame, HeartsState

pyspiel = pytest.importorskip("pyspiel")

WHISTHUB_PARAMS = {
    "pass_cards": False,
    "no_pts_on_first_trick": True,
    "must_break_hearts": True,
    "qs_breaks_hearts": False,
    "can_lead_any_club": False,
    "jd_bonus": False,
    "avoid_all_tricks_bonus": False,
    "can_lead_hearts_instead_of_qs": False,
}
DEALS = 2000
DEALS_WITH_PASSES = 300

# Our pass direction (by deal index, whisthub) -> OpenSpiel's PassDir (no, left, across, right).
OPENSPIEL_PASS_DIR = {"none": 0, "left": 1, "across": 2, "right": 3}


def to_openspiel(card: int) -> int:
    return (card % 13) * 4 + card // 13


def from_openspiel(action: int) -> str:
    return card_name((action % 4) * 13 + action // 4)


def whisthub(**overrides: object) -> HeartsGame:
    game = games.load("hearts", "whisthub", **overrides)
    assert isinstance(game, HeartsGame)
    return game


def openspiel_deal(params: dict[str, Any], state: HeartsState, direction: int) -> Any:
    """An OpenSpiel state dealt the same hands as ``state`` (before any pass)."""
    game = pyspiel.load_game("hearts", params)
    os_state = game.new_initial_state()
    assert os_state.is_chance_node()
    os_state.apply_action(direction)
    hands = [[c for c in range(52) if state.hand(seat) >> c & 1] for seat in range(4)]
    for i in range(13):
        for seat in range(4):
            os_state.apply_action(to_openspiel(hands[seat][i]))
    assert not os_state.is_chance_node()
    return os_state


def test_card_encoding_and_parameters() -> None:
    game = pyspiel.load_game("hearts", WHISTHUB_PARAMS)
    assert {k: game.get_parameters()[k] for k in WHISTHUB_PARAMS} == WHISTHUB_PARAMS
    state = game.new_initial_state()
    # Its chance outcomes still list the four directions; only "no pass" (0) is legal.
    assert [a for a, _ in state.chance_outcomes()] == [0, 1, 2, 3]
    assert state.legal_actions() == [0]
    state.apply_action(0)
    for action in range(52):
        assert state.action_to_string(action) == from_openspiel(action)
        assert to_openspiel(parse_card(from_openspiel(action))) == action


def play_both(state: HeartsState, os_state: Any, rng: random.Random) -> None:
    while not state.is_terminal():
        assert not os_state.is_terminal()
        assert os_state.current_player() == state.current_player()
        ours = state.legal_actions()
        theirs = sorted((from_openspiel(a) for a in os_state.legal_actions()), key=parse_card)
        assert ours == theirs, (state.history(), ours, theirs)
        action = rng.choice(ours)
        assert isinstance(action, str)
        state.apply_action(action)
        os_state.apply_action(to_openspiel(parse_card(action)))
    assert os_state.is_terminal()
    assert state.points() == [round(26 - r) for r in os_state.returns()]


def test_same_legal_actions_and_points_as_openspiel() -> None:
    game = whisthub(pass_schedule="none")
    rng = random.Random(20261121)
    moons = 0
    for index in range(DEALS):
        state = game.new_deal(index, seed=rng.randrange(2**32))
        play_both(state, openspiel_deal(WHISTHUB_PARAMS, state, 0), rng)
        moons += state.moon_shooter() is not None
    assert moons > 0  # the moon rule was exercised too


def test_same_passes_legal_actions_and_points_as_openspiel() -> None:
    params = {**WHISTHUB_PARAMS, "pass_cards": True}
    game = whisthub()
    rng = random.Random(7)
    for index in range(DEALS_WITH_PASSES):
        state = game.new_deal(index, seed=rng.randrange(2**32))
        direction = OPENSPIEL_PASS_DIR[game.rules.pass_direction(index)]
        os_state = openspiel_deal(params, state, direction)
        while state.observation(0)["phase"] == "pass":
            seat = state.current_player()
            hand = [c for c in range(52) if state.hand(seat) >> c & 1]
            # OpenSpiel passes card by card: the cards it allows are exactly the hand.
            assert os_state.current_player() == seat
            assert sorted(os_state.legal_actions()) == sorted(to_openspiel(c) for c in hand)
            chosen = sorted(rng.sample(hand, 3))
            state.apply_action([card_name(c) for c in chosen])
            for card in chosen:
                os_state.apply_action(to_openspiel(card))
        play_both(state, os_state, rng)
