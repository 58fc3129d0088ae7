"""Dutch (``dutch``): one test per rule of RULES.md section 3, from explicit layouts.

Random playouts, replay round trips and the no-leak property are in test_dutch_random.py.

Layouts name cards by name (the lowest unused copy: deck 0 first) or by id (deck * 52 + card).
A layout's ``stock`` is top first, and its first card is turned up to start the discard pile.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import pytest

import games
from games.base import JSON
from games.cards import parse_card
from games.dealing import DealRng, shuffled
from games.dutch import DutchGame, DutchState, Phase, card_json, card_value
from games.errors import GameError, IllegalActionError, LogError, OptionError
from games.log import verify

# Small hands that play no part: all low, no J/Q/A, so nothing takes effect by accident.
FILLER = [
    ["2C", "3C", "4C", "5C"],
    ["2D", "3D", "4D", "5D"],
    ["2H", "3H", "4H", "5H"],
    ["2S", "3S", "4S", "5S"],
]


def dutch(**overrides: object) -> DutchGame:
    game = games.load("dutch", **overrides)
    assert isinstance(game, DutchGame)
    return game


def deal(
    hands: Sequence[Sequence[str | int]],
    stock: Sequence[str | int],
    *,
    deal_index: int = 0,
    reshuffle_seed: int = 0,
    **overrides: object,
) -> DutchState:
    overrides.setdefault("players", len(hands))
    game = dutch(**overrides)
    return game.new_deal(deal_index, hands=hands, stock=stock, reshuffle_seed=reshuffle_seed)


def cid(name: str, deck: int = 0) -> int:
    """The physical id of a card: deck * 52 + card."""
    return deck * 52 + parse_card(name)


def act(state: DutchState, seat: int, *actions: str) -> None:
    """Play actions that must all be ``seat``'s."""
    for action in actions:
        assert state.current_player() == seat, (action, state)
        assert action in state.legal_actions(), (action, state.legal_actions())
        state.apply_action(action)


def pass_claims(state: DutchState) -> list[int]:
    """Everybody passes the round(s) of claims in progress; the seats asked, in order."""
    asked = []
    while state.phase == Phase.CLAIM:
        asked.append(state.current_player())
        state.apply_action("pass")
    return asked


def simple_turn(state: DutchState, seat: int, *, call: bool = False) -> None:
    """``seat`` draws from the stock and discards the card; nobody claims; no call."""
    act(state, seat, "draw", "discard")
    pass_claims(state)
    if state.phase == Phase.CALL:
        act(state, seat, "dutch" if call else "pass")


def view(state: DutchState, observer: int, seat: int) -> list[JSON]:
    """What ``observer`` sees of ``seat``'s slots."""
    slots = cast(list[list[JSON]], state.observation(observer)["slots"])
    return slots[seat]


def snapshot(state: DutchState) -> object:
    n = state.game.players
    return (
        state.deal_record(),
        state.history(),
        [state.observation(s) for s in range(n)],
        state.all_cards(),
        [state.slots(s) for s in range(n)],
        state.current_player(),
        state.legal_actions(),
        state.points(),
    )


# -- options, deals and layouts -------------------------------------------------------------


def test_defaults_of_the_classic_preset() -> None:
    rules = dutch().rules
    assert (rules.players, rules.decks, rules.slots) == (4, 2, 4)
    assert (rules.turn_cap, rules.call_penalty, rules.target_score, rules.fixed_deals) == (
        60,
        10,
        100,
        0,
    )
    assert games.load("dutch", "classic").rules == rules


@pytest.mark.parametrize(
    ("overrides", "option"),
    [
        ({"players": 1}, "players"),
        ({"players": 11}, "players"),
        ({"decks": 3}, "decks"),
        ({"decks": 0}, "decks"),
        ({"slots": 0}, "slots"),
        ({"players": 10, "decks": 1, "slots": 6}, "slots"),  # 61 cards > 52
        ({"turn_cap": 0}, "turn_cap"),
        ({"call_penalty": -1}, "call_penalty"),
        ({"target_score": 0}, "target_score"),
        ({"fixed_deals": -1}, "fixed_deals"),
        ({"players": "4"}, "players"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_option_values_are_rejected(overrides: dict[str, object], option: str) -> None:
    with pytest.raises(OptionError) as info:
        games.load("dutch", **overrides)
    assert info.value.option == option
    assert option in str(info.value)


def test_a_deal_is_a_pure_function_of_seed_index_and_rules() -> None:
    game = dutch()
    record = game.new_deal(3, seed=42).deal_record()
    assert game.new_deal(3, seed=42).deal_record() == record
    assert game.new_deal(4, seed=42).deal_record() != record
    assert game.new_deal(3, seed=43).deal_record() != record
    assert dutch(decks=1).new_deal(3, seed=42).deal_record() != record
    # The documented deal: card i of shuffled(104) to seat i % 4, slot i // 4; the rest is the
    # stock top first, its first card turned up.
    order = shuffled(104, seed=42, deal_index=3)
    assert record["hands"] == [order[s:16:4] for s in range(4)]
    assert record["stock"] == order[16:]
    state = game.new_deal(3, seed=42)
    assert state.discard_pile() == [order[16]]
    assert state.stock_cards() == order[17:]
    assert state.current_player() == 3  # seat deal_index % players plays first


def test_deal_record_rebuilds_the_start_exactly() -> None:
    game = dutch(players=3)
    for state in (
        game.new_deal(1, seed=9),
        game.new_deal(2, hands=FILLER[:3], stock=["9S", "8S"], reshuffle_seed=4),
    ):
        rebuilt = game.deal_from_record(state.deal_index, state.deal_record())
        assert snapshot(rebuilt) == snapshot(state)
    explicit = game.new_deal(
        2, hands=FILLER[:3], stock=["9S", "8S"], reshuffle_seed=4
    ).deal_record()
    assert explicit["seed"] is None
    assert explicit["reshuffle_seed"] == 4
    with pytest.raises(LogError):
        game.deal_from_record(0, {"seed": None, "hands": [[1, 2]], "stock": [3]})


def test_explicit_layout_takes_names_ids_and_fills_the_stock() -> None:
    # Ids are taken first: the name 7C gets the copy that is left (deck 0's, id 5).
    state = deal([["7C", 57], ["KH"]], ["9S"], decks=2)
    assert state.slots(0) == [5, 57]
    assert deal([["7C", "7C"], ["KH"]], ["9S"], decks=2).slots(0) == [5, 57]
    with pytest.raises(GameError, match="more times than there are decks"):
        deal([["7C", "7C", "7C"], []], [], decks=2)
    with pytest.raises(GameError, match="dealt twice"):
        deal([[5], [5]], [])
    with pytest.raises(GameError, match="out of range"):
        deal([[104], []], [], decks=2)
    with pytest.raises(GameError, match="not a card"):
        deal([["ZZ"], []], [])
    with pytest.raises(GameError, match="3 hands"):
        dutch(players=3).new_deal(hands=[[], []])
    with pytest.raises(GameError, match="seed or explicit hands"):
        dutch().new_deal()
    with pytest.raises(GameError, match="not both"):
        dutch(players=2).new_deal(0, seed=1, hands=[[], []])
    assert state.discard_pile() == [cid("9S")]
    # Every card not named lies under the named stock, in ascending id order.
    assert len(state.all_cards()) == 104
    assert state.stock_cards()[:3] == [0, 1, 2]


# -- RULES.md section 3, rule by rule -------------------------------------------------------


def test_card_values_of_every_card_with_red_and_black_kings() -> None:
    expected = {"A": 1, "T": 10, "J": 11, "Q": 12}
    for card in range(104):
        name = card_json(card)["card"]
        assert isinstance(name, str)
        rank, suit = name[0], name[1]
        value = expected.get(rank) or (int(rank) if rank != "K" else 0 if suit in "HD" else 13)
        assert card_value(card) == value, name
    state = deal([["AS", "TD", "JC", "QH"], ["KH", "KD", "KS", "KC"]], ["2C"], decks=1)
    assert state.sums() == [1 + 10 + 11 + 12, 0 + 0 + 13 + 13]


def test_initial_cards_are_unseen_even_by_their_owner_and_the_turned_card_opens_nothing() -> None:
    state = deal(FILLER[:3], ["9S", "8S"])
    for seat in range(3):
        obs = state.observation(seat)
        assert obs["slots"] == [["?"] * 4] * 3
        assert obs["top"] == card_json(cid("9S"))
        assert obs["cards"] == [4, 4, 4]
    # The turned-up card has no effect and opens no claims: the first decision is a draw.
    assert state.phase == Phase.DRAW
    assert state.current_player() == 0
    assert state.legal_actions() == ["draw", "take"]
    assert state.history() == []


def test_a_taken_discard_must_replace_a_slot() -> None:
    state = deal(FILLER[:3], ["9S", "8S"])
    act(state, 0, "take")
    assert state.phase == Phase.TAKEN_CARD
    assert state.legal_actions() == ["replace:0", "replace:1", "replace:2", "replace:3"]
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="not legal now"):
        state.apply_action("discard")
    assert snapshot(state) == before
    act(state, 0, "replace:1")
    assert state.slots(0)[1] == cid("9S")
    assert state.discard_pile() == [cid("3C")]
    # Everybody saw the taken card go into slot 1.
    for seat in range(3):
        assert view(state, seat, 0)[1] == card_json(cid("9S"))


def test_a_stock_card_replaces_a_slot_or_is_discarded() -> None:
    state = deal(FILLER[:3], ["9S", "8S", "7S"])
    act(state, 0, "draw")
    assert state.phase == Phase.STOCK_CARD
    assert state.legal_actions() == ["discard", "replace:0", "replace:1", "replace:2", "replace:3"]
    assert state.observation(0)["holding"] == card_json(cid("8S"))
    assert state.observation(1)["holding"] is None
    assert state.observation(1)["holder"] == 0
    act(state, 0, "replace:2")
    assert state.slots(0)[2] == cid("8S")
    assert state.discard_pile()[-1] == cid("4C")  # the replaced card, face up
    assert view(state, 0, 0)[2] == card_json(cid("8S"))
    assert view(state, 1, 0)[2] == "?"
    pass_claims(state)
    act(state, 0, "pass")
    act(state, 1, "draw", "discard")
    assert state.discard_pile()[-1] == cid("7S")
    assert state.history()[-1] == (1, "discard")


def test_jack_swaps_two_face_down_cards_of_any_players() -> None:
    state = deal(FILLER[:3], ["9S", "JS"])
    act(state, 0, "draw", "discard")
    assert state.phase == Phase.JACK
    legal = state.legal_actions()
    assert legal[0] == "pass"
    assert legal[1:] == [f"swap:{s}:{k}" for s in range(3) for k in range(4)]
    act(state, 0, "swap:1:0")
    assert state.phase == Phase.JACK_SECOND
    assert "swap:1:0" not in state.legal_actions()
    assert "pass" not in state.legal_actions()
    with pytest.raises(IllegalActionError, match="must differ"):
        state.apply_action("swap:1:0")
    assert state.observation(2)["jack"] == {"seat": 1, "slot": 0}
    act(state, 0, "swap:2:3")
    assert state.slots(1)[0] == cid("5H")
    assert state.slots(2)[3] == cid("2D")
    # Two cards of the same player may be swapped too; a Jack may be declined.
    state = deal(FILLER[:3], ["9S", "JS", "JH"])
    act(state, 0, "draw", "discard", "swap:0:0", "swap:0:3")
    assert state.slots(0) == [cid("5C"), cid("3C"), cid("4C"), cid("2C")]
    pass_claims(state)
    act(state, 0, "pass")
    act(state, 1, "draw", "discard", "pass")
    assert state.phase == Phase.CLAIM
    assert [state.slots(s) for s in range(3)] == [
        [cid("5C"), cid("3C"), cid("4C"), cid("2C")],
        [cid(c) for c in FILLER[1]],
        [cid(c) for c in FILLER[2]],
    ]


def test_jack_swap_moves_what_each_player_knows() -> None:
    state = deal(FILLER[:3], ["9S", "8S", "JS"])
    act(state, 0, "draw", "replace:0")  # seat 0 now knows 8S in its slot 0
    pass_claims(state)
    act(state, 0, "pass")
    act(state, 1, "draw", "discard", "swap:0:0", "swap:2:1")
    assert view(state, 0, 2)[1] == card_json(cid("8S"))
    assert view(state, 0, 0)[0] == "?"
    # Seat 1 never saw 8S: it knows where the cards went, not what they are.
    assert view(state, 1, 2)[1] == "?"
    assert state.knows(0, 2, 1)
    assert not state.knows(1, 2, 1)


def test_queen_peek_reveals_the_card_to_the_peeker_only() -> None:
    state = deal(FILLER[:3], ["9S", "QS"])
    act(state, 0, "draw", "discard")
    assert state.phase == Phase.QUEEN
    assert state.legal_actions() == ["pass", "peek:0", "peek:1", "peek:2", "peek:3"]
    act(state, 0, "peek:2")
    assert view(state, 0, 0)[2] == card_json(cid("4C"))
    for seat in (1, 2):
        assert view(state, seat, 0)[2] == "?"
        assert "4C" not in str(state.observation(seat))
    assert state.public_history()[-1] == {"seat": 0, "action": "peek:2"}


def test_ace_gives_the_top_stock_card_unseen() -> None:
    state = deal(FILLER[:3], ["9S", "AS", "8D", "7D"])
    act(state, 0, "draw", "discard")
    assert state.phase == Phase.ACE
    assert state.legal_actions() == ["pass", "give:0", "give:1", "give:2"]
    act(state, 0, "give:2")
    assert state.slots(2) == [*(cid(c) for c in FILLER[2]), cid("8D")]
    for seat in range(3):
        obs = state.observation(seat)
        assert view(state, seat, 2)[4] == "?"
        assert obs["cards"] == [4, 4, 5]
        assert obs["stock"] == len(state.stock_cards())
        assert "8D" not in str(obs)
    assert state.public_history()[-1] == {"seat": 0, "action": "give:2", "slot": 4}
    assert state.stock_cards()[0] == cid("7D")
    # The next card received goes into the lowest empty slot (here none: a new slot).


def test_effects_resolve_in_the_order_the_cards_were_put_down() -> None:
    hands = [FILLER[0], ["QD", "3D", "4D", "5D"], FILLER[2]]
    state = deal(hands, ["9S", "QS"])
    asked = []
    act(state, 0, "draw", "discard")
    asked.append((state.phase, state.current_player()))  # seat 0's Queen first
    act(state, 0, "peek:0")
    asked.append((state.phase, state.current_player()))  # then claims, from seat 1
    act(state, 1, "claim:0")  # QD matches QS: seat 1's Queen takes effect at once
    asked.append((state.phase, state.current_player()))
    act(state, 1, "peek:1")
    asked.append((state.phase, state.current_player()))  # then new claims, from seat 2
    assert asked == [
        (Phase.QUEEN, 0),
        (Phase.CLAIM, 1),
        (Phase.QUEEN, 1),
        (Phase.CLAIM, 2),
    ]
    assert pass_claims(state) == [2, 0, 1]
    assert view(state, 1, 1) == [None, card_json(cid("3D")), "?", "?"]


def test_claims_are_asked_in_seat_order_from_the_left_of_the_putter() -> None:
    state = deal(FILLER, ["9S", "8S"], deal_index=2)
    act(state, 2, "draw", "discard")
    assert state.observation(0)["claim"] == {"rank": "8", "putter": 2, "barred": []}
    assert pass_claims(state) == [3, 0, 1, 2]  # the putter last
    # A player with no card is not asked.
    state = deal([[], *FILLER[1:]], ["9S", "8S"], deal_index=2)
    act(state, 2, "draw", "discard")
    assert pass_claims(state) == [3, 1, 2]


def test_right_claim_puts_the_card_down_with_its_effect_and_a_new_round_of_claims() -> None:
    hands = [FILLER[0], ["2D", "3D", "7D", "5D"], FILLER[2]]
    state = deal(hands, ["9S", "7S"])
    act(state, 0, "draw", "discard")
    act(state, 1, "claim:2")
    assert state.discard_pile()[-1] == cid("7D")
    assert state.slots(1) == [cid("2D"), cid("3D"), None, cid("5D")]
    assert state.observation(0)["cards"] == [4, 3, 4]
    assert state.public_history()[-1] == {
        "seat": 1,
        "action": "claim:2",
        "card": card_json(cid("7D")),
        "right": True,
    }
    # The new round starts left of the claimant, who is asked last.
    assert state.observation(2)["claim"] == {"rank": "7", "putter": 1, "barred": []}
    assert pass_claims(state) == [2, 0, 1]
    assert state.legal_actions() == ["pass", "dutch"]
    # A claimed Jack takes effect for its thrower, then claims start from its left.
    hands = [FILLER[0], ["JD", "3D", "4D", "5D"], FILLER[2]]
    state = deal(hands, ["9S", "JS"])
    act(state, 0, "draw", "discard", "pass")
    act(state, 1, "claim:0")
    assert (state.phase, state.current_player()) == (Phase.JACK, 1)


def test_wrong_claim_shows_the_card_returns_it_and_gives_a_penalty_card() -> None:
    state = deal(FILLER[:3], ["9S", "7S", "KS", "QH"])
    act(state, 0, "draw", "discard")
    act(state, 1, "claim:0")  # 2D is not a 7
    assert state.slots(1) == [*(cid(c) for c in FILLER[1]), cid("KS")]
    assert state.discard_pile()[-1] == cid("7S")
    for seat in range(3):
        assert view(state, seat, 1)[0] == card_json(cid("2D"))  # shown to all
        assert view(state, seat, 1)[4] == "?"  # the penalty card, unseen by all
    assert state.public_history()[-1] == {
        "seat": 1,
        "action": "claim:0",
        "card": card_json(cid("2D")),
        "right": False,
        "penalty_slot": 4,
    }
    assert state.stock_cards()[0] == cid("QH")
    assert state.current_player() == 2  # the round of claims goes on


def test_a_received_card_fills_the_lowest_empty_slot_unseen_by_all() -> None:
    hands = [FILLER[0], ["2D", "3D", "7D", "5D"], FILLER[2]]
    state = deal(hands, ["9S", "7S", "KS", "8S"])
    act(state, 0, "draw", "discard")
    act(state, 1, "claim:2")  # right: slot 2 is now empty
    act(state, 2, "pass")
    act(state, 0, "pass")
    act(state, 1, "claim:0")  # wrong: 2D is shown, the penalty card goes into slot 2
    assert state.slots(1) == [cid("2D"), cid("3D"), cid("KS"), cid("5D")]
    for seat in range(3):
        assert view(state, seat, 1) == [card_json(cid("2D")), "?", "?", "?"]
    assert state.public_history()[-1]["penalty_slot"] == 2


def test_a_player_who_missed_cannot_claim_again_until_the_next_card() -> None:
    hands = [FILLER[0], FILLER[1], ["2H", "3H", "7H", "5H"], FILLER[3]]
    state = deal(hands, ["9S", "7S"])
    act(state, 0, "draw", "discard")
    act(state, 1, "claim:1")  # wrong
    assert state.observation(0)["claim"] == {"rank": "7", "putter": 0, "barred": [1]}
    assert pass_claims(state) == [2, 3, 0]  # seat 1 is not asked again for this card
    assert state.phase == Phase.CALL
    # The next card lifts the bar.
    state = deal(hands, ["9S", "7S"])
    act(state, 0, "draw", "discard")
    act(state, 1, "claim:1")  # wrong
    act(state, 2, "claim:2")  # right: 7H is put down
    assert state.observation(0)["claim"] == {"rank": "7", "putter": 2, "barred": []}
    assert pass_claims(state) == [3, 0, 1, 2]


def test_calling_dutch_gives_every_other_player_one_last_turn() -> None:
    state = deal(FILLER[:3], ["9S", "8S", "7S", "6S", "TS"])
    simple_turn(state, 0, call=True)
    assert state.caller == 0
    assert state.observation(1)["caller"] == 0
    act(state, 1, "draw", "discard")
    pass_claims(state)
    # No call decision after a call: the turn ends, seat 2 plays its last turn.
    assert (state.phase, state.current_player()) == (Phase.DRAW, 2)
    act(state, 2, "draw", "discard")
    pass_claims(state)
    assert state.is_terminal()
    assert state.current_player() == -1
    assert state.legal_actions() == []
    assert state.turns == 3
    assert state.summary()["ended_by"] == "dutch"
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action("draw")


def test_callers_cards_are_immune_to_jacks_and_aces_but_it_may_still_claim() -> None:
    hands = [["JD", "3C", "4C", "5C"], FILLER[1], FILLER[2]]
    state = deal(hands, ["9S", "8S", "JS", "AS"])
    simple_turn(state, 0, call=True)
    act(state, 1, "draw", "discard")  # JS
    assert state.phase == Phase.JACK
    assert not [a for a in state.legal_actions() if str(a).startswith("swap:0:")]
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="called Dutch"):
        state.apply_action("swap:0:1")
    assert snapshot(state) == before
    act(state, 1, "pass")
    act(state, 2, "pass")
    act(state, 0, "claim:0")  # the caller throws its JD: right claim, its own Jack
    assert (state.phase, state.current_player()) == (Phase.JACK, 0)
    assert not [a for a in state.legal_actions() if str(a).startswith("swap:0:")]
    act(state, 0, "pass")
    pass_claims(state)
    act(state, 2, "draw", "discard")  # AS
    assert state.phase == Phase.ACE
    assert state.legal_actions() == ["pass", "give:1", "give:2"]
    with pytest.raises(IllegalActionError, match="called Dutch"):
        state.apply_action("give:0")


def test_a_player_without_cards_still_takes_its_turn_and_may_call() -> None:
    state = deal([[], FILLER[1], FILLER[2]], ["9S", "8S", "7S"])
    assert state.legal_actions() == ["draw"]
    act(state, 0, "draw")
    assert state.legal_actions() == ["discard"]
    with pytest.raises(IllegalActionError, match="no card in slot 0"):
        state.apply_action("replace:0")
    act(state, 0, "discard")
    assert pass_claims(state) == [1, 2]
    assert state.legal_actions() == ["pass", "dutch"]
    act(state, 0, "dutch")
    assert state.caller == 0
    simple_turn(state, 1)
    simple_turn(state, 2)
    assert state.points() == [0, 14, 14]  # 2+3+4+5 each; the caller is lowest


def test_a_turn_with_nothing_to_draw_is_only_the_call() -> None:
    # Seat 0 has no card, and the only card off the table is the discard pile's top.
    everything = [f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"]
    state = deal([[], everything[1:]], [everything[0]], decks=1)
    assert (state.phase, state.current_player()) == (Phase.CALL, 0)
    assert state.legal_actions() == ["pass", "dutch"]


def test_an_empty_stock_is_refilled_from_the_discard_pile_but_its_top_card() -> None:
    # One deck, 2 players holding 24 cards each: a stock of 3 under the turned-up 9S.
    table = [f"{r}{s}" for s in "CDHS" for r in "2345678TK"]  # 36 cards without effects
    hands = [
        [*table[:18], "9C", "9D", "9H", "JC", "JD", "JH"],
        [*table[18:], "QC", "QD", "QH", "AC", "AD", "AH"],
    ]
    state = deal(hands, ["9S", "JS", "QS", "AS"], reshuffle_seed=5, decks=1)
    assert len(state.stock_cards()) == 3
    # Three turns draw the three stock cards and decline their effects.
    act(state, 0, "draw", "discard", "pass")  # JS
    pass_claims(state)
    act(state, 0, "pass")
    act(state, 1, "draw", "discard", "pass")  # QS
    pass_claims(state)
    act(state, 1, "pass")
    act(state, 0, "draw", "discard", "pass")  # AS
    pass_claims(state)
    act(state, 0, "pass")
    assert state.stock_cards() == []
    pile = state.discard_pile()
    assert pile == [cid("9S"), cid("JS"), cid("QS"), cid("AS")]
    act(state, 1, "draw")
    expected = pile[:-1]
    DealRng(5, 0, "reshuffle-1").shuffle(expected)  # the new stock, top first
    assert state.held() == expected[0]
    assert state.stock_cards() == expected[1:]
    assert state.discard_pile() == [cid("AS")]
    assert state.public_history()[-2:] == [{"reshuffle": 3}, {"seat": 1, "action": "draw"}]
    assert sorted(state.all_cards()) == list(range(52))


def test_a_round_without_a_call_ends_after_the_turn_cap() -> None:
    state = deal(FILLER[:2], ["9S", "8S", "7S", "6S", "TS"], turn_cap=2)
    for seat in (0, 1, 0):
        simple_turn(state, seat)
    assert not state.is_terminal()
    simple_turn(state, 1)  # the 4th turn: 2 per player
    assert state.is_terminal()
    assert state.caller is None
    assert state.summary()["ended_by"] == "turn-cap"
    assert state.points() == state.sums()  # no call, no penalty
    # With the default cap a round is 60 turns per player.
    assert deal(FILLER[:2], ["9S"]).observation(0)["turn_limit"] == 120


def test_caller_takes_ten_unless_it_has_the_lowest_sum() -> None:
    high, low = ["KS", "KC", "QS", "JS"], ["KH", "KD", "AS", "2C"]
    for caller_hand, other, expected in (
        (high, low, [49 + 10, 3]),
        (low, high, [3, 49]),
    ):
        state = deal([caller_hand, other], ["9H", "3H", "4H"], decks=1)
        simple_turn(state, 0, call=True)
        simple_turn(state, 1)
        assert state.is_terminal()
        assert state.points() == expected
        assert state.summary()["call_penalty"] == (expected[0] != 3)


def test_a_tie_for_lowest_counts_as_lowest_for_the_caller() -> None:
    state = deal([["KH", "AS", "2C"], ["KD", "AD", "2D"], ["KS"]], ["9H", "3H", "4H", "5H"])
    simple_turn(state, 0, call=True)
    simple_turn(state, 1)
    simple_turn(state, 2)
    assert state.points() == [3, 3, 13]
    # Not lowest, even by one: +10.
    state = deal([["KH", "AS", "3C"], ["KD", "AD", "2D"], ["KS"]], ["9H", "3H", "4H", "5H"])
    simple_turn(state, 0, call=True)
    simple_turn(state, 1)
    simple_turn(state, 2)
    assert state.points() == [4 + 10, 3, 13]


def test_the_game_ends_after_the_round_in_which_a_total_reaches_the_target() -> None:
    game = dutch(players=3)
    assert not game.match_over([[50, 0, 3], [49, 10, 3]])
    assert game.match_over([[50, 0, 3], [50, 10, 3]])
    assert game.match_over([[120, 0, 3]])
    assert game.places([100, 20, 20]) == [3, 1, 1]  # lowest total wins, ties share
    assert dutch(target_score=30).match_over([[30, 0]])
    fixed = dutch(fixed_deals=3)
    assert not fixed.match_over([[500, 0, 0, 0]] * 2)
    assert fixed.match_over([[0, 0, 0, 0]] * 3)
    # A whole match: rounds until some total reaches 100.
    match = dutch(players=3).new_match(seed=11)
    turns = 0
    while True:
        state = match.state
        assert isinstance(state, DutchState)
        while not state.is_terminal():
            legal = state.legal_actions()
            if state.phase == Phase.CALL:
                state.apply_action("dutch" if turns % 3 == 0 else "pass")
                turns += 1
            else:
                state.apply_action(legal[-1])  # many wrong claims: totals rise fast
        if match.is_over():
            break
        totals = match.totals()
        assert max(totals) < 100
        match.next_deal()
    totals = match.totals()
    assert max(totals) >= 100
    assert match.places() == game.places(totals)
    assert verify(match.log()).ok


def test_two_decks_give_two_cards_of_each_name_told_apart_by_id() -> None:
    hands = [["7C", "7C", "2D", "3D"], ["7D", "4D", "5D", "6D"]]
    state = deal(hands, ["9S", "QH"], decks=2)
    assert state.slots(0)[:2] == [5, 57]  # deck 0's 7C is 5, deck 1's is 52 + 5
    act(state, 0, "draw", "discard", "peek:1")  # QH: seat 0 looks at its slot 1
    assert view(state, 0, 0)[:2] == ["?", {"id": 57, "card": "7C"}]
    pass_claims(state)
    act(state, 0, "pass")
    act(state, 1, "take", "replace:0")  # 7D goes on the pile
    act(state, 0, "claim:1")  # id 57 matches 7D
    assert state.discard_pile()[-2:] == [cid("7D"), 57]
    act(state, 1, "pass")
    act(state, 0, "claim:0")  # id 5, the other 7C: a right claim too
    assert state.discard_pile()[-3:] == [cid("7D"), 57, 5]
    assert state.observation(1)["top"] == {"id": 5, "card": "7C"}
    assert [e.get("card") for e in state.public_history()[-3:]] == [
        {"id": 57, "card": "7C"},  # seat 0's claim:1
        None,  # seat 1 passes
        {"id": 5, "card": "7C"},  # seat 0's claim:0
    ]
    assert sorted(state.all_cards()) == list(range(104))


def test_illegal_actions_are_explained_and_change_nothing() -> None:
    state = deal(FILLER[:3], ["9S", "8S"])
    before = snapshot(state)
    cases: list[tuple[JSON, str]] = [
        ("discard", "must draw from the stock or take the top discard"),
        ("replace:0", "not legal now"),
        ("fold", "unknown action 'fold'"),
        (3, "a dutch action is a string"),
        ({"seat": 0}, "a dutch action is a string"),
        (None, "a dutch action is a string"),
    ]
    for action, message in cases:
        with pytest.raises(IllegalActionError, match=message):
            state.apply_action(action)
        assert snapshot(state) == before
    act(state, 0, "draw")
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="no card in slot 7"):
        state.apply_action("replace:7")
    assert snapshot(state) == before


def test_observation_rejects_a_seat_that_does_not_exist() -> None:
    state = deal(FILLER[:3], ["9S"])
    for seat in (-1, 3, True):
        with pytest.raises(GameError):
            state.observation(seat)  # type: ignore[arg-type]


def test_clone_is_independent() -> None:
    state = dutch().new_deal(0, seed=3)
    other = state.clone()
    state.apply_action("draw")
    assert other.history() == []
    assert other.legal_actions() == ["draw", "take"]
    other.apply_action("take")
    assert state.phase == Phase.STOCK_CARD
    assert snapshot(state.clone()) == snapshot(state)


# -- docs/rules.md ---------------------------------------------------------------------------


def dutch_doc_section() -> str:
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    match = re.search(r"^## Dutch \(dutch\)\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None
    return match.group(1)


def test_rules_doc_options_table_matches_the_engine() -> None:
    rows = {}
    for line in dutch_doc_section().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 4:
            rows[cells[0].strip("`")] = cells[1]
    infos = DutchGame.describe_options()
    assert list(rows) == [info.name for info in infos]
    for info in infos:
        assert rows[info.name] == f"`{info.default}`", info.name


def test_rules_doc_phases_and_deal_vector_match_the_engine() -> None:
    section = dutch_doc_section()
    phases = re.findall(r"^\| `([\w-]+)` \| ", section, re.M)
    assert phases[-len(Phase) :] == [phase.label for phase in Phase]
    record = dutch().new_deal(0, seed=42).deal_record()
    hands, stock = record["hands"], record["stock"]
    assert isinstance(hands, list)
    assert isinstance(stock, list)
    for seat, hand in enumerate(hands):
        assert isinstance(hand, list)
        shown = ", ".join(f"{c} {card_json(c)['card']}" for c in hand if isinstance(c, int))
        assert f"seat {seat} `{shown}`" in " ".join(section.split()), seat
    turned, *rest = (f"{c} {card_json(c)['card']}" for c in stock[:4] if isinstance(c, int))
    assert f"the turned-up card `{turned}`" in " ".join(section.split())
    assert f"the stock from `{', '.join(rest)}`" in " ".join(section.split())
