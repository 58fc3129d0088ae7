"""Jeu du Roi (``roi``): one test per rule of RULES.md section 2, from explicit deals, plus
random playouts with invariants, replay round trips and the no-leak property."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import games
from games.cards import SUIT_MASKS, card_name, parse_card
from games.dealing import DealRng, shuffled
from games.errors import GameError, IllegalActionError, OptionError
from games.log import deal_log
from games.roi import CONTRACT_NAMES, RoiGame, RoiState, first_dealer

# -- a scripted deal ------------------------------------------------------------------------
#
# Dealer 3, so seat 0 leads. Twelve tricks of a single suit (everyone follows, so any hands
# make them legal) and a last trick of the four jacks, one per suit. Each row is (leader,
# cards in play order); the winner of each trick leads the next one.
SCRIPT: list[tuple[int, list[str]]] = [
    (0, ["AC", "2C", "3C", "4C"]),  # 1: seat 0 (AC)
    (0, ["5C", "KC", "6C", "7C"]),  # 2: seat 1 (KC)
    (1, ["8C", "9C", "QC", "TC"]),  # 3: seat 3 (QC)
    (3, ["2D", "3D", "4D", "AD"]),  # 4: seat 2 (AD)
    (2, ["KD", "5D", "6D", "7D"]),  # 5: seat 2 (KD)
    (2, ["8D", "9D", "TD", "QD"]),  # 6: seat 1 (QD)
    (1, ["2H", "KH", "3H", "4H"]),  # 7: seat 2 (KH)
    (2, ["5H", "6H", "AH", "7H"]),  # 8: seat 0 (AH)
    (0, ["8H", "QH", "9H", "TH"]),  # 9: seat 1 (QH)
    (1, ["2S", "3S", "4S", "5S"]),  # 10: seat 0 (5S)
    (0, ["6S", "7S", "AS", "8S"]),  # 11: seat 2 (AS)
    (2, ["9S", "TS", "KS", "QS"]),  # 12: seat 0 (KS)
    (0, ["JH", "JC", "JS", "JD"]),  # 13: JH led; the trump jack wins in trump deals
]

# What the scripted deal scores under each contract (worked out by hand, see SCRIPT).
SCRIPT_POINTS = {
    "no-tricks": [-10, -6, -8, -2],
    "no-hearts": [-10, -8, -8, 0],
    "no-kings-or-jacks": [-30, -6, -12, 0],
    "no-queens": [-10, -20, 0, -10],
    "no-king-of-hearts": [0, 0, -40, 0],
    "no-last-trick": [-20, 0, 0, 0],
    "trump-clubs": [20, 21, 16, 8],
    "trump-diamonds": [16, 16, 24, 9],
    "trump-hearts": [25, 16, 20, 4],
    "trump-spades": [24, 12, 25, 4],
}
CONTRACT_TOTALS = {
    "no-tricks": -26,
    "no-hearts": -26,
    "no-kings-or-jacks": -48,
    "no-queens": -40,
    "no-king-of-hearts": -40,
    "no-last-trick": -20,
    "trump-clubs": 65,
    "trump-diamonds": 65,
    "trump-hearts": 65,
    "trump-spades": 65,
}


def script_hands() -> list[list[str]]:
    hands: list[list[str]] = [[], [], [], []]
    for leader, cards in SCRIPT:
        for position, name in enumerate(cards):
            hands[(leader + position) % 4].append(name)
    return hands


def dealt_hands(state: games.State) -> list[list[str]]:
    """The hands a deal was dealt (from its record), as lists of names."""
    hands: Any = state.deal_record()["hands"]
    return [list(hand) for hand in hands]


def hands_from(text: str) -> list[list[str]]:
    """Four hands written as four space-separated lines of card names (seat 0 first)."""
    rows = [line.split() for line in text.strip().splitlines()]
    assert len(rows) == 4
    return rows


# Seat 0 holds every club, seat 1 every diamond, seat 2 every heart, seat 3 every spade.
BY_SUIT = [[r + s for r in "23456789TJQKA"] for s in "CDHS"]


@pytest.fixture
def roi() -> RoiGame:
    game = games.load("roi")
    assert isinstance(game, RoiGame)
    return game


def play(state: games.State, *cards: str) -> None:
    for name in cards:
        state.apply_action(name)


def play_out(state: games.State, rng: random.Random | None = None) -> None:
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(rng.choice(legal) if rng else legal[0])


def scripted(game: RoiGame, deal_index: int) -> RoiState:
    state = game.new_deal(deal_index, hands=script_hands(), dealer=3)
    for _, cards in SCRIPT:
        play(state, *cards)
    return state


# -- RULES.md 2: players, cards, dealer ------------------------------------------------------


def test_four_players_52_cards_13_each(roi: RoiGame) -> None:
    assert roi.players == 4
    hands = roi.new_deal(0, seed=5).deal_record()["hands"]
    assert isinstance(hands, list)
    assert [len(h) for h in hands if isinstance(h, list)] == [13, 13, 13, 13]
    every = [name for h in hands if isinstance(h, list) for name in h]
    assert sorted(parse_card(n) for n in every if isinstance(n, str)) == list(range(52))


def test_players_option_is_fixed_at_four() -> None:
    assert games.load("roi").rules.players == 4  # type: ignore[attr-defined]
    with pytest.raises(OptionError) as excinfo:
        games.load("roi", players=5)
    assert excinfo.value.option == "players"


def test_first_dealer_comes_from_seed(roi: RoiGame) -> None:
    for seed in range(40):
        expected = DealRng(seed, 0, "dealer").below(4)
        assert first_dealer(seed) == expected
        assert roi.new_deal(0, seed=seed).dealer == expected
        assert roi.new_match(seed).state.dealer == expected  # type: ignore[attr-defined]
    # The seed really chooses: every seat is the first dealer for some seed.
    assert {first_dealer(seed) for seed in range(40)} == {0, 1, 2, 3}


def test_dealer_rotates_clockwise(roi: RoiGame) -> None:
    game = games.load("roi", fixed_deals=20)
    match = game.new_match(11)
    dealers = []
    while True:
        state = match.state
        assert isinstance(state, RoiState)
        dealers.append(state.dealer)
        play_out(state)
        if match.is_over():
            break
        match.next_deal()
    first = first_dealer(11)
    assert dealers == [(first + d) % 4 for d in range(20)]


def test_deal_is_one_card_at_a_time_as_docs_dealing_says(roi: RoiGame) -> None:
    for seed, index in [(42, 0), (7, 3), (123456789, 19)]:
        state = roi.new_deal(index, seed=seed)
        order = shuffled(52, seed=seed, deal_index=index)
        expected: list[list[str]] = [[], [], [], []]
        for p, card in enumerate(order):
            expected[p % 4].append(card_name(card))
        assert state.deal_record()["hands"] == [sorted(h, key=parse_card) for h in expected]
    # The four-player vector of docs/dealing.md (seed 0, deal 0): the same hands as Hearts.
    assert roi.new_deal(0, seed=0).deal_record()["hands"] == [
        ["KC", "2D", "TD", "2H", "5H", "6H", "9H", "TH", "JH", "AH", "2S", "4S", "6S"],
        ["2C", "5C", "6C", "9C", "3D", "6D", "9D", "7H", "QH", "5S", "9S", "TS", "KS"],
        ["3C", "4C", "TC", "JC", "4D", "5D", "7D", "8D", "KD", "AD", "8H", "KH", "8S"],
        ["7C", "8C", "QC", "AC", "JD", "QD", "3H", "4H", "3S", "7S", "JS", "QS", "AS"],
    ]


def test_deal_test_vector() -> None:
    # A published vector: anyone reimplementing docs/dealing.md and the roi section of
    # docs/rules.md must find these hands for seed 42, deal 0.
    record = games.load("roi").new_deal(0, seed=42).deal_record()
    assert record == {
        "seed": 42,
        "dealer": 3,
        "hands": [
            ["2C", "3C", "5C", "7C", "4D", "7D", "TD", "QD", "KD", "3H", "4H", "6H", "TH"],
            ["8C", "TC", "QC", "AC", "6D", "8D", "9D", "2H", "JH", "AH", "4S", "9S", "KS"],
            ["6C", "9C", "JC", "KC", "5D", "9H", "QH", "2S", "3S", "7S", "8S", "JS", "QS"],
            ["4C", "2D", "3D", "JD", "AD", "5H", "7H", "8H", "KH", "5S", "6S", "TS", "AS"],
        ],
    }


def test_deal_is_a_pure_function_of_seed_index_and_rules(roi: RoiGame) -> None:
    other = games.load("roi")
    assert roi.new_deal(4, seed=99).deal_record() == other.new_deal(4, seed=99).deal_record()
    assert roi.new_deal(4, seed=99).deal_record() != roi.new_deal(5, seed=99).deal_record()
    assert roi.new_deal(4, seed=99).deal_record() != roi.new_deal(4, seed=98).deal_record()


def test_player_left_of_dealer_leads_first_trick(roi: RoiGame) -> None:
    for dealer in range(4):
        state = roi.new_deal(0, hands=BY_SUIT, dealer=dealer)
        assert state.current_player() == (dealer + 1) % 4
        assert state.observation(0)["to_act"] == (dealer + 1) % 4
    for seed in range(10):
        state = roi.new_deal(3, seed=seed)
        assert state.current_player() == (state.dealer + 1) % 4


def test_winner_leads_next_trick(roi: RoiGame) -> None:
    state = roi.new_deal(0, hands=script_hands(), dealer=3)
    for number, (leader, cards) in enumerate(SCRIPT):
        assert state.current_player() == leader, f"trick {number + 1}"
        play(state, *cards)
        if number + 1 < len(SCRIPT):
            assert state.tricks()[-1].winner == SCRIPT[number + 1][0]
    assert state.current_player() == -1


# -- RULES.md 2: following, trumps -----------------------------------------------------------


def test_must_follow_suit(roi: RoiGame) -> None:
    hands = hands_from(
        """
        2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC
        2H 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD
        3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH AD
        2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS
        """
    )
    state = roi.new_deal(6, hands=hands, dealer=0)  # trump clubs; seat 1 leads
    play(state, "2H")
    assert state.current_player() == 2
    assert state.legal_actions() == [n + "H" for n in "3456789TJQKA"]
    before = state.observation(2)
    with pytest.raises(IllegalActionError, match="you must follow hearts"):
        state.apply_action("AD")
    assert state.observation(2) == before  # unchanged
    play(state, "3H")
    # Seat 3 has no heart: any card is legal.
    assert state.legal_actions() == BY_SUIT[3]


def test_may_play_any_card_when_unable_to_follow(roi: RoiGame) -> None:
    state = roi.new_deal(0, hands=BY_SUIT, dealer=3)  # seat 0 leads a club
    play(state, "5C")
    for seat in (1, 2, 3):
        assert state.current_player() == seat
        assert state.legal_actions() == BY_SUIT[seat]
        play(state, BY_SUIT[seat][-1])  # the ace of its own suit, a discard
    assert state.tricks()[0].winner == 0  # no trumps: 5C wins over three aces


def test_no_lead_restrictions_in_any_contract(roi: RoiGame) -> None:
    hands = script_hands()
    for index in range(10):
        state = roi.new_deal(index, hands=hands, dealer=3)
        assert state.legal_actions() == sorted(hands[0], key=parse_card)
        # Even a heart in "no hearts" and KH in "no king of hearts" can be led at once.
        state.apply_action("JH")


def test_may_discard_instead_of_trumping(roi: RoiGame) -> None:
    hands = hands_from(
        """
        2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC
        2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD 2H
        AD 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH
        2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS
        """
    )
    state = roi.new_deal(8, hands=hands, dealer=3)  # trump hearts; seat 0 leads
    assert state.contract.name == "trump-hearts"
    play(state, "AC")
    # Seat 1 holds a trump (2H) and no club: it may trump or discard a diamond.
    assert set(state.legal_actions()) == set(hands[1])
    play(state, "2D")  # a discard, not a trump
    play(state, "AD")  # seat 2 discards too, though it holds twelve hearts
    play(state, "2S")
    assert state.tricks()[0].winner == 0


def test_no_obligation_to_overtrump(roi: RoiGame) -> None:
    hands = hands_from(
        """
        2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC
        2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD 2H
        AD 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH
        2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS
        """
    )
    state = roi.new_deal(8, hands=hands, dealer=3)  # trump hearts
    play(state, "AC", "2H")  # seat 1 trumps with its only heart
    # Seat 2 has no club: it may overtrump with any heart, or discard its ace of diamonds.
    assert set(state.legal_actions()) == set(hands[2])
    play(state, "AD")  # discards the ace of diamonds rather than overtrumping
    play(state, "AS")
    assert state.tricks()[0].winner == 1


def test_may_undertrump(roi: RoiGame) -> None:
    hands = hands_from(
        """
        2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC
        2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AH
        AD 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH
        2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS
        """
    )
    state = roi.new_deal(8, hands=hands, dealer=3)  # trump hearts
    play(state, "AC", "AH", "2H", "AS")  # seat 2 plays a lower trump: legal
    assert state.tricks()[0].winner == 1


def test_highest_trump_wins(roi: RoiGame) -> None:
    hands = hands_from(
        """
        2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC
        2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD 2H
        AD 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH
        2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS
        """
    )
    state = roi.new_deal(8, hands=hands, dealer=3)  # trump hearts
    play(state, "AC", "2H", "3H", "AS")
    assert state.tricks()[0].winner == 2  # 3H over 2H, both over the ace led
    assert state.tricks()[0].points == 4 + 2  # a trick and two trumps


def test_highest_card_of_suit_led_wins_without_trumps(roi: RoiGame) -> None:
    for index in range(6):  # the six contracts without trumps
        state = roi.new_deal(index, hands=BY_SUIT, dealer=0)  # seat 1 leads diamonds
        play(state, "2D", "AH", "AS", "AC")
        assert state.tricks()[0].winner == 1
    # In a trump deal the same trick goes to the trump.
    state = roi.new_deal(9, hands=BY_SUIT, dealer=0)  # trump spades
    play(state, "2D", "AH", "2S", "AC")
    assert state.tricks()[0].winner == 3


def test_trump_led_is_won_by_highest_trump(roi: RoiGame) -> None:
    hands = script_hands()
    state = roi.new_deal(6, hands=hands, dealer=3)  # trump clubs: trick 1 is all clubs
    play(state, *SCRIPT[0][1])
    assert state.tricks()[0].winner == 0
    assert state.tricks()[0].points == 4 + 4


# -- RULES.md 2: contracts and scoring --------------------------------------------------------


@pytest.mark.parametrize(("index", "name"), list(enumerate(CONTRACT_NAMES)))
def test_each_contract_scores(roi: RoiGame, index: int, name: str) -> None:
    state = scripted(roi, index)
    assert state.contract.name == name
    assert state.is_terminal()
    assert state.points() == SCRIPT_POINTS[name]
    assert sum(state.points()) == CONTRACT_TOTALS[name] == state.contract.total
    assert sum(t.points for t in state.tricks()) == CONTRACT_TOTALS[name]


def test_contract_order_is_fixed_by_deal_index(roi: RoiGame) -> None:
    for index in range(30):
        state = roi.new_deal(index, seed=1)
        assert state.contract.name == CONTRACT_NAMES[index % 10]
        trump = state.observation(0)["trump"]
        assert trump == (None if index % 10 < 6 else "CDHS"[index % 10 - 6])


def test_contract_scores_are_options() -> None:
    game = games.load("roi", queen_penalty=5, trump_card_points=2)
    assert isinstance(game, RoiGame)
    assert scripted(game, 3).points() == [-5, -10, 0, -5]
    assert scripted(game, 6).points() == [20 + 4, 21 + 5, 16, 8 + 4]


def test_contract_order_option() -> None:
    order = list(reversed(CONTRACT_NAMES))
    game = games.load("roi", contracts=",".join(order))
    assert isinstance(game, RoiGame)
    assert [game.new_deal(i, seed=3).contract.name for i in range(10)] == order
    assert scripted(game, 0).points() == SCRIPT_POINTS["trump-spades"]


def test_all_13_tricks_played_even_when_penalties_are_exhausted(roi: RoiGame) -> None:
    # No king of hearts: KH falls in trick 7, yet all 13 tricks are played.
    state = roi.new_deal(4, hands=script_hands(), dealer=3)
    for number, (_, cards) in enumerate(SCRIPT):
        if number >= 7:
            assert state.points() == [0, 0, -40, 0]  # nothing left to lose
            assert not state.is_terminal()
            assert state.legal_actions()
        play(state, *cards)
    assert state.is_terminal()
    assert len(state.tricks()) == 13
    assert len(state.history()) == 52
    # No queens: all four fall by trick 12 here, and trick 13 is still played.
    assert len(scripted(roi, 3).tricks()) == 13


def test_last_trick_penalty_goes_to_winner_of_trick_13(roi: RoiGame) -> None:
    state = scripted(roi, 5)
    assert [t.points for t in state.tricks()] == [0] * 12 + [-20]
    assert state.tricks()[-1].winner == 0


def test_final_score_floored_at_zero(roi: RoiGame) -> None:
    deal_points = [[-26, 0, 0, 0]] + [[-2, 4, 0, -2]] * 9
    assert roi.match_scores(deal_points) == [0, 36, 0, 0]
    unfloored = games.load("roi", floor_at_zero=False)
    assert unfloored.match_scores(deal_points) == [-44, 36, 0, -18]
    # Running totals are not floored; the final scores are.
    match = roi.new_match(5)
    while True:
        play_out(match.state, random.Random(5))
        if match.is_over():
            break
        match.next_deal()
    assert match.scores() == [max(t, 0) for t in match.totals()]


def test_final_score_is_positives_minus_penalties(roi: RoiGame) -> None:
    deal_points = [SCRIPT_POINTS[name] for name in CONTRACT_NAMES]
    assert roi.match_scores(deal_points) == [5, 25, 17, 13]


def test_floor_applies_per_game_of_ten_deals() -> None:
    game = games.load("roi", fixed_deals=20)
    first = [[-10, 0, 0, 0]] * 5 + [[0, 0, 0, 0]] * 5  # seat 0: -50 in game 1
    second = [[3, 0, 0, 0]] * 10  # +30 in game 2
    assert game.match_scores(first + second) == [30, 0, 0, 0]
    assert game.match_scores(second + first) == [30, 0, 0, 0]


def test_highest_final_score_wins(roi: RoiGame) -> None:
    assert not RoiGame.lower_is_better
    assert roi.places([5, 25, 17, 13]) == [4, 1, 2, 3]
    assert roi.places([0, 25, 25, 0]) == [3, 1, 1, 3]


def test_match_is_exactly_10_deals_in_order(roi: RoiGame) -> None:
    match = roi.new_match(2024)
    names = []
    rng = random.Random(0)
    while True:
        state = match.state
        assert isinstance(state, RoiState)
        names.append(state.contract.name)
        assert not match.is_over()
        play_out(state, rng)
        if match.is_over():
            break
        match.next_deal()
    assert names == list(CONTRACT_NAMES)
    with pytest.raises(RuntimeError):
        match.next_deal()
    points = [s.points() for s in match.deals()]
    assert match.totals() == [sum(col) for col in zip(*points, strict=True)]
    assert match.scores() == roi.match_scores(points)
    assert match.places() == roi.places(match.scores())
    assert games.verify(match.log()).ok


def test_fixed_deals_plays_consecutive_games() -> None:
    game = games.load("roi", fixed_deals=30)
    assert isinstance(game, RoiGame)
    assert not game.match_over([[0] * 4] * 29)
    assert game.match_over([[0] * 4] * 30)
    assert [game.new_deal(i, seed=0).contract.name for i in range(30)] == list(CONTRACT_NAMES) * 3


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"fixed_deals": 15}, "fixed_deals"),
        ({"fixed_deals": 5}, "fixed_deals"),
        ({"fixed_deals": -10}, "fixed_deals"),
        ({"contracts": "no-tricks"}, "contracts"),
        ({"contracts": ",".join((*CONTRACT_NAMES[:9], "no-tricks"))}, "contracts"),
        ({"queen_penalty": -10}, "queen_penalty"),
        ({"floor_at_zero": "yes"}, "floor_at_zero"),
        ({"trumps": True}, "trumps"),
    ],
)
def test_bad_options_are_refused(overrides: dict[str, object], option: str) -> None:
    with pytest.raises(OptionError) as excinfo:
        games.load("roi", **overrides)
    assert excinfo.value.option == option
    assert option in str(excinfo.value)


def test_presets() -> None:
    assert RoiGame.default_preset == "classic"
    assert games.load("roi", "classic").rules == games.load("roi").rules  # type: ignore[attr-defined]
    with pytest.raises(OptionError):
        games.load("roi", "whisthub")
    entry = next(e for e in games.catalogue() if e["name"] == "roi")
    assert entry["lower_is_better"] is False
    assert all(o["doc"] for o in entry["options"])  # type: ignore[attr-defined,index,union-attr]


# -- the API ----------------------------------------------------------------------------------


def test_illegal_actions_are_refused_and_change_nothing(roi: RoiGame) -> None:
    state = roi.new_deal(0, hands=BY_SUIT, dealer=3)
    before = (state.observation(0), state.history(), state.points())
    with pytest.raises(IllegalActionError, match="you do not hold KH"):
        state.apply_action("KH")
    for bad in ["ZZ", "", 12, None, ["2C"], {"card": "2C"}, "2C "[:1]]:
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)  # type: ignore[arg-type]
    assert (state.observation(0), state.history(), state.points()) == before
    state.apply_action("10c")  # other spellings are accepted and recorded by name
    assert state.history() == [(0, "TC")]
    play_out(state)
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action("2C")
    assert state.legal_actions() == []
    assert state.current_player() == -1


def test_observation_names_contract_and_trump(roi: RoiGame) -> None:
    state = roi.new_deal(8, hands=script_hands(), dealer=3)
    play(state, *SCRIPT[0][1], "5C")
    obs = state.observation(1)
    json.dumps(obs)
    assert obs["contract"] == "trump-hearts"
    assert obs["contract_number"] == 9
    assert obs["trump"] == "H"
    assert obs["trump_suit"] == "hearts"
    assert obs["dealer"] == 3
    assert obs["seat"] == 1
    assert obs["hand"] == sorted(script_hands()[1][1:], key=parse_card)
    assert obs["to_act"] == 1
    assert obs["phase"] == "play"
    assert obs["hand_sizes"] == [11, 12, 12, 12]
    assert obs["trick"] == {"leader": 0, "cards": ["5C"]}
    assert obs["tricks"] == [
        {"leader": 0, "cards": ["AC", "2C", "3C", "4C"], "winner": 0, "points": 4}
    ]
    assert obs["points_taken"] == [4, 0, 0, 0]  # a trick, no trump in it
    assert obs["tricks_taken"] == [1, 0, 0, 0]
    assert "points" not in obs  # the deal's points once it is over
    for _, cards in SCRIPT[1:]:
        play(state, *cards[1:] if cards[0] == "5C" else cards)
    over = state.observation(1)
    assert over["phase"] == "over"
    assert over["to_act"] == -1
    assert over["trick"] == {"leader": None, "cards": []}
    assert over["points"] == over["points_taken"] == SCRIPT_POINTS["trump-hearts"]
    assert over["hand"] == []
    plain = roi.new_deal(2, hands=script_hands(), dealer=3).observation(0)
    assert plain["contract"] == "no-kings-or-jacks"
    assert plain["trump"] is None
    assert plain["trump_suit"] is None


def test_tricks_record_leader_cards_winner_and_points(roi: RoiGame) -> None:
    state = scripted(roi, 1)  # no hearts
    tricks = state.tricks()
    assert [t.leader for t in tricks] == [leader for leader, _ in SCRIPT]
    assert [list(t.cards) for t in tricks] == [cards for _, cards in SCRIPT]
    assert [t.winner for t in tricks] == [0, 1, 3, 2, 2, 1, 2, 0, 1, 0, 2, 0, 0]
    assert [t.points for t in tricks] == [0] * 6 + [-8] * 3 + [0] * 3 + [-2]
    summary = state.summary()
    json.dumps(summary)
    assert summary["contract"] == "no-hearts"
    assert summary["trump"] is None
    assert summary["dealer"] == 3
    assert summary["points"] == SCRIPT_POINTS["no-hearts"]


def test_history_and_clone(roi: RoiGame) -> None:
    state = roi.new_deal(7, seed=3)
    rng = random.Random(3)
    played = []
    for _ in range(21):
        seat = state.current_player()
        card = rng.choice(state.legal_actions())
        state.apply_action(card)
        played.append((seat, card))
    assert state.history() == played
    twin = state.clone()
    assert twin.history() == played
    assert twin.observation(0) == state.observation(0)
    play_out(twin)
    assert twin.is_terminal()
    assert not state.is_terminal()
    assert state.history() == played


def test_deal_record_round_trip(roi: RoiGame) -> None:
    state = roi.new_deal(6, seed=77)
    record = state.deal_record()
    json.dumps(record)
    assert set(record) == {"seed", "dealer", "hands"}
    again = roi.deal_from_record(6, record)
    assert again.deal_record() == record
    assert again.observation(2) == state.observation(2)
    explicit = roi.new_deal(4, hands=script_hands(), dealer=3)
    assert explicit.deal_record()["seed"] is None
    assert roi.deal_from_record(4, explicit.deal_record()).deal_record() == explicit.deal_record()


def test_explicit_hands_are_checked(roi: RoiGame) -> None:
    hands = script_hands()
    with pytest.raises(GameError):
        roi.new_deal(0, hands=hands[:3])
    with pytest.raises(GameError, match="twice"):
        roi.new_deal(0, hands=[hands[0], hands[0], hands[2], hands[3]])
    with pytest.raises(GameError):
        roi.new_deal(0, hands=[hands[0][:12], hands[1], hands[2], hands[3]])
    with pytest.raises(GameError):
        roi.new_deal(0, hands=[["XX", *hands[0][1:]], hands[1], hands[2], hands[3]])
    with pytest.raises(GameError):
        roi.new_deal(0, hands=hands, dealer=4)
    with pytest.raises(GameError):
        roi.new_deal(0)  # neither a seed nor hands
    with pytest.raises(GameError, match="not both"):
        roi.new_deal(0, seed=8, hands=hands)
    with pytest.raises(GameError, match="comes from the seed"):
        roi.new_deal(0, seed=8, dealer=2)
    assert roi.new_deal(5, hands=hands).dealer == 1  # no dealer given: deal index mod 4


def test_verify_explicit_deal_log(roi: RoiGame) -> None:
    state = scripted(roi, 0)
    entry = deal_log(state)
    log: dict[str, Any] = {
        "format": "tapis-replay",
        "version": 1,
        "game": "roi",
        "preset": "classic",
        "options": roi.options(),
        "seed": None,
        "deals": [entry],
    }
    assert games.verify(log).ok
    bad = copy.deepcopy(log)
    bad["deals"][0]["actions"][5] = [1, "2H"]
    verdict = games.verify(bad)
    assert not verdict.ok
    assert verdict.step == 5
    assert "you must follow clubs" in verdict.message


def test_verify_detects_tampering(roi: RoiGame) -> None:
    match = roi.new_match(31)
    rng = random.Random(31)
    while True:
        play_out(match.state, rng)
        if match.is_over():
            break
        match.next_deal()
    log = match.log()
    assert games.verify(log).ok
    assert log["scores"] == match.scores()
    assert log["places"] == match.places()

    def tampered(change: object) -> games.Verdict:
        other = copy.deepcopy(log)
        change(other)  # type: ignore[operator]
        return games.verify(other)

    def swap_two_actions(log: dict) -> None:  # type: ignore[type-arg]
        actions = log["deals"][3]["actions"]
        actions[0], actions[1] = actions[1], actions[0]

    def change_points(log: dict) -> None:  # type: ignore[type-arg]
        log["deals"][2]["points"][0] -= 2
        log["deals"][2]["points"][1] += 2

    def change_dealer(log: dict) -> None:  # type: ignore[type-arg]
        record = log["deals"][0]["deal"]
        record["dealer"] = (record["dealer"] + 1) % 4

    def change_score(log: dict) -> None:  # type: ignore[type-arg]
        log["scores"][0] += 1

    def drop_deal(log: dict) -> None:  # type: ignore[type-arg]
        log["deals"].pop()
        log["totals"] = None

    for change in (swap_two_actions, change_points, change_dealer, change_score, drop_deal):
        assert not tampered(change).ok, change.__name__


# -- random playouts ------------------------------------------------------------------------

PLAYOUT_MATCHES = 500  # x 10 deals = 5,000 deals


def test_random_playouts_5000_deals() -> None:
    game = games.load("roi")
    assert isinstance(game, RoiGame)
    deals = 0
    for seed in range(PLAYOUT_MATCHES):
        rng = random.Random(seed)
        match = game.new_match(seed)
        while True:
            state = match.state
            assert isinstance(state, RoiState)
            steps = 0
            while not state.is_terminal():
                player = state.current_player()
                assert 0 <= player < 4
                legal = state.legal_actions()
                assert legal
                state.apply_action(rng.choice(legal))
                steps += 1
            assert steps == 52
            assert state.current_player() == -1
            assert state.legal_actions() == []
            name = state.contract.name
            assert sum(state.points()) == CONTRACT_TOTALS[name], (seed, name)
            tricks = state.tricks()
            assert len(tricks) == 13
            seen = [parse_card(c) for t in tricks for c in t.cards]
            assert sorted(seen) == list(range(52))
            assert [sum(t.points for t in tricks if t.winner == s) for s in range(4)] == (
                state.points()
            )
            deals += 1
            if match.is_over():
                break
            match.next_deal()
        log = match.log()
        verdict = games.verify(json.loads(json.dumps(log)))
        assert verdict.ok, (seed, verdict)
        assert log["scores"] == [max(t, 0) for t in match.totals()]
    assert deals >= 5000


def test_random_playouts_follow_the_rules() -> None:
    # An independent check of legality and winners against a plain reading of the rules.
    game = games.load("roi")
    for seed in range(300):
        rng = random.Random(seed)
        state = game.new_deal(seed % 10, seed=seed)
        assert isinstance(state, RoiState)
        trump = state.contract.trump
        hands = [{parse_card(n) for n in h} for h in dealt_hands(state)]
        trick: list[int] = []
        leader = state.current_player()
        while not state.is_terminal():
            seat = state.current_player()
            hand = hands[seat]
            led = trick[0] // 13 if trick else None
            same = {c for c in hand if led is not None and c // 13 == led}
            expected = sorted(same or hand)
            assert [parse_card(n) for n in state.legal_actions()] == expected  # type: ignore[arg-type]
            card = rng.choice(expected)
            state.apply_action(card_name(card))
            hand.remove(card)
            trick.append(card)
            if len(trick) == 4:
                trumps = [c for c in trick if c // 13 == trump]
                best = max(trumps or [c for c in trick if c // 13 == trick[0] // 13])
                winner = (leader + trick.index(best)) % 4
                assert state.tricks()[-1].winner == winner
                leader, trick = winner, []


# -- no leak ---------------------------------------------------------------------------------


def test_observation_does_not_leak_hidden_cards(roi: RoiGame) -> None:
    game = roi
    checked = 0
    for seed in range(200):
        rng = random.Random(seed)
        a = game.new_deal(seed % 10, seed=seed)
        steps = rng.randrange(0, 48)
        for _ in range(steps):
            a.apply_action(rng.choice(a.legal_actions()))
        # Swap two unplayed cards of the same suit between two seats: what every other seat
        # may know is unchanged, and every play so far stays legal.
        hands = dealt_hands(a)
        played = {name for _, name in a.history()}
        x, y = rng.sample(range(4), 2)
        pairs = [
            (cx, cy)
            for cx in hands[x]
            for cy in hands[y]
            if cx not in played and cy not in played and cx[1] == cy[1]
        ]
        if not pairs:
            continue
        cx, cy = rng.choice(pairs)
        hands[x][hands[x].index(cx)] = cy
        hands[y][hands[y].index(cy)] = cx
        b = game.new_deal(a.deal_index, hands=hands, dealer=a.dealer)
        for _, action in a.history():
            b.apply_action(action)
        for seat in range(4):
            if seat in (x, y):
                assert a.observation(seat) != b.observation(seat)
            else:
                assert a.observation(seat) == b.observation(seat)
        checked += 1
    assert checked > 150


def test_observation_holds_only_own_hand(roi: RoiGame) -> None:
    state = roi.new_deal(0, seed=4)
    text = json.dumps(state.observation(2))
    own = set(state.observation(2)["hand"])  # type: ignore[arg-type]
    for seat in (0, 1, 3):
        for name in state.observation(seat)["hand"]:  # type: ignore[union-attr]
            assert name not in own
            assert f'"{name}"' not in text


def test_int_fast_path_matches_named_api() -> None:
    game = games.load("roi")
    for seed in range(50):
        named = game.new_deal(seed % 10, seed=seed)
        fast = game.new_deal(seed % 10, seed=seed)
        assert isinstance(named, RoiState)
        assert isinstance(fast, RoiState)
        rng = random.Random(seed)
        while not named.is_terminal():
            mask = fast.legal_mask()
            assert [card_name(c) for c in range(52) if mask >> c & 1] == named.legal_actions()
            name = rng.choice(named.legal_actions())
            named.apply_action(name)
            fast.apply_card(parse_card(name))  # type: ignore[arg-type]
        assert fast.is_terminal()
        assert fast.legal_mask() == 0
        assert fast.history() == named.history()
        assert fast.points() == named.points()


def test_int_fast_path_is_checked(roi: RoiGame) -> None:
    state = roi.new_deal(0, hands=BY_SUIT, dealer=3)
    assert state.legal_mask() == SUIT_MASKS[0]  # the shared follow rule: leading, any card
    for bad in (52, -1, True, "2C"):
        with pytest.raises(IllegalActionError):
            state.apply_card(bad)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="you do not hold 2D"):
        state.apply_card(parse_card("2D"))
    state.apply_card(parse_card("2C"))
    assert state.legal_mask() == SUIT_MASKS[1]  # void in clubs: any card
    assert state.history() == [(0, "2C")]


# -- docs/rules.md ---------------------------------------------------------------------------


def roi_doc_section() -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    match = re.search(r"^## Jeu du Roi \(roi\)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None
    return match.group(1)


def test_rules_doc_options_table_matches_the_engine() -> None:
    rows = {}
    for line in roi_doc_section().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0].strip("`")] = cells[1]
    infos = RoiGame.describe_options()
    assert list(rows) == [info.name for info in infos]
    for info in infos:
        if info.name == "contracts":
            continue  # the default is the order of the contracts table
        default = str(info.default).lower() if isinstance(info.default, bool) else info.default
        assert rows[info.name] == f"`{default}`", info.name


def test_rules_doc_contracts_and_vector_match_the_engine(roi: RoiGame) -> None:
    section = roi_doc_section()
    listed = re.findall(r"^\| (\d) \| `([\w-]+)` \|.*\| (-?\d+) \|$", section, re.M)
    assert [(int(d), name) for d, name, _ in listed] == list(enumerate(CONTRACT_NAMES))
    assert [int(total) for _, _, total in listed] == [c.total for c in roi.contracts]
    record = roi.new_deal(0, seed=42).deal_record()
    assert f"Seed 42, deal 0: dealer {record['dealer']};" in section
    flat = " ".join(section.split())
    for seat, hand in enumerate(dealt_hands(roi.new_deal(0, seed=42))):
        assert f"seat {seat} `{' '.join(hand)}`" in flat
