"""One test per rule of RULES.md section 1 (Hearts family), each from explicit hands.

Deal index 3 is the no-pass deal of the whisthub cycle; the classic-fr tests that script the
play use ``pass_schedule="none"`` for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

import games
from games.base import State
from games.cards import DECK_SIZE, card_name, parse_card
from games.errors import GameError, IllegalActionError, OptionError
from games.hearts import HeartsGame, HeartsRules, HeartsState
from tests.games.engine_helpers import lowest, play_out, record, snapshot, view

Hearts = Callable[..., HeartsGame]


def deal(
    game: HeartsGame,
    hands: Sequence[str],
    deal_index: int = 3,
    *,
    stock: Sequence[str] | None = None,
) -> HeartsState:
    """A deal from hands written as space-separated card names."""
    return game.new_deal(deal_index, hands=[h.split() for h in hands], stock=stock)


def full_deck_minus(*hands: str) -> list[str]:
    used = {c for h in hands for c in h.split()}
    return [card_name(c) for c in range(DECK_SIZE) if card_name(c) not in used]


def tricks_done(count: int) -> Callable[[State], bool]:
    return lambda state: len(state.tricks()) == count


def by_id(names: Sequence[str]) -> list[str]:
    return sorted(names, key=parse_card)


# A hand that takes every trick: seat 0 wins the first trick with AC (seat 1 leads 2C), then
# leads KC QC JC AD KD QD JD AS KS QS AH KH, each the highest card left in its suit.
SHOOTER = [
    "AC KC QC JC AD KD QD JD AS KS QS AH KH",
    "2C 3C 4C 5C 6C 2D 3D 4D 5D 2S 3S 4S 2H",
    "7C 8C 9C TC 6D 7D 8D 9D 5S 6S 7S 3H 4H",
    "TD 8S 9S TS JS 5H 6H 7H 8H 9H TH JH QH",
]
SHOOTER_SCRIPT = {0: ["AC", "KC", "QC", "JC", "AD", "KD", "QD", "JD", "AS", "KS", "QS", "AH", "KH"]}

# Seat 3 is void in clubs; seat 2 holds the top clubs and wins the first club tricks.
VOID_IN_CLUBS = [
    "2C 3C 4C 5C 2D 3D 4D 5D 2H 3H 4H 2S 3S",
    "6C 7C 8C 9C 6D 7D 8D 9D 5H 6H 4S 5S 6S",
    "TC JC QC KC AC TD JD QD 7H 8H 7S 8S 9S",
    "KD AD 9H TH JH QH KH AH TS JS QS KS AS",
]

# Seat 1 wins the first trick with AC (everyone follows clubs) and is left with QS and
# eleven hearts: a leader holding nothing but hearts and QS, hearts not broken.
HEARTS_AND_QS_LEADER = [
    "2C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KH",
    "AC QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
    "3C KD AD AH 2S 3S 4S 5S 6S 7S 8S 9S TS",
    "4C 5C 6C 7C 8C 9C TC JC QC KC JS KS AS",
]


def after_first_trick(state: HeartsState) -> HeartsState:
    """VOID_IN_CLUBS: seat 0 leads 2C, seat 1 plays 6C, seat 2 wins with AC, seat 3 discards
    its lowest legal card (KD)."""
    play_out(state, {0: ["2C"], 1: ["6C"], 2: ["AC"]}, stop=tricks_done(1))
    assert state.tricks()[0].winner == 2
    assert state.current_player() == 2
    assert state.tricks()[0].cards[3] == "KD"
    return state


# --- whisthub: the deal and the pass ---------------------------------------------------------


def test_whisthub_deals_13_cards_to_each_of_4_players(hearts: Hearts) -> None:
    game = hearts()
    assert game.players == 4
    rec = record(game.new_deal(0, seed=2024))
    assert [len(h) for h in rec["hands"]] == [13, 13, 13, 13]
    assert by_id([c for h in rec["hands"] for c in h]) == [card_name(c) for c in range(52)]
    assert "reserve" not in rec
    assert "stock" not in rec


@pytest.mark.parametrize(
    ("deal_index", "direction", "offset"),
    [(0, "left", 1), (1, "right", -1), (2, "across", 2), (3, "none", 0), (4, "left", 1)],
)
def test_whisthub_pass_direction_by_deal_index(
    hearts: Hearts, deal_index: int, direction: str, offset: int
) -> None:
    state = hearts().new_deal(deal_index, seed=9)
    obs = view(state, 0)
    assert obs["pass_direction"] == direction
    if not offset:
        assert obs["phase"] == "play"
        assert obs["pass_to"] is None
        return
    assert obs["phase"] == "pass"
    assert obs["pass_to"] == offset % 4
    dealt = [set(h) for h in record(state)["hands"]]
    passes = []
    for seat in range(4):
        assert state.current_player() == seat  # passes are collected in seat order
        choice: list[Any] = by_id(list(dealt[seat]))[seat : seat + 3]
        passes.append(set(choice))
        state.apply_action(choice)
    for seat in range(4):
        giver = (seat - offset) % 4
        assert set(view(state, seat)["hand"]) == (dealt[seat] - passes[seat]) | passes[giver]
        assert set(view(state, seat)["received"]) == passes[giver]


def test_pass_is_simultaneous_nobody_sees_cards_before_all_have_passed(hearts: Hearts) -> None:
    state = hearts().new_deal(0, seed=11)  # pass left
    hands = record(state)["hands"]
    before = [view(state, seat) for seat in range(4)]
    state.apply_action(hands[0][:3])
    after = [view(state, seat) for seat in range(4)]
    # Seat 1, the receiver, learns only that seat 0 has passed.
    assert after[1]["received"] is None
    assert after[1]["hand"] == before[1]["hand"]
    assert after[1]["passes_made"] == [0]
    assert after[1]["hand_sizes"] == [10, 13, 13, 13]
    assert after[0]["passed"] == hands[0][:3]
    assert len(after[0]["hand"]) == 10
    for _ in (1, 2, 3):
        state.apply_action(state.legal_actions()[0])
    final = [view(state, seat) for seat in range(4)]
    assert final[1]["received"] == hands[0][:3]
    # Seat 2 never sees what seat 0 passed to seat 1.
    assert not set(hands[0][:3]) & set(final[2]["hand"])
    assert hands[0][:3] not in (final[2]["passed"], final[2]["received"])


def test_pass_action_is_exactly_three_held_cards(hearts: Hearts) -> None:
    state = hearts().new_deal(0, seed=5)
    hand = view(state, 0)["hand"]
    other = next(card_name(c) for c in range(52) if card_name(c) not in hand)
    legal: list[Any] = state.legal_actions()
    assert len(legal) == 286  # C(13, 3), each a sorted list, in card order
    assert legal == sorted(legal, key=lambda a: [parse_card(c) for c in a])
    assert all(isinstance(a, list) and a == by_id(a) for a in legal)
    before = snapshot(state)
    cases: list[tuple[object, str]] = [
        (hand[:2], "pass exactly 3 cards, not 2"),
        (hand[:4], "pass exactly 3 cards, not 4"),
        ("2C", "pass exactly 3 cards"),
        ([hand[0], hand[0], hand[1]], f"you may not pass {hand[0]} twice"),
        ([hand[0], hand[1], other], f"you do not hold {other}"),
        ([hand[0], hand[1], "ZZ"], "not a card"),
    ]
    for action, message in cases:
        with pytest.raises(IllegalActionError, match=message):
            state.apply_action(action)  # type: ignore[arg-type]
    assert snapshot(state) == before
    state.apply_action([hand[2], hand[0], hand[1]])  # any order; kept sorted
    assert state.history() == [(0, hand[:3])]


# --- whisthub: leads and play -----------------------------------------------------------------


def test_holder_of_2c_must_lead_it(hearts: Hearts) -> None:
    state = deal(hearts(), VOID_IN_CLUBS)
    assert state.current_player() == 0
    assert state.legal_actions() == ["2C"]
    with pytest.raises(IllegalActionError, match="the first lead must be 2C"):
        state.apply_action("3C")


def test_holder_of_2c_after_the_pass_leads_it(hearts: Hearts) -> None:
    state = deal(hearts(), VOID_IN_CLUBS, deal_index=0)  # pass left: seat 0 passes 2C on
    state.apply_action(["2C", "3C", "4C"])
    for _ in range(3):
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == 1
    assert state.legal_actions() == ["2C"]


def test_must_follow_suit(hearts: Hearts) -> None:
    state = deal(hearts(), VOID_IN_CLUBS)
    state.apply_action("2C")
    assert state.legal_actions() == ["6C", "7C", "8C", "9C"]
    with pytest.raises(IllegalActionError, match="you must follow clubs"):
        state.apply_action("6D")


def test_cannot_play_a_card_not_held(hearts: Hearts) -> None:
    state = deal(hearts(), VOID_IN_CLUBS)
    with pytest.raises(IllegalActionError, match="you do not hold AS"):
        state.apply_action("AS")


def test_first_trick_void_may_not_discard_hearts_or_qs(hearts: Hearts) -> None:
    state = deal(hearts(), VOID_IN_CLUBS)
    play_out(state, {0: ["2C"], 1: ["6C"], 2: ["AC"]}, stop=lambda s: s.current_player() == 3)
    assert state.legal_actions() == ["KD", "AD", "TS", "JS", "KS", "AS"]
    for card in ("9H", "QS"):
        with pytest.raises(IllegalActionError, match="no points on the first trick"):
            state.apply_action(card)


def test_first_trick_void_holding_only_hearts_and_qs_may_play_them(hearts: Hearts) -> None:
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS AH",
        "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
    ]
    state = deal(hearts(), hands)
    play_out(state, {0: ["2C"]}, stop=lambda s: s.current_player() == 3)
    assert set(state.legal_actions()) == set(hands[3].split())
    state.apply_action("QS")  # 13 points on the first trick, taken by seat 0 (2C)
    assert state.tricks()[0].points == 13
    assert state.points() == [13, 0, 0, 0]


def test_after_the_first_trick_a_void_player_may_discard_anything(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    state.apply_action("KC")
    assert state.current_player() == 3
    assert state.legal_actions() == view(state, 3)["hand"]


def test_hearts_may_not_be_led_until_broken(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    assert "7H" not in state.legal_actions()
    with pytest.raises(IllegalActionError, match="hearts are not broken: you may not lead 7H"):
        state.apply_action("7H")


def test_leader_holding_only_hearts_may_lead_one(hearts: Hearts) -> None:
    hands = [
        "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AH",
        "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
        "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
        "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    ]
    state = play_out(deal(hearts(), hands), stop=tricks_done(1))
    assert state.current_player() == 1
    assert view(state, 1)["hearts_broken"] is False
    assert state.legal_actions() == hands[1].split()[1:]


def test_leader_holding_hearts_and_qs_must_lead_qs_in_whisthub(hearts: Hearts) -> None:
    state = play_out(deal(hearts(), HEARTS_AND_QS_LEADER), stop=tricks_done(1))
    assert state.current_player() == 1
    assert state.legal_actions() == ["QS"]  # only hearts are restricted


def test_heart_discarded_in_a_trick_breaks_hearts_from_the_next_lead(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    state.apply_action("KC")
    state.apply_action("9H")  # seat 3, void in clubs, discards a heart
    assert view(state, 0)["hearts_broken"] is False  # not within this trick
    play_out(state, stop=tricks_done(2))
    assert state.tricks()[1].winner == 2
    assert state.tricks()[1].points == 1
    assert view(state, 0)["hearts_broken"] is True
    state.apply_action("7H")  # the next lead may be a heart
    assert view(state, 0)["trick"] == {"leader": 2, "cards": ["7H"]}


def test_qs_does_not_break_hearts_in_whisthub(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    state.apply_action("KC")
    state.apply_action("QS")  # seat 3 discards QS on a club trick
    play_out(state, stop=tricks_done(2))
    assert state.points()[2] == 13
    assert view(state, 0)["hearts_broken"] is False
    with pytest.raises(IllegalActionError, match="hearts are not broken: you may not lead 7H"):
        state.apply_action("7H")


def test_qs_breaks_hearts_when_hearts_broken_by_heart_or_qs(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(hearts_broken_by="heart-or-qs-played"), VOID_IN_CLUBS))
    state.apply_action("KC")
    state.apply_action("QS")
    play_out(state, stop=tricks_done(2))
    assert view(state, 0)["hearts_broken"] is True
    state.apply_action("7H")


def test_highest_card_of_the_suit_led_wins_and_leads_next(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    for card in ("TD", "AD", "2D", "6D"):  # seat 2 leads TD; seat 3 must follow with AD
        state.apply_action(card)
    trick = state.tricks()[1]
    assert (trick.leader, trick.cards, trick.winner) == (2, ("TD", "AD", "2D", "6D"), 3)
    assert state.current_player() == 3
    # No trumps: a spade discarded on a diamond trick does not win it.
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    state.apply_action("KC")
    state.apply_action("AS")
    play_out(state, stop=tricks_done(2))
    assert state.tricks()[1].winner == 2


def test_whisthub_scoring_heart_1_qs_13_26_per_deal(hearts: Hearts) -> None:
    state = play_out(deal(hearts(), VOID_IN_CLUBS))
    taken = [0, 0, 0, 0]
    for trick in state.tricks():
        points = sum(c.endswith("H") for c in trick.cards) + 13 * ("QS" in trick.cards)
        assert trick.points == points
        taken[trick.winner] += points
    assert sum(taken) == 26
    assert state.points() == taken
    assert state.moon_shooter() is None


def test_whisthub_moon_gives_26_to_every_other_player(hearts: Hearts) -> None:
    state = play_out(deal(hearts(), SHOOTER), SHOOTER_SCRIPT)
    assert all(t.winner == 0 for t in state.tricks())
    assert state.moon_shooter() == 0
    assert state.summary()["moon"] == 0
    assert state.points() == [0, 26, 26, 26]


def test_moon_self_minus_26_keeps_the_td_bonus_in_classic_fr_sourdine(hearts: Hearts) -> None:
    game = hearts("classic-fr-sourdine", pass_schedule="none")
    state = play_out(deal(game, SHOOTER), SHOOTER_SCRIPT)
    assert "TD" in state.tricks()[0].cards  # seat 3 discarded TD on the first trick
    assert state.points() == [-26 - 10, 0, 0, 0]


def test_no_moon_in_classic_fr(hearts: Hearts) -> None:
    state = play_out(deal(hearts("classic-fr", pass_schedule="none"), SHOOTER), SHOOTER_SCRIPT)
    assert state.points() == [26 - 10, 0, 0, 0]
    assert state.summary()["moon"] == 0  # the fact is reported; the rule is off


def test_moon_none_option_in_whisthub(hearts: Hearts) -> None:
    state = play_out(deal(hearts(moon="none"), SHOOTER), SHOOTER_SCRIPT)
    assert state.points() == [26, 0, 0, 0]


def test_moon_others_plus_26_keeps_the_td_bonus(hearts: Hearts) -> None:
    game = hearts("classic-fr", pass_schedule="none", moon="others-plus-26")
    state = play_out(deal(game, SHOOTER), SHOOTER_SCRIPT)
    assert state.points() == [-10, 26, 26, 26]


def test_td_bonus_is_minus_10_for_whoever_takes_it(hearts: Hearts) -> None:
    state = play_out(deal(hearts("classic-fr", pass_schedule="none"), VOID_IN_CLUBS))
    trick = next(t for t in state.tricks() if "TD" in t.cards)
    penalty = sum(c.endswith("H") for c in trick.cards) + 13 * ("QS" in trick.cards)
    assert trick.points == penalty - 10
    assert sum(state.points()) == 26 - 10
    assert sum(play_out(deal(hearts(), VOID_IN_CLUBS)).points()) == 26  # no bonus in whisthub
    assert sum(play_out(deal(hearts(td_bonus=True), VOID_IN_CLUBS)).points()) == 16


# --- game end and places ---------------------------------------------------------------------


def test_game_ends_after_the_deal_reaching_the_target(hearts: Hearts) -> None:
    game = hearts()
    assert not game.match_over([[26, 0, 0, 0]] * 3)  # 78
    assert game.match_over([[26, 0, 0, 0]] * 4)  # 104 passes 100
    assert game.match_over([[100, 0, 0, 0]])  # reaching it is enough
    assert hearts(target_score=50).match_over([[25, 0, 1, 0], [25, 0, 0, 1]])
    assert hearts(target_score=200).match_over([[26, 0, 0, 0]] * 8) is True
    assert hearts("classic-fr").match_over([[50, 0, 0, -10]])
    assert not hearts("classic-fr").match_over([[49, 0, 0, -10]])


def test_match_to_target_stops_right_after_the_deciding_deal(hearts: Hearts) -> None:
    match = hearts(target_score=50).new_match(seed=77)
    while True:
        play_out(match.state)
        if match.is_over():
            break
        assert max(match.totals()) < 50
        match.next_deal()
    assert max(match.totals()) >= 50
    before_last = [sum(p[s] for p in match.deal_points()[:-1]) for s in range(4)]
    assert max(before_last) < 50


def test_fixed_deals_plays_exactly_n_deals(hearts: Hearts) -> None:
    game = hearts(fixed_deals=6, target_score=1)
    assert not game.match_over([[26, 0, 0, 0]] * 5)
    assert game.match_over([[0, 0, 0, 0]] * 6)
    match = game.new_match(seed=3)
    while True:
        play_out(match.state)
        if match.is_over():
            break
        match.next_deal()
    assert len(match.deals()) == 6


def test_lowest_total_wins_and_equal_totals_share_the_place(hearts: Hearts) -> None:
    game = hearts()
    assert game.lower_is_better
    assert game.places([10, 3, 10, 0]) == [3, 2, 3, 1]
    assert game.places([5, 5, 5, 5]) == [1, 1, 1, 1]
    assert hearts("two-player").places([-3, -3]) == [1, 1]


# --- classic-fr: the reserve, first leads, the lead restriction ------------------------------


@pytest.mark.parametrize(
    ("players", "hand", "reserve"), [(3, 17, 1), (4, 13, 0), (5, 10, 2), (6, 8, 4)]
)
def test_classic_fr_deals_evenly_and_keeps_a_reserve(
    hearts: Hearts, players: int, hand: int, reserve: int
) -> None:
    state = hearts("classic-fr", players=players).new_deal(0, seed=1)
    rec = record(state)
    assert [len(h) for h in rec["hands"]] == [hand] * players
    assert len(rec.get("reserve", [])) == reserve
    if reserve:
        assert view(state, 0)["reserve"] is None
        assert view(state, 0)["reserve_size"] == reserve


THREE_PLAYERS = [
    "3C 4C 5C 6C 7C 2D 3D 4D 5D 6D 2H 3H 4H 5H 2S 3S 4S",
    "8C 9C TC JC 7D 8D 9D TD JD 6H 7H 8H 9H 5S 6S 7S 8S",
    "2C QC KC AC QD KD AD TH JH QH KH AH 9S TS JS KS AS",
]  # the reserve is QS


def test_reserve_goes_to_the_first_trick_winner_with_its_points(hearts: Hearts) -> None:
    state = deal(hearts("classic-fr", players=3), THREE_PLAYERS, deal_index=0)
    assert record(state)["reserve"] == ["QS"]
    for seat in range(3):  # pass left: each passes its three highest cards
        state.apply_action(view(state, seat)["hand"][-3:])
    assert all(view(state, s)["reserve"] is None for s in range(3))
    play_out(state, stop=tricks_done(1))
    first = state.tricks()[0]
    expected = [0, 0, 0]
    expected[first.winner] = first.points + 13
    assert state.points() == expected
    assert all(view(state, s)["reserve"] == ["QS"] for s in range(3))
    play_out(state)
    assert sum(state.points()) == 26 - 10
    assert state.summary()["reserve"] == ["QS"]
    assert state.summary()["reserve_winner"] == first.winner


def test_3c_leads_when_2c_is_in_the_reserve(hearts: Hearts) -> None:
    hands = [h.replace("2C", "QS") for h in THREE_PLAYERS]
    state = deal(hearts("classic-fr", players=3, pass_schedule="none"), hands)
    assert record(state)["reserve"] == ["2C"]
    assert state.current_player() == 0
    assert state.legal_actions() == ["3C"]
    with pytest.raises(IllegalActionError, match="the first lead must be 3C"):
        state.apply_action("4C")


def test_lowest_club_held_leads_when_the_reserve_holds_the_lowest_clubs(hearts: Hearts) -> None:
    rest = full_deck_minus("2C 3C 4C 5C")
    hands = [" ".join(rest[seat::6]) for seat in range(6)]
    state = deal(hearts("classic-fr", players=6, pass_schedule="none"), hands)
    assert record(state)["reserve"] == ["2C", "3C", "4C", "5C"]
    holder = next(s for s, h in enumerate(hands) if "6C" in h.split())
    assert state.current_player() == holder
    assert state.legal_actions() == ["6C"]


def test_classic_fr_passes_left_every_deal(hearts: Hearts) -> None:
    game = hearts("classic-fr")
    directions = [view(game.new_deal(d, seed=1), 0)["pass_direction"] for d in range(5)]
    assert directions == ["left"] * 5


def test_classic_fr_allows_points_on_the_first_trick(hearts: Hearts) -> None:
    state = deal(hearts("classic-fr", pass_schedule="none"), VOID_IN_CLUBS)
    play_out(state, {0: ["2C"], 1: ["6C"], 2: ["AC"]}, stop=lambda s: s.current_player() == 3)
    assert state.legal_actions() == VOID_IN_CLUBS[3].split()
    state.apply_action("QS")
    assert state.points() == [0, 0, 13, 0]


def test_classic_fr_no_heart_or_qs_lead_until_a_heart_or_spade_is_discarded(
    hearts: Hearts,
) -> None:
    state = after_first_trick(deal(hearts("classic-fr", pass_schedule="none"), VOID_IN_CLUBS))
    # KD was discarded on the first (club) trick: a diamond breaks nothing.
    with pytest.raises(IllegalActionError, match="hearts are not broken: you may not lead 7H"):
        state.apply_action("7H")
    for card in ("TD", "AD", "2D", "6D"):  # seat 3 must follow with AD and wins
        state.apply_action(card)
    assert state.current_player() == 3
    for card in ("QS", "9H"):
        with pytest.raises(
            IllegalActionError, match=f"hearts are not broken: you may not lead {card}"
        ):
            state.apply_action(card)
    assert state.legal_actions() == ["TS", "JS", "KS", "AS"]


def test_classic_fr_a_spade_discarded_on_another_suit_breaks_hearts(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts("classic-fr", pass_schedule="none"), VOID_IN_CLUBS))
    state.apply_action("KC")
    state.apply_action("TS")  # seat 3 discards a spade on clubs
    play_out(state, stop=tricks_done(2))
    assert view(state, 0)["hearts_broken"] is True
    state.apply_action("7H")


def test_classic_fr_leader_with_only_hearts_and_qs_may_lead_them(hearts: Hearts) -> None:
    game = hearts("classic-fr", pass_schedule="none")
    state = play_out(deal(game, HEARTS_AND_QS_LEADER), stop=tricks_done(1))
    assert state.current_player() == 1
    assert state.legal_actions() == by_id(HEARTS_AND_QS_LEADER[1].split()[1:])


def test_classic_fr_hearts_played_in_suit_do_not_break_hearts(hearts: Hearts) -> None:
    # Literal reading: only a heart or spade *discarded on another suit* breaks hearts.
    for broken_by, broken in (("heart-or-spade-discarded", False), ("heart-played", True)):
        game = hearts("classic-fr", pass_schedule="none", hearts_broken_by=broken_by)
        state = play_out(deal(game, HEARTS_AND_QS_LEADER), stop=tricks_done(1))
        play_out(state, {1: ["2H"], 2: ["AH"], 3: ["5C"], 0: ["KH"]}, stop=tricks_done(2))
        assert state.tricks()[1].cards == ("2H", "AH", "5C", "KH")
        assert view(state, 0)["hearts_broken"] is broken


# --- two-player -------------------------------------------------------------------------------


def test_two_player_deals_13_each_and_a_26_card_stock_no_pass(hearts: Hearts) -> None:
    game = hearts("two-player")
    assert game.players == 2
    state = game.new_deal(0, seed=8)
    rec = record(state)
    assert [len(h) for h in rec["hands"]] == [13, 13]
    assert len(rec["stock"]) == 26
    obs = view(state, 1)
    assert obs["phase"] == "play"
    assert obs["stock_size"] == 26
    assert obs["drawn"] == []


TWO_HANDS = [
    "3C 5C 2D 4D 6D 8D 2H 4H 6H 2S 4S 6S AS",
    "4C 6C 3D 5D 7D 9D 3H 5H 7H 3S 5S 7S KS",
]


def test_two_player_lowest_club_dealt_leads(hearts: Hearts) -> None:
    state = deal(hearts("two-player"), TWO_HANDS, deal_index=0)
    assert state.current_player() == 0
    assert state.legal_actions() == ["3C"]


def test_two_player_without_clubs_left_of_dealer_leads_any_card(hearts: Hearts) -> None:
    hands = ["2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD", "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"]
    for deal_index, leader in ((0, 1), (1, 0), (2, 1)):  # the dealer is deal_index % 2
        state = deal(hearts("two-player"), hands, deal_index=deal_index)
        assert state.current_player() == leader
        assert state.legal_actions() == hands[leader].split()


def test_two_player_draws_after_each_trick_winner_first_each_sees_only_its_card(
    hearts: Hearts,
) -> None:
    stock = full_deck_minus(*TWO_HANDS)[::-1]  # any order: top card first
    state = deal(hearts("two-player"), TWO_HANDS, deal_index=0, stock=stock)
    state.apply_action("3C")
    state.apply_action("4C")  # seat 1 wins
    assert state.tricks()[0].winner == 1
    assert state.current_player() == 1
    obs0, obs1 = view(state, 0), view(state, 1)
    assert obs1["drawn"] == [stock[0]]
    assert obs0["drawn"] == [stock[1]]
    assert stock[0] in obs1["hand"]
    assert stock[0] not in obs0["hand"]
    assert stock[1] in obs0["hand"]
    assert stock[1] not in obs1["hand"]
    assert obs0["hand_sizes"] == [13, 13]
    assert obs0["stock_size"] == 24
    assert record(state)["stock"] == stock


def test_two_player_plays_the_hands_out_after_the_stock(hearts: Hearts) -> None:
    state = play_out(hearts("two-player").new_deal(5, seed=5))
    obs = view(state, 0)
    assert len(state.tricks()) == 26
    assert obs["stock_size"] == 0
    assert len(obs["drawn"]) == 13
    assert sum(state.points()) == 26 - 10  # classic scoring, no moon rule


# --- options and the API ----------------------------------------------------------------------


def test_presets_are_reachable_by_name() -> None:
    assert set(HeartsGame.presets) == {
        "whisthub",
        "classic-fr",
        "classic-fr-sourdine",
        "two-player",
    }
    assert games.load("hearts").preset == "whisthub"
    for preset in HeartsGame.presets:
        assert games.load("hearts", preset).preset == preset


def test_every_option_is_documented() -> None:
    infos = HeartsGame.describe_options()
    assert [i.name for i in infos] == [
        "players", "leftover_cards", "pass_schedule", "pass_count", "first_trick_points",
        "lead_restriction", "hearts_broken_by", "moon", "td_bonus", "target_score",
        "fixed_deals",
    ]  # fmt: skip
    assert all(len(i.doc) > 30 for i in infos)


@pytest.mark.parametrize(
    ("overrides", "option", "message"),
    [
        ({"jokers": True}, "jokers", "unknown option 'jokers' for hearts; its options are"),
        ({"players": 7}, "players", "an integer from 2 to 6"),
        ({"moon": "maybe"}, "moon", "one of 'others-plus-26', 'self-minus-26', 'none'"),
        ({"td_bonus": "yes"}, "td_bonus", "true or false"),
        ({"target_score": 0}, "target_score", "an integer from 1 to 10000"),
        ({"pass_schedule": "up"}, "pass_schedule", "'left-right-across-none'"),
        ({"leftover_cards": "stock"}, "leftover_cards", "only with 2 players"),
        ({"players": 3}, "pass_schedule", "across only with 4 players"),
    ],
)
def test_bad_options_name_the_option_and_its_allowed_values(
    overrides: dict[str, object], option: str, message: str
) -> None:
    with pytest.raises(OptionError, match=message) as info:
        games.load("hearts", "whisthub", **overrides)
    assert info.value.option == option


def test_rules_dataclass_is_frozen_and_checked() -> None:
    rules = HeartsRules()
    with pytest.raises(AttributeError):
        rules.players = 5  # type: ignore[misc]
    with pytest.raises(OptionError):
        HeartsRules(players=3, leftover_cards="stock")
    assert [rules.pass_direction(d) for d in range(4)] == ["left", "right", "across", "none"]


def test_card_names_accept_10_on_input(hearts: Hearts) -> None:
    state = deal(hearts(), [h.replace("T", "10") for h in VOID_IN_CLUBS])
    assert record(state)["hands"] == [h.split() for h in VOID_IN_CLUBS]
    play_out(state, {0: ["2c"], 1: ["6C"], 2: ["10c"]}, stop=lambda s: len(s.history()) == 3)
    assert [a for _, a in state.history()] == ["2C", "6C", "TC"]


def test_illegal_actions_leave_the_state_unchanged(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    before = snapshot(state)
    actions: list[Any] = ["7H", "AS", "XX", "", 5, None, True, ["KC"], {"card": "KC"}]
    for action in actions:
        with pytest.raises(IllegalActionError):
            state.apply_action(action)
    assert snapshot(state) == before


def test_end_of_deal(hearts: Hearts) -> None:
    state = play_out(deal(hearts(), VOID_IN_CLUBS))
    assert state.is_terminal()
    assert state.current_player() == -1
    assert state.legal_actions() == []
    with pytest.raises(IllegalActionError, match="the deal is over"):
        state.apply_action("2C")
    obs = view(state, 1)
    assert obs["phase"] == "over"
    assert obs["points"] == state.points()
    assert obs["to_act"] == -1


def test_deal_record_rebuilds_the_deal(hearts: Hearts) -> None:
    for preset in HeartsGame.presets:
        game = hearts(preset)
        state = game.new_deal(2, seed=31)
        rec = state.deal_record()
        assert rec["seed"] == 31
        assert snapshot(game.deal_from_record(2, rec)) == snapshot(state)
        play_out(state)
        replay = game.deal_from_record(2, rec)
        for _, action in state.history():
            replay.apply_action(action)
        assert replay.points() == state.points()
        assert replay.tricks() == state.tricks()


def test_new_deal_needs_a_seed_or_valid_hands(hearts: Hearts) -> None:
    game = hearts()
    hands = [h.split() for h in VOID_IN_CLUBS]
    with pytest.raises(GameError, match="a seed or explicit hands"):
        game.new_deal(0)
    with pytest.raises(GameError, match="not both"):
        game.new_deal(0, seed=1, hands=hands)
    with pytest.raises(GameError, match="needs 4 hands"):
        game.new_deal(0, hands=hands[:3])
    with pytest.raises(GameError, match="must hold 13 cards"):
        game.new_deal(0, hands=[h[:12] for h in hands])
    with pytest.raises(GameError, match="2C is dealt twice"):
        game.new_deal(0, hands=[hands[0], ["2C", *hands[1][1:]], hands[2], hands[3]])
    with pytest.raises(GameError, match="not a card"):
        game.new_deal(0, hands=[["ZZ", *h[1:]] for h in hands])
    with pytest.raises(GameError, match="non-negative"):
        game.new_deal(-1, seed=1)
    with pytest.raises(GameError, match="reserve, not a stock"):
        game.new_deal(0, hands=hands, stock=[])


def test_int_fast_path_agrees_with_the_names(hearts: Hearts) -> None:
    state = after_first_trick(deal(hearts(), VOID_IN_CLUBS))
    mask = state.legal_mask()
    assert [card_name(c) for c in range(52) if mask >> c & 1] == state.legal_actions()
    with pytest.raises(IllegalActionError, match="hearts are not broken"):
        state.apply_card(parse_card("7H"))
    state.apply_card(parse_card("KC"))
    assert state.history()[-1] == (2, "KC")
    assert lowest(state) == state.legal_actions()[0]
