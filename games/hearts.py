"""The Hearts family: Dame de pique (Whisthub's Black Lady), les cœurs classiques, cœurs à deux.

Every rule of shared/RULES.md section 1 is a declared option of :class:`HeartsRules`; the presets
``whisthub`` (default), ``classic-fr``, ``classic-fr-sourdine`` and ``two-player`` are named sets
of values (docs/rules.md documents them all).

>>> import games
>>> game = games.load("hearts", "whisthub")
>>> state = game.new_deal(deal_index=3, seed=7)        # deal 3 of the cycle: no pass
>>> state.legal_actions()                               # the holder of 2C must lead it
['2C']
>>> state.apply_action("2C")
>>> state.history()[0][1]
'2C'

Cards are plain ints (``suit * 13 + rank``) and hands are bitmasks (see games.cards); the named
API checks every action, and :meth:`HeartsState.legal_mask` / :meth:`HeartsState.apply_card`
plus :func:`games.hearts_fast.random_playout` are the int fast path for simulations.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, cast

from games.base import JSON, Action, Game, State, Trick, running_totals
from games.cards import (
    CARD_IDS,
    CARD_NAMES,
    CLUBS,
    DECK_SIZE,
    DIAMONDS,
    HEARTS,
    RANK_Q,
    RANK_T,
    SPADES,
    SUIT_MASKS,
    SUIT_NAME_TABLES,
    SUIT_NAMES,
    Card,
    CardSet,
    make_card,
    names_of,
    parse_card,
)
from games.dealing import checked_seed, shuffled
from games.errors import GameError, IllegalActionError, OptionError
from games.options import MAX_DEALS, MAX_TARGET_SCORE, option
from games.registry import register

# --- cards and points -------------------------------------------------------------------

QUEEN_OF_SPADES: Final[Card] = make_card(RANK_Q, SPADES)
TEN_OF_DIAMONDS: Final[Card] = make_card(RANK_T, DIAMONDS)
TWO_OF_CLUBS: Final[Card] = 0

HEART_CARDS: Final[CardSet] = SUIT_MASKS[HEARTS]
SPADE_CARDS: Final[CardSet] = SUIT_MASKS[SPADES]
CLUB_CARDS: Final[CardSet] = SUIT_MASKS[CLUBS]
QS_BIT: Final[CardSet] = 1 << QUEEN_OF_SPADES
TD_BIT: Final[CardSet] = 1 << TEN_OF_DIAMONDS
#: The cards that carry penalty points: the 13 hearts and QS (26 points in all).
PENALTY_CARDS: Final[CardSet] = HEART_CARDS | QS_BIT
MOON_POINTS: Final = 26
TD_BONUS_POINTS: Final = -10

#: games.cards.CARD_IDS by the card's bit (``1 << card``): the state keeps the cards in play
#: as bits, so the play phase's hot path checks a card name with one lookup and one bit test.
BIT_OF_NAME: Final[dict[str, CardSet]] = {name: 1 << card for name, card in CARD_IDS.items()}
_NAME_OF_BIT: Final[dict[CardSet, str]] = {1 << card: name for card, name in enumerate(CARD_NAMES)}


def _json_names(cards: CardSet) -> list[JSON]:
    """:func:`names_of`, typed as the JSON of observations and records."""
    return cast("list[JSON]", names_of(cards))


def card_points(card: Card, *, td_bonus: bool) -> int:
    """A card's points: a heart 1, QS 13, TD -10 with the TD bonus, any other card 0.

    >>> card_points(parse_card("QS"), td_bonus=False), card_points(parse_card("TD"), td_bonus=True)
    (13, -10)
    """
    if card == QUEEN_OF_SPADES:
        return 13
    if card // 13 == HEARTS:
        return 1
    if td_bonus and card == TEN_OF_DIAMONDS:
        return TD_BONUS_POINTS
    return 0


# --- rules --------------------------------------------------------------------------------

PASS_SCHEDULES: Final = (
    "left-right-across-none",
    "left-right-across",
    "left-right-none",
    "left-right",
    "left",
    "right",
    "none",
)
#: Seat offset of the receiver for each pass direction ("none": no pass).
PASS_OFFSETS: Final[Mapping[str, int]] = {"left": 1, "right": -1, "across": 2, "none": 0}


@dataclasses.dataclass(frozen=True, slots=True)
class HeartsRules:
    """The options of the Hearts family; the defaults are the ``whisthub`` preset."""

    players: int = option(
        4,
        minimum=2,
        maximum=6,
        doc="Number of players. Cards are dealt one at a time so that all hold the same number; "
        "see leftover_cards for what happens to the rest.",
    )
    leftover_cards: str = option(
        "reserve",
        choices=("reserve", "stock"),
        doc="'reserve': all hold 52 // players cards and the 52 mod players left-over cards lie "
        "face down until the winner of the first trick takes them (their points count for it). "
        "'stock' (2 players only): 13 cards each, the other 26 form a face-down stock; after "
        "each trick, while it lasts, each player draws one card, the trick's winner first, "
        "and sees only the card it draws.",
    )
    pass_schedule: str = option(
        "left-right-across-none",
        choices=PASS_SCHEDULES,
        doc="Pass direction by deal index d: the schedule's directions in turn (d modulo "
        "their number). left = to seat i+1, right = to seat i-1, across = to seat i+2 "
        "(4 players only), none = no pass that deal.",
    )
    pass_count: int = option(
        3,
        minimum=1,
        maximum=5,
        doc="Cards each player passes, all players choosing at once (a pass is one action: "
        "the sorted list of the cards).",
    )
    first_trick_points: str = option(
        "forbidden",
        choices=("forbidden", "allowed"),
        doc="'forbidden': on the first trick a player who cannot follow may not play a heart or "
        "QS unless every card in hand is a heart or QS. 'allowed': no such restriction.",
    )
    lead_restriction: str = option(
        "hearts",
        choices=("hearts", "hearts-and-qs", "none"),
        doc="The cards that may not be led until hearts are broken (see hearts_broken_by), "
        "unless the leader holds nothing else: 'hearts', 'hearts-and-qs' (hearts and QS), or "
        "'none' (any lead).",
    )
    hearts_broken_by: str = option(
        "heart-played",
        choices=("heart-played", "heart-or-qs-played", "heart-or-spade-discarded"),
        doc="What breaks hearts, from the next lead on: 'heart-played' (a heart was played in "
        "an earlier trick; QS does not break hearts), 'heart-or-qs-played' (a heart or QS was "
        "played: OpenSpiel's qs_breaks_hearts), 'heart-or-spade-discarded' (some player "
        "discarded a heart or a spade on a trick of another suit: the literal reading of the "
        "French classic rules).",
    )
    moon: str = option(
        "others-plus-26",
        choices=("others-plus-26", "self-minus-26", "none"),
        doc="Shooting the moon (one player takes all 13 hearts and QS): 'others-plus-26': "
        "that player's 26 become 0 and every other player scores 26 more; 'self-minus-26' "
        "(la sourdine): that player's 26 become -26, the others are unchanged; 'none': no "
        "moon. The TD bonus is unaffected either way.",
    )
    td_bonus: bool = option(
        False,
        doc="The ten of diamonds (TD) is worth -10 points to whoever takes it.",
    )
    target_score: int = option(
        100,
        minimum=1,
        maximum=MAX_TARGET_SCORE,
        doc="End condition when fixed_deals is 0: the game ends after the deal in which some "
        "total reaches or passes this score.",
    )
    fixed_deals: int = option(
        0,
        minimum=0,
        maximum=MAX_DEALS,
        doc="When positive, the game is exactly this many deals (tournaments) and target_score "
        "is ignored.",
    )

    def __post_init__(self) -> None:
        if self.leftover_cards == "stock" and self.players != 2:
            raise OptionError(
                f"option 'leftover_cards' of hearts may be 'stock' only with 2 players "
                f"(players is {self.players}); with more players use 'reserve'",
                option="leftover_cards",
            )
        if "across" in self.pass_schedule and self.players != 4:
            allowed = ", ".join(repr(s) for s in PASS_SCHEDULES if "across" not in s)
            raise OptionError(
                f"option 'pass_schedule' of hearts may pass across only with 4 players "
                f"(players is {self.players}); with {self.players} use one of {allowed}",
                option="pass_schedule",
            )

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return 13 if self.leftover_cards == "stock" else DECK_SIZE // self.players

    @property
    def leftover_count(self) -> int:
        """Cards left over after the deal: the reserve or the stock."""
        return DECK_SIZE - self.hand_size * self.players

    def pass_direction(self, deal_index: int) -> str:
        """The pass direction of a deal: 'left', 'right', 'across' or 'none'.

        >>> [HeartsRules().pass_direction(d) for d in range(5)]
        ['left', 'right', 'across', 'none', 'left']
        """
        cycle = self.pass_schedule.split("-")
        return cycle[deal_index % len(cycle)]


class PlayRules:
    """The rules as the play reads them: :class:`HeartsRules`' options turned into ints, card
    masks and tables once per game, and the scoring and dealing steps that use them.

    Why apart from HeartsRules and HeartsGame: compiled by mypyc this is a native class whose
    attributes are C fields, read at every card by the state and the fast path, whereas
    HeartsRules (a dataclass of declared options) and HeartsGame (a subclass of the
    interpreted games.base.Game) stay Python objects whose attributes are dictionary lookups.
    A game holds one as ``game.table``.
    """

    __slots__ = (
        "dealt_cards",
        "discard_breaks",
        "forbid_mask",
        "moon_mode",
        "n",
        "no_first_points",
        "offsets",
        "pass_count",
        "play_breaks",
        "points_of_bit",
        "points_table",
        "stock_mode",
        "td_bit",
        "tricks_per_deal",
    )

    def __init__(self, rules: HeartsRules) -> None:
        self.n = n = rules.players
        self.stock_mode = rules.leftover_cards == "stock"
        self.pass_count = rules.pass_count
        self.forbid_mask = {"hearts": HEART_CARDS, "hearts-and-qs": PENALTY_CARDS, "none": 0}[
            rules.lead_restriction
        ]
        self.play_breaks = {
            "heart-played": HEART_CARDS,
            "heart-or-qs-played": PENALTY_CARDS,
            "heart-or-spade-discarded": 0,
        }[rules.hearts_broken_by]
        self.discard_breaks = (
            HEART_CARDS | SPADE_CARDS if rules.hearts_broken_by == "heart-or-spade-discarded" else 0
        )
        self.no_first_points = rules.first_trick_points == "forbidden"
        self.td_bit = TD_BIT if rules.td_bonus else 0
        self.dealt_cards = rules.hand_size * n
        self.tricks_per_deal = (DECK_SIZE - (0 if self.stock_mode else rules.leftover_count)) // n
        self.moon_mode = {"none": _MOON_NONE, "others-plus-26": _MOON_OTHERS}.get(
            rules.moon, _MOON_SELF
        )
        self.offsets = tuple(PASS_OFFSETS[d] % n for d in rules.pass_schedule.split("-"))
        #: A card's points by card id, and by card bit (the tricks of observations).
        self.points_table = tuple(card_points(c, td_bonus=rules.td_bonus) for c in range(DECK_SIZE))
        self.points_of_bit = {1 << c: p for c, p in enumerate(self.points_table)}

    def taken_points(self, won: Sequence[CardSet]) -> list[int]:
        """The points of the cards each seat has taken (hearts, QS, TD bonus), before the moon.

        >>> PlayRules(HeartsRules(td_bonus=True)).taken_points([1 << 49 | 1 << 21, 1 << 26])
        [3, 1]
        """
        td_bit = self.td_bit
        return [
            (cards & HEART_CARDS).bit_count()
            + (13 if cards & QS_BIT else 0)
            + (TD_BONUS_POINTS if cards & td_bit else 0)
            for cards in won
        ]

    def score(self, won: Sequence[CardSet]) -> list[int]:
        """A finished deal's points from the cards each seat took, after the moon rule."""
        final = self.taken_points(won)
        mode = self.moon_mode
        if mode != _MOON_NONE:
            for shooter, cards in enumerate(won):
                if cards & PENALTY_CARDS == PENALTY_CARDS:
                    if mode == _MOON_OTHERS:
                        for seat in range(len(final)):
                            final[seat] += -MOON_POINTS if seat == shooter else MOON_POINTS
                    else:
                        final[shooter] -= 2 * MOON_POINTS
                    break
        return final

    def dealer(self, deal_index: int) -> int:
        """The dealer of a deal: seat ``deal_index % players`` (the deal passes to the left).
        It only matters in two-player Hearts, when no hand holds a club."""
        return deal_index % self.n

    def pass_offset(self, deal_index: int) -> int:
        """Seat offset of the receiver of each pass in that deal (0: no pass)."""
        offsets = self.offsets
        return offsets[deal_index % len(offsets)]

    def deal(self, deck: Sequence[Card]) -> tuple[list[CardSet], list[Card]]:
        """The hands (bitmasks) and the left-over cards dealt from a shuffled deck: card
        ``deck[i]`` goes to seat ``i % players`` for the first ``hand_size * players`` cards;
        the rest, in order, are the reserve or the stock (top first). See docs/dealing.md."""
        n, dealt = self.n, self.dealt_cards
        hands = []
        for seat in range(n):
            hand = 0
            for card in deck[seat:dealt:n]:
                hand |= 1 << card
            hands.append(hand)
        return hands, list(deck[dealt:])


# --- the state ----------------------------------------------------------------------------


class Phase(enum.IntEnum):
    """The phases of a deal, and the methods of :class:`HeartsState` that play each one.

    PASS: ``_legal_pass`` and ``_apply_pass`` (every seat in turn, then the exchange).
    PLAY: ``_legal_play``, and ``apply_action`` itself: its first lines are the play phase's
    apply, inlined because every simulation goes through them; any other action (a pass, a
    card spelt another way, an illegal one) goes on to ``_apply_other``. The legal cards are
    kept up to date as cards fall (``_legal``, and ``_names`` when they are of one suit).
    OVER: no action.
    """

    PASS = 0
    PLAY = 1
    OVER = 2


_PASS: Final = Phase.PASS
_PLAY: Final = Phase.PLAY
_OVER: Final = Phase.OVER

_MOON_NONE, _MOON_OTHERS, _MOON_SELF = 0, 1, 2


class HeartsState(State):
    """One Hearts deal: a pass phase (when the deal's direction is not 'none'), then play.

    Internally hands are bitmasks and a card in play is its bit (``1 << card``); the named API
    converts at the edge. The legal cards of the seat to play are worked out as soon as it is
    that seat's turn (``_legal``, 0 outside the play phase) with, when they are all of one
    suit, their sorted names (``_names``), so that legal_actions() copies a ready tuple and
    apply_action() checks a card with one bit test. A trick's winner, its points and whether
    it broke hearts are worked out when it is complete (breaking only matters from the next
    lead on).
    """

    __slots__ = (
        "_broken",
        "_current",
        "_dealt",
        "_draws",
        "_final",
        "_first_lead",
        "_g",
        "_hands",
        "_led",
        "_legal",
        "_n",
        "_names",
        "_pass_offset",
        "_passes",
        "_phase",
        "_reserve",
        "_seed",
        "_stock",
        "_stock_pos",
        "_t",
        "_trick",
        "_trick_leader",
        "_trick_no",
        "_tricks",
        "_won",
        "deal_index",
        "game",
    )

    def __init__(
        self,
        game: HeartsGame,
        deal_index: int,
        seed: int | None,
        hands: Sequence[CardSet],
        leftover: Sequence[Card],
    ) -> None:
        self.game = game
        self._g = game
        self.deal_index = deal_index
        self._seed = seed
        self._t = table = game.table
        n = table.n
        self._n = n
        self._dealt: tuple[CardSet, ...] = tuple(hands)
        self._hands: list[CardSet] = list(hands)
        if table.stock_mode:
            self._stock: tuple[Card, ...] = tuple(leftover)
            self._reserve = 0
            self._draws: list[list[Card]] = [[] for _ in range(n)]
        else:
            self._stock = ()
            reserve = 0
            for card in leftover:
                reserve |= 1 << card
            self._reserve = reserve
            self._draws = []
        self._stock_pos = 0
        self._passes: list[CardSet] = [-1] * n
        self._trick: list[CardSet] = []  # the bits of the cards played to the current trick
        self._led = 0
        self._trick_no = 0
        self._tricks: list[tuple[int, list[CardSet], int]] = []
        self._broken = False
        self._won: list[CardSet] = [0] * n  # the cards each seat has taken (reserve included)
        self._final: list[int] | None = None
        self._first_lead = 0
        self._pass_offset = offset = table.pass_offset(deal_index)
        if offset:
            self._phase = _PASS
            self._current = 0
            self._trick_leader = 0
            self._legal = 0
            self._names: tuple[str, ...] | None = None
        else:
            self._start_play()

    # -- named API ---------------------------------------------------------------------------

    def current_player(self) -> int:
        return self._current

    def is_terminal(self) -> bool:
        return self._phase is _OVER

    def legal_actions(self) -> list[Action]:
        names = self._names
        if names is not None:  # following suit, or the deal is over: a ready tuple
            return list(names)
        if self._phase is _PLAY:
            return self._legal_play()
        return self._legal_pass()

    def apply_action(self, action: object) -> None:
        # Parameters that hostile input reaches are typed object, checked here: compiled by
        # mypyc, a narrower type would raise TypeError before the checks (games/_native.py).
        # The hot path of every simulation: a legal card name in the play phase is one dict
        # lookup and one bit test; anything else (a pass, "10H", an illegal card, a deal
        # that is over) goes to _apply_other, whose checks are complete.
        try:
            bit = BIT_OF_NAME[action]  # type: ignore[index]
        except (KeyError, TypeError):
            bit = 0
        if not self._legal & bit:
            self._apply_other(action)
            return
        seat = self._current
        hands = self._hands
        hands[seat] = hands[seat] ^ bit  # not ^=: compiled, an int operation, not a generic one
        trick = self._trick
        if trick:
            trick.append(bit)
            if len(trick) == self._n:
                self._end_trick(trick)
                return
            led = self._led
        else:
            trick.append(bit)
            self._led = led = (bit.bit_length() - 1) // 13
        seat += 1
        if seat == self._n:
            seat = 0
        self._current = seat
        shift = 13 * led
        hand = hands[seat]
        bits = (hand >> shift) & 0x1FFF
        if bits:
            self._legal = bits << shift
            self._names = SUIT_NAME_TABLES[led][bits]
        else:
            self._discard(hand)

    def points(self) -> list[int]:
        final = self._final
        return list(final) if final is not None else self._t.taken_points(self._won)

    def history(self) -> list[tuple[int, Action]]:
        n = self._n
        out: list[tuple[int, Action]] = [
            (seat, _json_names(cards)) for seat, cards in enumerate(self._passes) if cards >= 0
        ]
        for leader, bits, _ in self._tricks:
            out.extend(((leader + k) % n, _NAME_OF_BIT[bit]) for k, bit in enumerate(bits))
        leader = self._trick_leader
        out.extend(((leader + k) % n, _NAME_OF_BIT[bit]) for k, bit in enumerate(self._trick))
        return out

    def clone(self) -> HeartsState:
        # Made by the constructor (compiled, the class has no bare __new__), then overwritten.
        other = HeartsState(self._g, self.deal_index, self._seed, self._dealt, ())
        other._hands = list(self._hands)
        other._stock = self._stock
        other._reserve = self._reserve
        other._stock_pos = self._stock_pos
        other._draws = [list(d) for d in self._draws]
        other._pass_offset = self._pass_offset
        other._passes = list(self._passes)
        other._trick = list(self._trick)
        other._led = self._led
        other._trick_leader = self._trick_leader
        other._trick_no = self._trick_no
        other._tricks = list(self._tricks)  # finished tricks are never changed
        other._broken = self._broken
        other._won = list(self._won)
        other._final = None if self._final is None else list(self._final)
        other._legal = self._legal
        other._names = self._names
        other._first_lead = self._first_lead
        other._phase = self._phase
        other._current = self._current
        return other

    def deal_record(self) -> dict[str, JSON]:
        record: dict[str, JSON] = {
            "seed": self._seed,
            "hands": [_json_names(hand) for hand in self._dealt],
        }
        if self._t.stock_mode:
            record["stock"] = [CARD_NAMES[c] for c in self._stock]
        elif self._g.rules.leftover_count:
            record["reserve"] = _json_names(self._reserve)
        return record

    def tricks(self) -> list[Trick]:
        points = self._t.points_table
        out = []
        for leader, bits, winner in self._tricks:
            cards = [bit.bit_length() - 1 for bit in bits]
            names = tuple(CARD_NAMES[c] for c in cards)
            out.append(Trick(leader, names, winner, sum(points[c] for c in cards)))
        return out

    def _tricks_json(self) -> list[JSON]:
        """``[t.as_json() for t in self.tricks()]``, built directly: every observation has it."""
        points = self._t.points_of_bit.__getitem__
        name_of = _NAME_OF_BIT.__getitem__
        return [
            {
                "leader": leader,
                "cards": list(map(name_of, bits)),
                "winner": winner,
                "points": sum(map(points, bits)),
            }
            for leader, bits, winner in self._tricks
        ]

    def summary(self) -> dict[str, JSON]:
        out = super().summary()
        out["moon"] = self.moon_shooter()
        if self._reserve:
            out["reserve"] = _json_names(self._reserve)
            out["reserve_winner"] = self._tricks[0][2] if self._tricks else None
        return out

    def observation(self, seat: object) -> dict[str, JSON]:
        """What ``seat`` may know now, JSON-safe: its hand, its own pass and (once everyone
        has passed) the cards it received, the current trick and every finished trick, points
        taken so far per seat, hand sizes, whether hearts are broken, the seat to act, and
        the reserve once won (reserve mode) or the cards it drew (stock mode)."""
        n = self._n
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
            raise ValueError(f"no seat {seat!r} at a {n}-player table")
        phase = self._phase
        offset = self._pass_offset
        passes = self._passes
        hand = self._hands[seat]
        passed: JSON = None
        received: JSON = None
        if phase is _PASS:
            # Passed cards are set aside at once; received ones arrive when all have passed.
            sizes = [
                h.bit_count() - (p.bit_count() if p >= 0 else 0)
                for h, p in zip(self._hands, passes, strict=True)
            ]
            if passes[seat] >= 0:
                hand &= ~passes[seat]
                passed = _json_names(passes[seat])
        else:
            sizes = [h.bit_count() for h in self._hands]
            if offset:
                passed = _json_names(passes[seat])
                received = _json_names(passes[(seat - offset) % n])
        g = self._g
        obs: dict[str, JSON] = {
            "game": "hearts",
            "seat": seat,
            "players": n,
            "deal_index": self.deal_index,
            "phase": ("pass", "play", "over")[phase],
            "to_act": self._current,
            "hand": _json_names(hand),
            "hand_sizes": list[JSON](sizes),
            "pass_direction": g.rules.pass_direction(self.deal_index),
            "pass_to": (seat + offset) % n if offset else None,
            "passed": passed,
            "received": received,
            "passes_made": [s for s in range(n) if passes[s] >= 0] if offset else [],
            "trick": {
                "leader": self._trick_leader if phase is _PLAY else None,
                "cards": [_NAME_OF_BIT[bit] for bit in self._trick],
            },
            "tricks": self._tricks_json(),
            "hearts_broken": self._broken,
            "points_taken": list[JSON](self._t.taken_points(self._won)),
        }
        if self._t.stock_mode:
            obs["stock_size"] = len(self._stock) - self._stock_pos
            obs["drawn"] = [CARD_NAMES[c] for c in self._draws[seat]]
        elif g.rules.leftover_count:
            obs["reserve_size"] = g.rules.leftover_count
            obs["reserve"] = _json_names(self._reserve) if self._tricks else None
        if phase is _OVER:
            obs["points"] = list[JSON](self.points())
        return obs

    # -- int fast path -----------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    def hand(self, seat: int) -> CardSet:
        """The cards a seat holds now (a bitmask; in the pass phase, before the exchange)."""
        return self._hands[seat]

    def legal_mask(self) -> CardSet:
        """The legal cards of the seat to play, as a bitmask (0 outside the play phase)."""
        return self._legal

    def trick_cards(self) -> list[Card]:
        """The cards played to the current trick so far, in playing order (card ids)."""
        return [bit.bit_length() - 1 for bit in self._trick]

    def apply_card(self, card: object) -> None:
        """Play a card id for the seat to play: checked like :meth:`apply_action`, without
        the names (for bots and simulations that work in card ids)."""
        if self._phase is not _PLAY:
            raise IllegalActionError("no card may be played now: not in the play phase")
        if not isinstance(card, int) or not 0 <= card < DECK_SIZE:
            raise IllegalActionError(f"not a card id: {card!r}")
        if not (self._legal >> card) & 1:
            raise IllegalActionError(self._why_illegal(card))
        self.apply_action(CARD_NAMES[card])

    def apply_pass_mask(self, cards: CardSet) -> None:
        """The pass of the seat to act, as a bitmask of exactly pass_count held cards."""
        self._apply_pass(_json_names(cards))

    def moon_shooter(self) -> int | None:
        """The seat that took every heart and QS in this (finished) deal, if any."""
        if self._phase is not _OVER:
            return None
        for seat, cards in enumerate(self._won):
            if cards & PENALTY_CARDS == PENALTY_CARDS:
                return seat
        return None

    # -- phases ------------------------------------------------------------------------------

    def _apply_other(self, action: object) -> None:
        """Every action but a legal card name in the play phase: a pass, a card spelt another
        way ("10H", "qs"), or an illegal action (raises IllegalActionError, changes nothing)."""
        phase = self._phase
        if phase is _PLAY:
            card = self._parse_play(action)
            if not (self._legal >> card) & 1:
                raise IllegalActionError(self._why_illegal(card))
            self.apply_action(CARD_NAMES[card])
        elif phase is _PASS:
            self._apply_pass(action)
        else:
            raise IllegalActionError("the deal is over: no more actions")

    def _legal_play(self) -> list[Action]:
        """A lead or a discard (a card of any suit): the names of the legal cards."""
        return cast("list[Action]", names_of(self._legal))

    def _legal_pass(self) -> list[Action]:
        names = names_of(self._hands[self._current])
        combos = itertools.combinations(names, self._t.pass_count)
        return cast("list[Action]", list(map(list, combos)))

    def _apply_pass(self, action: object) -> None:
        count = self._t.pass_count
        if not isinstance(action, list | tuple):
            raise IllegalActionError(
                f"pass exactly {count} cards: send a list of {count} card names "
                f"such as {['2C', 'QS', 'AH', '7D', 'KS'][:count]!r}, not {action!r}"
            )
        if len(action) != count:
            raise IllegalActionError(f"pass exactly {count} cards, not {len(action)}")
        seat = self._current
        hand = self._hands[seat]
        cards = 0
        for item in action:
            card = CARD_IDS.get(item) if type(item) is str else None
            if card is None:
                card = _parse_name(item)
            if (cards >> card) & 1:
                raise IllegalActionError(f"you may not pass {CARD_NAMES[card]} twice")
            if not (hand >> card) & 1:
                raise IllegalActionError(f"you do not hold {CARD_NAMES[card]}")
            cards |= 1 << card
        self._pass_cards(cards)

    def _pass_cards(self, cards: CardSet) -> None:
        """Record the (checked) pass of the seat to act; after the last one, exchange."""
        seat = self._current
        self._passes[seat] = cards
        if seat + 1 < self._n:
            self._current = seat + 1
            return
        self._hands = exchange(self._hands, self._passes, self._pass_offset)
        self._start_play()

    def _start_play(self) -> None:
        """Begin the play phase: the holder of the lowest club in hand leads it; if no hand
        holds a club (two-player), the player left of the dealer leads any card."""
        self._phase = _PLAY
        leader, lead = first_lead(self._t, self._hands, self.deal_index)
        self._first_lead = lead
        self._current = leader
        self._trick_leader = leader
        self._legal = lead
        self._names = None

    def _discard(self, hand: CardSet) -> None:
        """The seat to play cannot follow suit: any card, but no heart or QS on the first
        trick (when so ruled) while it holds another card."""
        if self._trick_no == 0 and self._t.no_first_points:
            hand = hand & ~PENALTY_CARDS or hand
        self._legal = hand
        self._names = None

    def _end_trick(self, trick: list[CardSet]) -> None:
        """The trick is complete: its winner takes it and leads the next one."""
        cards = 0
        for bit in trick:
            cards |= bit
        led = SUIT_MASKS[self._led]
        leader = self._trick_leader
        top = cards & led
        winner = (leader + trick.index(1 << (top.bit_length() - 1))) % self._n
        self._tricks.append((leader, trick, winner))
        self._trick = []
        g = self._t
        broken = self._broken
        if not broken and (cards & g.play_breaks or cards & ~led & g.discard_breaks):
            self._broken = broken = True
        trick_no = self._trick_no
        self._won[winner] |= cards | self._reserve if trick_no == 0 else cards
        self._trick_no = trick_no = trick_no + 1
        if self._stock_pos < len(self._stock):
            self._draw(winner)
        if trick_no == g.tricks_per_deal:
            self._finish()
            return
        self._current = self._trick_leader = winner
        hand = self._hands[winner]
        self._legal = hand if broken else hand & ~g.forbid_mask or hand
        self._names = None

    def _draw(self, winner: int) -> None:
        """After a trick, while the stock lasts, each player draws one card, winner first."""
        stock, pos, n = self._stock, self._stock_pos, self._n
        for k in range(n):
            seat = (winner + k) % n
            card = stock[pos + k]
            self._hands[seat] |= 1 << card
            self._draws[seat].append(card)
        self._stock_pos = pos + n

    def _finish(self) -> None:
        self._phase = _OVER
        self._current = -1
        self._legal = 0
        self._names = ()
        self._final = self._t.score(self._won)

    # -- messages ----------------------------------------------------------------------------

    def _parse_play(self, action: object) -> Card:
        if not isinstance(action, str):
            raise IllegalActionError(
                f"play one card: a card name such as 'QS' or 'TD', not {action!r}"
            )
        return _parse_name(action)

    def _why_illegal(self, card: Card) -> str:
        name = CARD_NAMES[card]
        hand = self._hands[self._current]
        if not (hand >> card) & 1:
            return f"you do not hold {name}"
        if self._trick:
            led = self._led
            if hand & SUIT_MASKS[led]:
                return f"you must follow {SUIT_NAMES[led]}"
            return (
                f"no points on the first trick: you may not play {name} while you hold cards "
                f"other than hearts and QS"
            )
        if self._trick_no == 0:
            lead = self._first_lead
            if lead & (lead - 1) == 0:
                return f"the first lead must be {CARD_NAMES[lead.bit_length() - 1]}"
            return (
                f"no points on the first trick: you may not lead {name} while you hold cards "
                f"other than hearts and QS"
            )
        return f"hearts are not broken: you may not lead {name}"


def exchange(hands: Sequence[CardSet], passes: Sequence[CardSet], offset: int) -> list[CardSet]:
    """The hands after every seat ``s`` passed ``passes[s]`` to seat ``s + offset``.

    >>> exchange([0b0011, 0b1100], [0b0001, 0b0100], 1)
    [6, 9]
    """
    n = len(hands)
    return [(hands[s] & ~passes[s]) | passes[(s - offset) % n] for s in range(n)]


def first_lead(table: PlayRules, hands: Sequence[CardSet], deal_index: int) -> tuple[int, CardSet]:
    """Who leads the first trick and what it may lead: the holder of the lowest club in hand
    leads that club; if no hand holds a club (two-player), the player left of the dealer
    leads any card (but no heart or QS while it holds another card when points are
    forbidden on the first trick).
    """
    clubs = 0
    for hand in hands:
        clubs |= hand & CLUB_CARDS
    if clubs:
        low = clubs & -clubs
        seat = 0
        while not hands[seat] & low:
            seat += 1
        return seat, low
    leader = (table.dealer(deal_index) + 1) % table.n
    hand = hands[leader]
    return leader, (hand & ~PENALTY_CARDS or hand) if table.no_first_points else hand


def _parse_name(item: object) -> Card:
    if not isinstance(item, str):
        raise IllegalActionError(f"a card is a name such as 'QS' or 'TD', not {item!r}")
    try:
        return parse_card(item)
    except ValueError as exc:
        raise IllegalActionError(str(exc)) from None


# --- the game -----------------------------------------------------------------------------

_CLASSIC_FR: Final[Mapping[str, object]] = {
    "pass_schedule": "left",
    "first_trick_points": "allowed",
    "lead_restriction": "hearts-and-qs",
    "hearts_broken_by": "heart-or-spade-discarded",
    "moon": "none",
    "td_bonus": True,
    "target_score": 50,
}


@register
class HeartsGame(Game[HeartsRules]):
    """The Hearts family of games under one set of declared rules."""

    name = "hearts"
    title = "Hearts family (Dame de pique, les cœurs)"
    rules_type = HeartsRules
    presets = {
        "whisthub": {},
        "classic-fr": dict(_CLASSIC_FR),
        "classic-fr-sourdine": {**_CLASSIC_FR, "moon": "self-minus-26"},
        "two-player": {
            **_CLASSIC_FR,
            "players": 2,
            "leftover_cards": "stock",
            "pass_schedule": "none",
        },
    }
    preset_docs = {
        "whisthub": "Dame de pique / Black Lady as played on Whisthub: 4 players, pass left, "
        "right, across, none; no points on the first trick; hearts broken by a heart; "
        "moon gives 26 to the others; game to 100.",
        "classic-fr": "Les cœurs, règle classique: 3 to 6 players (4 by default), left-overs to "
        "a reserve for the first trick's winner, pass left, no heart or QS lead until a heart "
        "or spade is discarded, TD -10, no moon, game to 50.",
        "classic-fr-sourdine": "classic-fr with la sourdine: taking all hearts and QS deducts "
        "26 from the taker's score.",
        "two-player": "Les cœurs à deux: 13 cards each, a 26-card stock drawn after each trick "
        "(winner first), no pass; scoring and leads as classic-fr.",
    }
    default_preset = "whisthub"
    lower_is_better = True

    def __init__(self, rules: HeartsRules, preset: str) -> None:
        super().__init__(rules, preset)
        #: What the play reads of these rules (the state and the fast path hold it).
        self.table = PlayRules(rules)

    @property
    def players(self) -> int:
        return self.table.n

    @property
    def decisions_per_deal(self) -> int:
        """Exact for a deal with a pass, and its upper bound otherwise: every card played
        (every trick, every seat) and, when some deal of the schedule has a pass, one pass
        per seat."""
        table = self.table
        return table.n * (table.tricks_per_deal + (1 if self.has_passes else 0))

    @property
    def has_passes(self) -> bool:
        return any(self.table.offsets)

    def passes(self, actions: Iterable[Sequence[JSON]]) -> list[JSON] | None:
        """The pass phase is the deal's first actions, each a list of cards."""
        passed: list[JSON] = [None] * self.table.n
        found = False
        for seat, action, *_ in actions:
            if not isinstance(action, list) or not isinstance(seat, int):
                break
            passed[seat] = action
            found = True
        return passed if found else None

    def new_deal(
        self,
        deal_index: object = 0,
        seed: object = None,
        hands: Sequence[Sequence[str]] | None = None,
        *,
        reserve: Sequence[str] | None = None,
        stock: Sequence[str] | None = None,
    ) -> HeartsState:
        """A deal from (seed, deal_index): the deck ``shuffled(52, seed=seed,
        deal_index=deal_index)`` (games.dealing) dealt by :meth:`PlayRules.deal`; or from
        explicit hands (card names).

        With explicit hands, ``reserve`` (reserve mode) or ``stock`` (stock mode, top card
        first) may be given; by default they are the cards no hand holds, in ascending order.
        """
        if not isinstance(deal_index, int) or isinstance(deal_index, bool) or deal_index < 0:
            raise GameError(f"a deal index is a non-negative integer, not {deal_index!r}")
        if hands is None:
            if seed is None:
                raise GameError("a deal needs a seed or explicit hands")
            if reserve is not None or stock is not None:
                raise GameError("reserve and stock go with explicit hands, not with a seed")
            checked = checked_seed(seed)
            deck = shuffled(DECK_SIZE, seed=checked, deal_index=deal_index)
            masks, leftover = self.table.deal(deck)
            return HeartsState(self, deal_index, checked, masks, leftover)
        if seed is not None:
            raise GameError("give a seed or explicit hands, not both")
        return self._explicit_deal(deal_index, None, hands, reserve, stock)

    def _explicit_deal(
        self,
        deal_index: int,
        seed: int | None,
        hands: Sequence[Sequence[str]],
        reserve: Sequence[str] | None,
        stock: Sequence[str] | None,
    ) -> HeartsState:
        n, size = self.table.n, self.rules.hand_size
        if isinstance(hands, str) or len(hands) != n:
            raise GameError(f"a {n}-player deal needs {n} hands")
        seen = 0
        masks = []
        for seat, hand in enumerate(hands):
            if isinstance(hand, str) or len(hand) != size:
                raise GameError(f"hand {seat} must hold {size} cards")
            mask = 0
            for name in hand:
                card = _parse_deal_card(name)
                if (seen >> card) & 1:
                    raise GameError(f"{CARD_NAMES[card]} is dealt twice")
                seen |= 1 << card
                mask |= 1 << card
            masks.append(mask)
        rest = [c for c in range(DECK_SIZE) if not (seen >> c) & 1]
        if self.table.stock_mode:
            if reserve is not None:
                raise GameError("these rules have a stock, not a reserve")
            leftover = rest if stock is None else _leftover(stock, rest, "stock")
        else:
            if stock is not None:
                raise GameError("these rules have a reserve, not a stock")
            leftover = rest if reserve is None else sorted(_leftover(reserve, rest, "reserve"))
        return HeartsState(self, deal_index, seed, masks, leftover)

    def deal_from_record(self, deal_index: int, record: Mapping[str, JSON]) -> HeartsState:
        hands = record.get("hands")
        seed = record.get("seed")
        if not isinstance(hands, list) or not all(isinstance(h, list) for h in hands):
            raise GameError("a Hearts deal record needs 'hands': a list of lists of card names")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise GameError("a deal record's seed is an integer or null")
        reserve, stock = record.get("reserve"), record.get("stock")
        for key, value in (("reserve", reserve), ("stock", stock)):
            if value is not None and not isinstance(value, list):
                raise GameError(f"a deal record's {key} is a list of card names")
        if self.table.stock_mode and stock is None:
            raise GameError("a two-player deal record needs its 'stock'")
        return self._explicit_deal(
            deal_index,
            seed,
            [[str(c) for c in h] for h in hands if isinstance(h, list)],
            None if not isinstance(reserve, list) else [str(c) for c in reserve],
            None if not isinstance(stock, list) else [str(c) for c in stock],
        )

    def match_over(self, deal_points: Sequence[Sequence[int]]) -> bool:
        fixed = self.rules.fixed_deals
        if fixed > 0:
            return len(deal_points) >= fixed
        return max(running_totals(deal_points, self.table.n)) >= self.rules.target_score


def _parse_deal_card(name: object) -> Card:
    if not isinstance(name, str):
        raise GameError(f"a card is a name such as 'QS', not {name!r}")
    card = CARD_IDS.get(name)
    if card is not None:
        return card
    try:
        return parse_card(name)
    except ValueError as exc:
        raise GameError(str(exc)) from None


def _leftover(names: Sequence[str], rest: list[Card], what: str) -> list[Card]:
    cards = [_parse_deal_card(name) for name in names]
    if sorted(cards) != rest:
        raise GameError(f"the {what} must be exactly the {len(rest)} cards no hand holds")
    return cards
