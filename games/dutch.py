"""Dutch (``dutch``): 2 to 10 players, face-down slots, matching throws, lowest sum wins.

RULES.md section 3 is the spec; docs/rules.md documents every option, action and observation.

Cards. One or two 52-card decks. A physical card has a stable id ``deck * 52 + card`` (0..103)
where ``card`` is the id of :mod:`games.cards`, so the two copies of a name (``"7C"`` is 5 and
57) stay distinct; wherever a card matters it is shown as ``{"id": 57, "card": "7C"}``.
Values: A 1, 2-10 face value, J 11, Q 12, red kings (KH, KD) 0, black kings (KS, KC) 13.

Slots. Each player has a row of slots, numbered from 0, holding face-down cards; a slot emptied
by a matching throw stays empty (its number is kept), and a card a player receives (penalty
card, Ace gift) goes into its lowest empty slot, or a new slot at the end of the row.

Actions are short strings (see :class:`Phase` for who is asked what, in which order):

``draw`` / ``take``
    start of a turn: the top card of the stock (seen by the drawer only) or the top discard;
``discard`` / ``replace:K``
    a stock card is discarded or replaces own slot K; a taken discard must replace a slot;
``swap:S:K``
    a Jack's swap, in two decisions: first card, then second card (seat S, slot K);
``peek:K``
    a Queen's look at own slot K;
``give:S``
    an Ace's gift of the top stock card, unseen, to seat S;
``claim:K``
    a matching throw of own slot K;
``dutch``
    call Dutch at the end of one's turn;
``pass``
    decline (an effect, a claim, or calling).

>>> import games
>>> game = games.load("dutch", players=3)
>>> state = game.new_deal(deal_index=0, seed=7)
>>> state.current_player(), state.legal_actions()
(0, ['draw', 'take'])
>>> state.apply_action("draw")
>>> state.legal_actions()
['discard', 'replace:0', 'replace:1', 'replace:2', 'replace:3']
>>> while not state.is_terminal():
...     legal = state.legal_actions()
...     state.apply_action("dutch" if "dutch" in legal else legal[0])
>>> len(state.points())
3
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, TypeAlias

from games.base import JSON, Action, Game, State
from games.cards import DECK_SIZE, RANK_A, RANK_J, RANK_K, RANK_Q, RANKS, card_name, parse_card
from games.dealing import DealRng, shuffled
from games.errors import GameError, IllegalActionError, LogError, OptionError
from games.options import MAX_DEALS, MAX_POINTS, MAX_TARGET_SCORE, option
from games.registry import register

CardId: TypeAlias = int  # a physical card: deck * 52 + card (0..103)
Slot: TypeAlias = int

MAX_PLAYERS = 10
MAX_DECKS = 2
MAX_CARDS = DECK_SIZE * MAX_DECKS
EMPTY: CardId = -1  # an empty slot
#: The most turns per player a round may be capped at: with 10 players a round then stays
#: within a few tens of thousands of decisions (each is a recorded step of the deal).
MAX_TURN_CAP = 200
#: Turns per player before some player calls Dutch, for :attr:`DutchGame.decisions_per_deal`:
#: a little above what bots that call on a low sum take.
ESTIMATED_TURNS = 8


@dataclasses.dataclass(frozen=True, slots=True)
class DutchRules:
    """The options of Dutch (every one documented; see docs/rules.md)."""

    players: int = option(4, minimum=2, maximum=MAX_PLAYERS, doc="Number of players (2 to 10).")
    decks: int = option(
        2,
        choices=(1, 2),
        doc="Number of 52-card decks shuffled together (two decks: two cards can share a name, "
        "told apart by their id deck * 52 + card).",
    )
    slots: int = option(
        4,
        minimum=1,
        maximum=10,
        doc="Face-down cards dealt to each player. players * slots + 1 must not exceed the "
        "number of cards (the +1 starts the discard pile).",
    )
    turn_cap: int = option(
        60,
        minimum=1,
        maximum=MAX_TURN_CAP,
        doc="A round in which nobody has called Dutch after this many turns per player "
        "(players * turn_cap turns in all) ends as if called by nobody (no +call_penalty).",
    )
    call_penalty: int = option(
        10,
        minimum=0,
        maximum=MAX_POINTS,
        doc="Added to the caller's round score unless it has the lowest sum (a tie for the "
        "lowest counts as lowest for the caller).",
    )
    target_score: int = option(
        100,
        minimum=1,
        maximum=MAX_TARGET_SCORE,
        doc="When fixed_deals is 0, the game ends after the round in which some total reaches "
        "or passes this score; lowest total wins.",
    )
    fixed_deals: int = option(
        0,
        minimum=0,
        maximum=MAX_DEALS,
        doc="0: play rounds until target_score. N > 0: a match is exactly N rounds "
        "(tournaments); lowest total wins.",
    )

    def __post_init__(self) -> None:
        if self.players * self.slots + 1 > DECK_SIZE * self.decks:
            raise OptionError(
                f"option 'slots' of dutch must leave a card to start the discard pile: "
                f"{self.players} players * {self.slots} slots + 1 > {DECK_SIZE * self.decks} "
                f"cards",
                option="slots",
            )


class Phase(enum.IntEnum):
    """The decision asked, and of whom. Legal actions are listed in this documented order."""

    DRAW = 0  # the turn's player: "draw" (if the stock or a reshuffle has a card), "take"
    STOCK_CARD = 1  # the drawer of a stock card: "discard", then "replace:K" by slot
    TAKEN_CARD = 2  # the taker of the top discard: "replace:K" by slot
    JACK = 3  # who put a J down: "pass", then "swap:S:K" by seat then slot (first card)
    JACK_SECOND = 4  # the same player: "swap:S:K" by seat then slot (second card)
    QUEEN = 5  # who put a Q down: "pass", then "peek:K" by slot
    ACE = 6  # who put an A down: "pass", then "give:S" by seat
    CLAIM = 7  # each player in turn from the putter's left: "pass", then "claim:K" by slot
    CALL = 8  # the turn's player at the end of its turn: "pass", "dutch"
    OVER = 9  # nobody

    @property
    def label(self) -> str:
        """The phase's name in observations (``"stock-card"``)."""
        return self.name.lower().replace("_", "-")


# Phases as plain ints for the fast path.
_DRAW, _STOCK_CARD, _TAKEN_CARD, _JACK, _JACK_SECOND = 0, 1, 2, 3, 4
_QUEEN, _ACE, _CLAIM, _CALL, _OVER = 5, 6, 7, 8, 9

_ASKED = {
    _DRAW: "must draw from the stock or take the top discard",
    _STOCK_CARD: "holds a stock card: discard it or replace one of its slots",
    _TAKEN_CARD: "holds the taken discard: it must replace one of its slots",
    _JACK: "put down a Jack: choose the first card of the swap, or pass",
    _JACK_SECOND: "is swapping with a Jack: choose the second card",
    _QUEEN: "put down a Queen: look at one of its slots, or pass",
    _ACE: "put down an Ace: give the top stock card to a player, or pass",
    _CLAIM: "may throw a card of the same rank (claim:K), or pass",
    _CALL: "ends its turn: call Dutch, or pass",
}

# Tables of physical cards.
_NAME: tuple[str, ...] = tuple(card_name(i % DECK_SIZE) for i in range(MAX_CARDS))
_RANK: tuple[int, ...] = tuple(i % DECK_SIZE % 13 for i in range(MAX_CARDS))
_RANK_VALUES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1)  # by rank 2..A


def card_value(card: CardId) -> int:
    """The points of a physical card: A 1, 2-10 face value, J 11, Q 12, red K 0, black K 13.

    >>> [card_value(parse_card(n)) for n in ("AS", "TD", "JC", "QH", "KH", "KD", "KS", "KC")]
    [1, 10, 11, 12, 0, 0, 13, 13]
    >>> card_value(52 + parse_card("KD"))
    0
    """
    plain = card % DECK_SIZE
    rank = plain % 13
    if rank == RANK_K:
        return 13 if plain // 13 in (0, 3) else 0  # clubs and spades are black
    return _RANK_VALUES[rank]


_VALUE: tuple[int, ...] = tuple(card_value(i) for i in range(MAX_CARDS))


def card_json(card: CardId) -> dict[str, JSON]:
    """A physical card as shown to bots.

    >>> card_json(57)
    {'id': 57, 'card': '7C'}
    """
    return {"id": card, "card": _NAME[card]}


# Action strings and their parse: kind, first and second number.
_K_DRAW, _K_TAKE, _K_DISCARD, _K_REPLACE, _K_SWAP = 0, 1, 2, 3, 4
_K_PEEK, _K_GIVE, _K_CLAIM, _K_PASS, _K_DUTCH = 5, 6, 7, 8, 9
_ParsedAction: TypeAlias = tuple[int, int, int]

_REPLACE: tuple[str, ...] = tuple(f"replace:{k}" for k in range(MAX_CARDS))
_CLAIMS: tuple[str, ...] = tuple(f"claim:{k}" for k in range(MAX_CARDS))
_PEEKS: tuple[str, ...] = tuple(f"peek:{k}" for k in range(MAX_CARDS))
_GIVES: tuple[str, ...] = tuple(f"give:{s}" for s in range(MAX_PLAYERS))
_SWAPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(f"swap:{s}:{k}" for k in range(MAX_CARDS)) for s in range(MAX_PLAYERS)
)
# "discard" or "pass" followed by the slot actions: a row with no empty slot is a slice.
_DISCARD_REPLACE: tuple[str, ...] = ("discard", *_REPLACE)
_PASS_CLAIM: tuple[str, ...] = ("pass", *_CLAIMS)
_PASS_PEEK: tuple[str, ...] = ("pass", *_PEEKS)
_PASS_GIVE: tuple[str, ...] = ("pass", *_GIVES)


def _action_table() -> dict[str, _ParsedAction]:
    table: dict[str, _ParsedAction] = {
        "draw": (_K_DRAW, 0, 0),
        "take": (_K_TAKE, 0, 0),
        "discard": (_K_DISCARD, 0, 0),
        "pass": (_K_PASS, 0, 0),
        "dutch": (_K_DUTCH, 0, 0),
    }
    for k in range(MAX_CARDS):
        table[_REPLACE[k]] = (_K_REPLACE, k, 0)
        table[_CLAIMS[k]] = (_K_CLAIM, k, 0)
        table[_PEEKS[k]] = (_K_PEEK, k, 0)
        for s in range(MAX_PLAYERS):
            table[_SWAPS[s][k]] = (_K_SWAP, s, k)
    for s in range(MAX_PLAYERS):
        table[_GIVES[s]] = (_K_GIVE, s, 0)
    return table


_ACTIONS: dict[str, _ParsedAction] = _action_table()

# One entry of the round's log: (seat, action, card, slot, flag). For an action: the card it
# made public (taken, put on the pile, or shown by a claim; -1 if none), the slot a received
# card went to (-1 if none) and, for a claim, 1 if right. seat -1 marks a reshuffle of ``card``
# cards (action "").
_Entry: TypeAlias = tuple[int, str, int, int, int]


class DutchState(State):
    """One round of Dutch."""

    __slots__ = (
        "_actor",
        "_barred",
        "_caller",
        "_claim_i",
        "_count",
        "_held",
        "_jack",
        "_known",
        "_last_left",
        "_limit",
        "_log",
        "_n",
        "_phase",
        "_pile",
        "_points",
        "_public",
        "_putter",
        "_reshuffle_seed",
        "_reshuffles",
        "_seed",
        "_slots",
        "_start_hands",
        "_start_stock",
        "_stock",
        "_turn",
        "_turns",
    )

    def __init__(
        self,
        game: DutchGame,
        deal_index: int,
        *,
        seed: int | None,
        reshuffle_seed: int,
        hands: Sequence[Sequence[CardId]],
        stock: Sequence[CardId],
    ) -> None:
        """``hands``: the cards of each seat's slots; ``stock``: the other cards, top first,
        as they lie before the top one is turned up to start the discard pile."""
        self.game: DutchGame = game
        self.deal_index = deal_index
        n = game.rules.players
        self._n = n
        self._seed = seed
        self._reshuffle_seed = reshuffle_seed
        self._start_hands: tuple[tuple[CardId, ...], ...] = tuple(tuple(h) for h in hands)
        self._start_stock: tuple[CardId, ...] = tuple(stock)
        self._slots: list[list[CardId]] = [list(h) for h in hands]
        # _known[seat][slot]: the bitmask of the seats that know the card in that slot.
        self._known: list[list[int]] = [[0] * len(h) for h in hands]
        self._count: list[int] = [len(h) for h in hands]
        self._pile: list[CardId] = [stock[0]]  # bottom first
        self._stock: list[CardId] = list(reversed(stock[1:]))  # top last
        self._reshuffles = 0
        self._turn = deal_index % n
        self._actor = self._turn
        self._phase = _DRAW
        self._turns = 0
        self._limit = game.rules.turn_cap * n
        self._caller = -1
        self._last_left = 0
        self._held: CardId = -1
        self._putter = -1
        self._claim_i = 0
        self._barred = 0  # seats that claimed wrongly since the last card was put down
        self._jack: tuple[int, Slot] = (-1, -1)
        self._log: list[_Entry] = []
        self._public: list[dict[str, JSON]] = []  # rendered log entries (a cache)
        self._points: list[int] | None = None
        self._begin_turn()

    # -- reading the table --------------------------------------------------------------------

    @property
    def seed(self) -> int | None:
        return self._seed

    @property
    def phase(self) -> Phase:
        return Phase(self._phase)

    @property
    def caller(self) -> int | None:
        """The seat that called Dutch, if any."""
        return None if self._caller < 0 else self._caller

    @property
    def turn(self) -> int:
        """The seat whose turn it is (claims and effects are asked of others meanwhile)."""
        return self._turn

    @property
    def turns(self) -> int:
        """The number of finished turns."""
        return self._turns

    def slots(self, seat: int) -> list[CardId | None]:
        """The cards in a seat's slots (None for an empty slot): the referee's view."""
        return [None if c < 0 else c for c in self._slots[seat]]

    def stock_cards(self) -> list[CardId]:
        """The stock, top first."""
        return self._stock[::-1]

    def discard_pile(self) -> list[CardId]:
        """The discard pile, bottom first (its last card is the top)."""
        return list(self._pile)

    def held(self) -> CardId | None:
        """The card drawn or taken and not yet placed, if any."""
        return None if self._held < 0 else self._held

    def all_cards(self) -> list[CardId]:
        """Every physical card, wherever it is (slots, held card, stock, discard pile)."""
        cards = [c for row in self._slots for c in row if c >= 0]
        if self._held >= 0:
            cards.append(self._held)
        return cards + self._stock + self._pile

    def knows(self, observer: int, seat: int, slot: Slot) -> bool:
        """Whether ``observer`` knows the card in ``seat``'s ``slot``."""
        return bool(self._known[seat][slot] >> observer & 1)

    def sums(self) -> list[int]:
        """The sum of the card values in each seat's slots now."""
        return [sum(_VALUE[c] for c in row if c >= 0) for row in self._slots]

    # -- the flow of a round ------------------------------------------------------------------

    def _begin_turn(self) -> None:
        seat = self._turn
        if self._count[seat] or self._stock or len(self._pile) > 1:
            self._phase = _DRAW
            self._actor = seat
        elif self._caller < 0:
            # No card to draw and none to replace: the turn is only the call decision.
            self._phase = _CALL
            self._actor = seat
        else:
            self._end_turn()

    def _end_turn(self) -> None:
        self._turns += 1
        if self._caller >= 0:
            self._last_left -= 1
            if self._last_left == 0:
                self._finish()
                return
        elif self._turns >= self._limit:
            self._finish()
            return
        self._turn = (self._turn + 1) % self._n
        self._begin_turn()

    def _finish(self) -> None:
        self._phase = _OVER
        self._actor = -1
        sums = self.sums()
        caller = self._caller
        if caller >= 0 and sums[caller] > min(sums):
            sums[caller] += self.game.rules.call_penalty
        self._points = sums

    def _stock_available(self) -> bool:
        return bool(self._stock) or len(self._pile) > 1

    def _pop_stock(self) -> CardId:
        """The top stock card; an empty stock is first refilled from the discard pile."""
        stock = self._stock
        if not stock:
            pile = self._pile
            cards = pile[:-1]
            del pile[:-1]
            self._reshuffles += 1
            rng = DealRng(self._reshuffle_seed, self.deal_index, f"reshuffle-{self._reshuffles}")
            rng.shuffle(cards)
            cards.reverse()  # the shuffled list is the new stock top first; ours is top last
            stock.extend(cards)
            self._log.append((-1, "", len(cards), -1, 0))
        return stock.pop()

    def _free_slot(self, seat: int) -> Slot:
        row = self._slots[seat]
        for k, card in enumerate(row):
            if card < 0:
                return k
        return len(row)

    def _place(self, seat: int, slot: Slot, card: CardId) -> None:
        """Put a card nobody has seen into ``seat``'s ``slot`` (from :meth:`_free_slot`)."""
        row = self._slots[seat]
        if slot == len(row):
            row.append(card)
            self._known[seat].append(0)
        else:
            row[slot] = card
            self._known[seat][slot] = 0
        self._count[seat] += 1

    def _put_down(self, seat: int, card: CardId) -> None:
        """``seat`` puts ``card`` on the discard pile: its effect, then a round of claims."""
        self._pile.append(card)
        self._barred = 0
        self._putter = seat
        rank = _RANK[card]
        if rank == RANK_J:
            caller = self._caller
            swappable = sum(self._count) - (self._count[caller] if caller >= 0 else 0)
            if swappable >= 2:
                self._phase = _JACK
                self._actor = seat
                return
        elif rank == RANK_Q:
            if self._count[seat]:
                self._phase = _QUEEN
                self._actor = seat
                return
        elif rank == RANK_A and (self._stock or len(self._pile) > 1):
            self._phase = _ACE
            self._actor = seat
            return
        self._open_claims()

    def _open_claims(self) -> None:
        """Start a round of claims for the card just put down (by ``_putter``)."""
        self._claim_i = 0
        self._next_claim()

    def _next_claim(self) -> None:
        """Ask the next player who may claim, or go back to the turn."""
        n = self._n
        putter = self._putter
        count = self._count
        barred = self._barred
        i = self._claim_i
        while i < n:
            i += 1
            seat = (putter + i) % n
            if count[seat] and not barred >> seat & 1:
                self._claim_i = i
                self._phase = _CLAIM
                self._actor = seat
                return
        self._claim_i = n
        if self._caller < 0:
            self._phase = _CALL
            self._actor = self._turn
        else:
            self._end_turn()

    # -- the API ------------------------------------------------------------------------------

    def current_player(self) -> int:
        return self._actor

    def is_terminal(self) -> bool:
        return self._phase == _OVER

    def points(self) -> list[int]:
        """The round's scores once it is over (the card sums, +call_penalty for a caller
        without the lowest sum); zeros before: nothing is scored until the end."""
        if self._points is None:
            return [0] * self._n
        return list(self._points)

    def legal_actions(self) -> list[Action]:
        return _LEGAL[self._phase](self)

    def _legal_draw(self) -> list[Action]:
        actions: list[Action] = []
        if self._stock or len(self._pile) > 1:
            actions.append("draw")
        if self._count[self._actor]:
            actions.append("take")
        return actions

    def _legal_stock_card(self) -> list[Action]:
        seat = self._actor
        row = self._slots[seat]
        if self._count[seat] == len(row):
            return list(_DISCARD_REPLACE[: len(row) + 1])
        return ["discard", *[_REPLACE[k] for k, c in enumerate(row) if c >= 0]]

    def _legal_taken_card(self) -> list[Action]:
        row = self._slots[self._actor]
        return [_REPLACE[k] for k, c in enumerate(row) if c >= 0]

    def _legal_jack(self) -> list[Action]:
        actions: list[Action] = ["pass"]
        caller = self._caller
        for seat, row in enumerate(self._slots):
            if seat != caller:
                swaps = _SWAPS[seat]
                actions.extend([swaps[k] for k, c in enumerate(row) if c >= 0])
        return actions

    def _legal_jack_second(self) -> list[Action]:
        actions = self._legal_jack()
        first_seat, first_slot = self._jack
        actions.remove(_SWAPS[first_seat][first_slot])
        del actions[0]
        return actions

    def _legal_queen(self) -> list[Action]:
        seat = self._actor
        row = self._slots[seat]
        if self._count[seat] == len(row):
            return list(_PASS_PEEK[: len(row) + 1])
        return ["pass", *[_PEEKS[k] for k, c in enumerate(row) if c >= 0]]

    def _legal_ace(self) -> list[Action]:
        caller = self._caller
        actions: list[Action] = list(_PASS_GIVE[: self._n + 1])
        if caller >= 0:
            del actions[caller + 1]
        return actions

    def _legal_claim(self) -> list[Action]:
        seat = self._actor
        row = self._slots[seat]
        if self._count[seat] == len(row):
            return list(_PASS_CLAIM[: len(row) + 1])
        return ["pass", *[_CLAIMS[k] for k, c in enumerate(row) if c >= 0]]

    def _legal_call(self) -> list[Action]:
        return ["pass", "dutch"]

    def _legal_over(self) -> list[Action]:
        return []

    def apply_action(self, action: Action) -> None:
        phase = self._phase
        if phase == _OVER:
            raise IllegalActionError("the round is over: no more actions")
        try:
            parsed = _ACTIONS[action]  # type: ignore[index]
        except (KeyError, TypeError):
            raise self._illegal(action) from None
        _APPLY[phase](self, parsed, action)  # type: ignore[arg-type]

    def _illegal(self, action: object, why: str | None = None) -> IllegalActionError:
        """The error for an action that is not legal now (the state is not changed)."""
        if not isinstance(action, str):
            head = (
                f"a dutch action is a string such as 'draw', 'replace:2' or 'swap:1:3', "
                f"not {type(action).__name__} {action!r}"
            )
        elif action not in _ACTIONS:
            head = f"unknown action {action!r}"
        else:
            head = f"{action!r} is not legal now"
        if why is None:
            why = f"seat {self._actor} {_ASKED[self._phase]}"
        legal = self.legal_actions()
        shown = ", ".join(str(a) for a in legal[:20]) + (", ..." if len(legal) > 20 else "")
        return IllegalActionError(f"{head}: {why}; legal actions: {shown}")

    def _own_slot(self, seat: int, slot: Slot, action: str) -> CardId:
        row = self._slots[seat]
        if slot >= len(row) or row[slot] < 0:
            raise self._illegal(action, f"seat {seat} has no card in slot {slot}")
        return row[slot]

    def _apply_draw(self, parsed: _ParsedAction, action: str) -> None:
        kind = parsed[0]
        seat = self._actor
        if kind == _K_DRAW:
            if not self._stock and len(self._pile) < 2:
                raise self._illegal(action, "the stock is empty and there is nothing to reshuffle")
            self._held = self._pop_stock()
            self._phase = _STOCK_CARD
            self._log.append((seat, action, -1, -1, 0))
        elif kind == _K_TAKE:
            if not self._count[seat]:
                raise self._illegal(
                    action, "a taken discard must replace a slot and you have no card"
                )
            card = self._pile.pop()
            self._held = card
            self._phase = _TAKEN_CARD
            self._log.append((seat, action, card, -1, 0))
        else:
            raise self._illegal(action)

    def _apply_stock_card(self, parsed: _ParsedAction, action: str) -> None:
        kind, slot, _ = parsed
        seat = self._actor
        held = self._held
        if kind == _K_DISCARD:
            self._held = -1
            self._log.append((seat, action, held, -1, 0))
            self._put_down(seat, held)
        elif kind == _K_REPLACE:
            old = self._own_slot(seat, slot, action)
            self._slots[seat][slot] = held
            self._known[seat][slot] = 1 << seat
            self._held = -1
            self._log.append((seat, action, old, -1, 0))
            self._put_down(seat, old)
        else:
            raise self._illegal(action)

    def _apply_taken_card(self, parsed: _ParsedAction, action: str) -> None:
        kind, slot, _ = parsed
        seat = self._actor
        if kind != _K_REPLACE:
            raise self._illegal(action)
        old = self._own_slot(seat, slot, action)
        self._slots[seat][slot] = self._held
        self._known[seat][slot] = (1 << self._n) - 1  # everybody saw the card taken
        self._held = -1
        self._log.append((seat, action, old, -1, 0))
        self._put_down(seat, old)

    def _swappable(self, target: int, slot: Slot, action: str) -> None:
        if target >= self._n:
            raise self._illegal(action, f"there is no seat {target}")
        if target == self._caller:
            raise self._illegal(action, f"seat {target} called Dutch: its cards cannot be swapped")
        self._own_slot(target, slot, action)

    def _apply_jack(self, parsed: _ParsedAction, action: str) -> None:
        kind, target, slot = parsed
        seat = self._actor
        if kind == _K_PASS:
            self._log.append((seat, action, -1, -1, 0))
            self._open_claims()
        elif kind == _K_SWAP:
            self._swappable(target, slot, action)
            self._jack = (target, slot)
            self._phase = _JACK_SECOND
            self._log.append((seat, action, -1, -1, 0))
        else:
            raise self._illegal(action)

    def _apply_jack_second(self, parsed: _ParsedAction, action: str) -> None:
        kind, target, slot = parsed
        if kind != _K_SWAP:
            raise self._illegal(action)
        self._swappable(target, slot, action)
        first, first_slot = self._jack
        if (first, first_slot) == (target, slot):
            raise self._illegal(action, "the second card of a swap must differ from the first")
        slots, known = self._slots, self._known
        a, b = slots[first], slots[target]
        a[first_slot], b[slot] = b[slot], a[first_slot]
        ka, kb = known[first], known[target]
        ka[first_slot], kb[slot] = kb[slot], ka[first_slot]
        self._jack = (-1, -1)
        self._log.append((self._actor, action, -1, -1, 0))
        self._open_claims()

    def _apply_queen(self, parsed: _ParsedAction, action: str) -> None:
        kind, slot, _ = parsed
        seat = self._actor
        if kind == _K_PEEK:
            self._own_slot(seat, slot, action)
            self._known[seat][slot] |= 1 << seat
        elif kind != _K_PASS:
            raise self._illegal(action)
        self._log.append((seat, action, -1, -1, 0))
        self._open_claims()

    def _apply_ace(self, parsed: _ParsedAction, action: str) -> None:
        kind, target, _ = parsed
        seat = self._actor
        if kind == _K_PASS:
            self._log.append((seat, action, -1, -1, 0))
        elif kind == _K_GIVE:
            if target >= self._n:
                raise self._illegal(action, f"there is no seat {target}")
            if target == self._caller:
                raise self._illegal(
                    action, f"seat {target} called Dutch: it cannot be given a card"
                )
            slot = self._free_slot(target)
            self._log.append((seat, action, -1, slot, 0))
            self._place(target, slot, self._pop_stock())
        else:
            raise self._illegal(action)
        self._open_claims()

    def _apply_claim(self, parsed: _ParsedAction, action: str) -> None:
        kind, slot, _ = parsed
        seat = self._actor
        if kind == _K_PASS:
            self._log.append((seat, action, -1, -1, 0))
            self._next_claim()
            return
        if kind != _K_CLAIM:
            raise self._illegal(action)
        card = self._own_slot(seat, slot, action)
        if _RANK[card] == _RANK[self._pile[-1]]:
            self._slots[seat][slot] = EMPTY
            self._known[seat][slot] = 0
            self._count[seat] -= 1
            self._log.append((seat, action, card, -1, 1))
            self._put_down(seat, card)
            return
        # A wrong claim: shown to all, back in its slot, a penalty card, no claim until the
        # next card is put down.
        self._known[seat][slot] = (1 << self._n) - 1
        self._barred |= 1 << seat
        if self._stock or len(self._pile) > 1:
            penalty = self._free_slot(seat)
            self._log.append((seat, action, card, penalty, 0))
            self._place(seat, penalty, self._pop_stock())
        else:
            self._log.append((seat, action, card, -1, 0))
        self._next_claim()

    def _apply_call(self, parsed: _ParsedAction, action: str) -> None:
        kind = parsed[0]
        seat = self._actor
        if kind == _K_DUTCH:
            self._caller = seat
            self._last_left = self._n  # this turn, then one turn for each other player
        elif kind != _K_PASS:
            raise self._illegal(action)
        self._log.append((seat, action, -1, -1, 0))
        self._end_turn()

    # -- records ------------------------------------------------------------------------------

    def history(self) -> list[tuple[int, Action]]:
        return [(seat, action) for seat, action, _, _, _ in self._log if seat >= 0]

    def public_history(self) -> list[dict[str, JSON]]:
        """Every public event of the round so far (see :meth:`observation`)."""
        public = self._public
        log = self._log
        for seat, action, card, slot, flag in log[len(public) :]:
            entry: dict[str, JSON]
            if seat < 0:
                entry = {"reshuffle": card}
            else:
                entry = {"seat": seat, "action": action}
                if card >= 0:
                    entry["card"] = card_json(card)
                if action.startswith("claim"):
                    entry["right"] = bool(flag)
                    if not flag:
                        entry["penalty_slot"] = slot if slot >= 0 else None
                elif action.startswith("give"):
                    entry["slot"] = slot
            public.append(entry)
        return list(public)

    def observation(self, seat: int) -> dict[str, JSON]:
        """What ``seat`` knows now, and nothing else.

        ``slots[s][k]`` is None for an empty slot, ``"?"`` for a card ``seat`` has not seen
        (or lost track of), else the card. ``holding`` is the card ``seat`` drew or took and
        has not placed yet. The discard pile and the history are public.
        """
        n = self._n
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise GameError(f"no seat {seat!r}: this dutch game has seats 0 to {n - 1}")
        bit = 1 << seat
        views: list[JSON] = []
        for row, known in zip(self._slots, self._known, strict=True):
            view: list[JSON] = []
            for card, knowers in zip(row, known, strict=True):
                if card < 0:
                    view.append(None)
                elif knowers & bit:
                    view.append(card_json(card))
                else:
                    view.append("?")
            views.append(view)
        phase = self._phase
        holder = self._actor if phase in (_STOCK_CARD, _TAKEN_CARD) else -1
        claim: JSON = None
        if phase == _CLAIM:
            claim = {
                "rank": RANKS[_RANK[self._pile[-1]]],
                "putter": self._putter,
                "barred": [s for s in range(n) if self._barred >> s & 1],
            }
        jack: JSON = None
        if phase == _JACK_SECOND:
            jack = {"seat": self._jack[0], "slot": self._jack[1]}
        obs: dict[str, JSON] = {
            "game": "dutch",
            "deal_index": self.deal_index,
            "seat": seat,
            "players": n,
            "decks": self.game.rules.decks,
            "phase": Phase(phase).label,
            "to_act": self._actor,
            "legal": self.legal_actions() if seat == self._actor else [],
            "turn": self._turn,
            "turns": self._turns,
            "turn_limit": self._limit,
            "caller": self.caller,
            "slots": views,
            "cards": list[JSON](self._count),
            "holder": None if holder < 0 else holder,
            "holding": card_json(self._held) if holder == seat else None,
            "stock": len(self._stock),
            "discard": [card_json(c) for c in self._pile],
            "top": card_json(self._pile[-1]) if self._pile else None,
            "claim": claim,
            "jack": jack,
            "history": list[JSON](self.public_history()),
        }
        if phase == _OVER:
            obs["points"] = list[JSON](self.points())
        return obs

    def deal_record(self) -> dict[str, JSON]:
        record: dict[str, JSON] = {
            "seed": self._seed,
            "hands": [list[JSON](hand) for hand in self._start_hands],
            "stock": list[JSON](self._start_stock),
        }
        if self._seed is None:
            record["reshuffle_seed"] = self._reshuffle_seed
        return record

    def summary(self) -> dict[str, JSON]:
        """The end of a round is public: every card, each sum, the caller and its penalty."""
        sums = self.sums()
        points = self.points()
        return {
            "points": list[JSON](points),
            "sums": list[JSON](sums),
            "caller": self.caller,
            "call_penalty": self.caller is not None and points[self._caller] != sums[self._caller],
            "ended_by": "dutch" if self._caller >= 0 else "turn-cap",
            "turns": self._turns,
            "hands": [[None if c < 0 else card_json(c) for c in row] for row in self._slots],
            "tricks": [],
        }

    def clone(self) -> DutchState:
        other = object.__new__(DutchState)
        other.game = self.game
        other.deal_index = self.deal_index
        for name in (
            "_actor",
            "_barred",
            "_caller",
            "_claim_i",
            "_held",
            "_jack",
            "_last_left",
            "_limit",
            "_n",
            "_phase",
            "_putter",
            "_reshuffle_seed",
            "_reshuffles",
            "_seed",
            "_start_hands",
            "_start_stock",
            "_turn",
            "_turns",
        ):
            setattr(other, name, getattr(self, name))
        other._slots = [list(row) for row in self._slots]
        other._known = [list(row) for row in self._known]
        other._count = list(self._count)
        other._pile = list(self._pile)
        other._stock = list(self._stock)
        other._log = list(self._log)
        other._public = list(self._public)
        other._points = None if self._points is None else list(self._points)
        return other

    def __repr__(self) -> str:
        return (
            f"<DutchState deal {self.deal_index} turn {self._turns + 1} of seat {self._turn}, "
            f"{Phase(self._phase).label}, to act {self._actor}>"
        )


_Legal: TypeAlias = Callable[[DutchState], list[Action]]
_Apply: TypeAlias = Callable[[DutchState, _ParsedAction, str], None]

_LEGAL: tuple[_Legal, ...] = (
    DutchState._legal_draw,
    DutchState._legal_stock_card,
    DutchState._legal_taken_card,
    DutchState._legal_jack,
    DutchState._legal_jack_second,
    DutchState._legal_queen,
    DutchState._legal_ace,
    DutchState._legal_claim,
    DutchState._legal_call,
    DutchState._legal_over,
)
_APPLY: tuple[_Apply, ...] = (
    DutchState._apply_draw,
    DutchState._apply_stock_card,
    DutchState._apply_taken_card,
    DutchState._apply_jack,
    DutchState._apply_jack_second,
    DutchState._apply_queen,
    DutchState._apply_ace,
    DutchState._apply_claim,
    DutchState._apply_call,
)


def _layout(
    rules: DutchRules,
    hands: Sequence[Sequence[str | int]],
    stock: Sequence[str | int] | None,
) -> tuple[list[list[CardId]], list[CardId]]:
    """Ids for an explicit layout. Ids (ints) are taken as given; a name takes the lowest
    unused copy of that card (deck 0 first), in the order hands then stock, seat by seat and
    slot by slot. Cards named nowhere go to the bottom of the stock in ascending id order."""
    n, total = rules.players, DECK_SIZE * rules.decks
    if not isinstance(hands, list | tuple) or len(hands) != n:
        raise GameError(f"this dutch game needs {n} hands (lists of cards), one per seat")
    if stock is not None and not isinstance(stock, list | tuple):
        raise GameError("the stock is a list of cards, top first")
    rows: list[Sequence[str | int]] = [*hands, stock or []]
    used = [False] * total
    for where, row in enumerate(rows):
        if not isinstance(row, list | tuple):
            raise GameError(f"hand {where} must be a list of cards")
        for item in row:
            if isinstance(item, int) and not isinstance(item, bool):
                if not 0 <= item < total:
                    raise GameError(f"card id {item} out of range: ids are 0 to {total - 1}")
                if used[item]:
                    raise GameError(f"card id {item} ({_NAME[item]}) is dealt twice")
                used[item] = True
    out: list[list[CardId]] = []
    for row in rows:
        ids: list[CardId] = []
        for item in row:
            if isinstance(item, int) and not isinstance(item, bool):
                ids.append(item)
                continue
            try:
                card = parse_card(item)
            except ValueError as exc:
                raise GameError(str(exc)) from None
            for copy in range(card, total, DECK_SIZE):
                if not used[copy]:
                    used[copy] = True
                    ids.append(copy)
                    break
            else:
                raise GameError(f"{card_name(card)} is dealt more times than there are decks")
        out.append(ids)
    rest = out.pop()
    rest.extend(c for c in range(total) if not used[c])
    if not rest:
        raise GameError("the layout leaves no card to start the discard pile")
    return out, rest


@register
class DutchGame(Game[DutchRules]):
    """Dutch with fixed rules; ``games.load("dutch")``."""

    name: ClassVar[str] = "dutch"
    title: ClassVar[str] = "Dutch"
    rules_type: ClassVar[type] = DutchRules
    presets: ClassVar[Mapping[str, Mapping[str, object]]] = {"classic": {}}
    preset_docs: ClassVar[Mapping[str, str]] = {
        "classic": "Dutch as RULES.md: 4 players, two decks, 4 slots each, +10 for a caller "
        "without the lowest sum, rounds capped at 60 turns per player, game to 100, lowest "
        "total wins."
    }
    default_preset: ClassVar[str] = "classic"
    lower_is_better: ClassVar[bool] = True

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def decisions_per_deal(self) -> int:
        """An estimate, since play decides a round's length: ESTIMATED_TURNS turns per player
        (or turn_cap, if fewer), each of about ``players + 3`` decisions (draw, place, call,
        and a chance to claim for every other player). Players that never call make a round
        last ``players * turn_cap`` turns (docs/operations.md, *Engine figures*)."""
        n = self.rules.players
        return n * min(self.rules.turn_cap, ESTIMATED_TURNS) * (n + 3)

    def new_deal(
        self,
        deal_index: int = 0,
        seed: int | None = None,
        hands: Sequence[Sequence[str | int]] | None = None,
        *,
        stock: Sequence[str | int] | None = None,
        reshuffle_seed: int = 0,
    ) -> DutchState:
        """A round from (seed, deal_index): ``shuffled(52 * decks, seed=, deal_index=)`` (purpose
        ``"deal"``), card ``i < players * slots`` of it to seat ``i % players``, slot
        ``i // players``, the rest the stock top first (its top card turned up).

        Or an explicit layout: ``hands`` (cards per seat, any number, names or ids) and
        ``stock`` (top first, its first card turned up; unnamed cards follow in id order),
        recorded without a seed; its reshuffles use ``reshuffle_seed`` (a seeded round's use
        its seed). Seat ``deal_index % players`` plays first."""
        if isinstance(deal_index, bool) or not isinstance(deal_index, int) or deal_index < 0:
            raise GameError(f"a deal index is a non-negative integer, not {deal_index!r}")
        rules = self.rules
        if hands is not None:
            if seed is not None:
                raise GameError("give a seed or explicit hands, not both")
            if not _is_id(reshuffle_seed) or reshuffle_seed < 0:
                raise GameError(f"a reshuffle seed is a non-negative integer: {reshuffle_seed!r}")
            ids, rest = _layout(rules, hands, stock)
            return DutchState(
                self, deal_index, seed=None, reshuffle_seed=reshuffle_seed, hands=ids, stock=rest
            )
        if stock is not None:
            raise GameError("an explicit stock needs explicit hands")
        if seed is None:
            raise GameError("a deal needs a seed or explicit hands")
        n, size = rules.players, rules.slots
        order = shuffled(DECK_SIZE * rules.decks, seed=seed, deal_index=deal_index)
        dealt = [order[seat : n * size : n] for seat in range(n)]
        return DutchState(
            self, deal_index, seed=seed, reshuffle_seed=seed, hands=dealt, stock=order[n * size :]
        )

    def deal_from_record(self, deal_index: int, record: Mapping[str, JSON]) -> DutchState:
        seed = record.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise LogError(f"a dutch deal record's seed is null or an integer, not {seed!r}")
        reshuffle = seed if seed is not None else record.get("reshuffle_seed", 0)
        if isinstance(reshuffle, bool) or not isinstance(reshuffle, int) or reshuffle < 0:
            raise LogError("a dutch deal record's reshuffle_seed is a non-negative integer")
        hands, stock = record.get("hands"), record.get("stock")
        if not (
            isinstance(hands, list)
            and all(isinstance(h, list) and all(_is_id(c) for c in h) for h in hands)
            and isinstance(stock, list)
            and all(_is_id(c) for c in stock)
        ):
            raise LogError("a dutch deal record needs hands and stock as lists of card ids")
        total = DECK_SIZE * self.rules.decks
        if len([c for h in hands if isinstance(h, list) for c in h]) + len(stock) != total:
            raise LogError(f"a dutch deal record must place all {total} cards exactly once")
        try:
            state = self.new_deal(
                deal_index,
                reshuffle_seed=reshuffle,
                hands=[[c for c in h if isinstance(c, int)] for h in hands if isinstance(h, list)],
                stock=[c for c in stock if isinstance(c, int)],
            )
        except GameError as exc:
            raise LogError(f"a bad dutch deal record: {exc}") from None
        state._seed = seed
        return state

    def match_over(self, deal_points: Sequence[Sequence[int]]) -> bool:
        fixed = self.rules.fixed_deals
        if fixed:
            return len(deal_points) >= fixed
        return any(total >= self.rules.target_score for total in self.match_scores(deal_points))


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
