"""Jeu du Roi (``roi``): four players, ten deals of ten contracts, trumps in the last four.

RULES.md section 2 is the spec. A game is exactly ten deals, one per contract, in the order of
the ``contracts`` option (the classic order by default): six negative contracts (no tricks, no
hearts, no kings or jacks, no queens, no king of hearts, no last trick) then four trump deals
(clubs, diamonds, hearts, spades) in which every trick and every trump card taken scores.

Seats are 0..3 clockwise. The first dealer is drawn from the seed (:func:`first_dealer`), the deal
passes clockwise (the dealer of deal ``d`` is ``first_dealer + d`` mod 4) and the player left of
the dealer leads the first trick. Follow suit if able; otherwise any card, with no obligation to
trump or to overtrump. All 13 tricks are always played.

An action is a card name (``"QS"``, ``"TD"``; ``"10D"`` and lower case are accepted and recorded
as ``"TD"``). Points of a deal are negative for penalties and positive in trump deals; the final
score of each game of ten deals is their sum floored at 0, and the highest score wins.

>>> import games
>>> game = games.load("roi")
>>> state = game.new_deal(deal_index=1, seed=7)
>>> state.observation(0)["contract"]
'no-hearts'
>>> while not state.is_terminal():
...     state.apply_action(state.legal_actions()[0])
>>> sum(state.points())
-26
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import ClassVar, cast

from games.base import JSON, Action, Game, State, Trick, running_totals
from games.cards import (
    CARD_BITS,
    CARD_IDS,
    CARD_NAMES,
    CLUBS,
    DECK_SIZE,
    DIAMONDS,
    FULL_DECK,
    HEARTS,
    RANK_J,
    RANK_K,
    RANK_Q,
    SPADES,
    SUIT_MASKS,
    SUIT_NAME_TABLES,
    SUIT_NAMES,
    SUITS,
    Card,
    CardSet,
    Suit,
    card_name,
    make_card,
    mask_of,
    names_of,
    parse_card,
)
from games.dealing import DealRng, shuffled
from games.errors import GameError, IllegalActionError, LogError, OptionError
from games.options import MAX_DEALS, MAX_POINTS, option
from games.registry import register
from games.tricks import NO_TRUMP, follow_mask, winning_position

PLAYERS = 4
HAND_SIZE = 13
TRICKS_PER_DEAL = 13
DEALS_PER_GAME = 10

CONTRACT_NAMES: tuple[str, ...] = (
    "no-tricks",
    "no-hearts",
    "no-kings-or-jacks",
    "no-queens",
    "no-king-of-hearts",
    "no-last-trick",
    "trump-clubs",
    "trump-diamonds",
    "trump-hearts",
    "trump-spades",
)
CLASSIC_ORDER = ",".join(CONTRACT_NAMES)

_TRUMP_OF_CONTRACT = {
    "trump-clubs": CLUBS,
    "trump-diamonds": DIAMONDS,
    "trump-hearts": HEARTS,
    "trump-spades": SPADES,
}

KINGS_AND_JACKS: CardSet = mask_of(
    make_card(rank, suit) for suit in range(4) for rank in (RANK_J, RANK_K)
)
QUEENS: CardSet = mask_of(make_card(RANK_Q, suit) for suit in range(4))
KING_OF_HEARTS: CardSet = 1 << make_card(RANK_K, HEARTS)


@dataclasses.dataclass(frozen=True, slots=True)
class RoiRules:
    """The options of the Jeu du Roi (every one documented; see docs/rules.md)."""

    players: int = option(
        PLAYERS,
        choices=(PLAYERS,),
        doc="Number of players: the Jeu du Roi is for exactly 4 (declared, not variable).",
    )
    contracts: str = option(
        CLASSIC_ORDER,
        doc="The ten contracts of a game, comma-separated, in the order they are played "
        "(deal d plays contract d mod 10). Must name each of no-tricks, no-hearts, "
        "no-kings-or-jacks, no-queens, no-king-of-hearts, no-last-trick, trump-clubs, "
        "trump-diamonds, trump-hearts, trump-spades exactly once.",
    )
    fixed_deals: int = option(
        0,
        minimum=0,
        maximum=MAX_DEALS,
        doc="0: a match is one game of exactly 10 deals. N > 0 (a multiple of 10): a match "
        "of N deals, N/10 consecutive games; the dealer keeps rotating across games and each "
        "game is floored separately.",
    )
    floor_at_zero: bool = option(
        True,
        doc="Floor each game's final score (positive points minus penalties over its 10 "
        "deals) at 0, as the source text does.",
    )
    trick_penalty: int = option(
        2,
        minimum=0,
        maximum=MAX_POINTS,
        doc="no-tricks: points lost for each trick taken (2: -26 per deal in all).",
    )
    heart_penalty: int = option(
        2,
        minimum=0,
        maximum=MAX_POINTS,
        doc="no-hearts: points lost for each heart taken (2: -26 per deal in all).",
    )
    king_jack_penalty: int = option(
        6,
        minimum=0,
        maximum=MAX_POINTS,
        doc="no-kings-or-jacks: points lost for each king or jack taken (6: -48 per deal in all).",
    )
    queen_penalty: int = option(
        10,
        minimum=0,
        maximum=MAX_POINTS,
        doc="no-queens: points lost for each queen taken (10: -40 per deal in all).",
    )
    king_of_hearts_penalty: int = option(
        40, minimum=0, maximum=MAX_POINTS, doc="no-king-of-hearts: points lost for taking KH."
    )
    last_trick_penalty: int = option(
        20,
        minimum=0,
        maximum=MAX_POINTS,
        doc="no-last-trick: points lost for taking the 13th (last) trick.",
    )
    trump_trick_points: int = option(
        4,
        minimum=0,
        maximum=MAX_POINTS,
        doc="Trump deals: points won for each trick taken (4: 52 per deal in all).",
    )
    trump_card_points: int = option(
        1,
        minimum=0,
        maximum=MAX_POINTS,
        doc="Trump deals: points won for each trump card in the tricks taken (1: 13 per deal).",
    )

    def __post_init__(self) -> None:
        names = self.contracts.split(",")
        if sorted(names) != sorted(CONTRACT_NAMES):
            raise OptionError(
                f"option 'contracts' of roi must name each of {CLASSIC_ORDER} exactly once, "
                f"comma-separated, not {self.contracts!r}",
                option="contracts",
            )
        if self.fixed_deals % DEALS_PER_GAME:
            raise OptionError(
                f"option 'fixed_deals' of roi must be 0 or a multiple of {DEALS_PER_GAME} "
                f"(whole games of 10 deals), not {self.fixed_deals!r}",
                option="fixed_deals",
            )


@dataclasses.dataclass(frozen=True, slots=True)
class Contract:
    """How one deal scores: ``per_trick`` for each trick taken, ``per_card`` for each card of
    ``cards`` taken, ``last_trick`` more for the 13th trick; ``trump`` is NO_TRUMP or a suit.

    >>> contract = contract_named("no-queens", RoiRules())
    >>> contract.per_card, contract.total
    (-10, -40)
    """

    name: str
    trump: Suit
    per_trick: int
    per_card: int
    cards: CardSet
    last_trick: int
    values: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # values[card]: what taking that card scores (per_card for the scoring cards, else 0).
        values = tuple(self.per_card if self.cards >> c & 1 else 0 for c in range(DECK_SIZE))
        object.__setattr__(self, "values", values)

    @property
    def trump_name(self) -> str | None:
        """The trump suit's letter (``"H"``), or None in a deal without trumps."""
        return None if self.trump == NO_TRUMP else SUITS[self.trump]

    @property
    def total(self) -> int:
        """The points of a whole deal, all seats together."""
        return (
            TRICKS_PER_DEAL * self.per_trick
            + self.cards.bit_count() * self.per_card
            + self.last_trick
        )

    def trick_points(self, cards: CardSet, number: int) -> int:
        """The points of trick ``number`` (0..12) holding ``cards``."""
        points = self.per_trick + self.per_card * (cards & self.cards).bit_count()
        if number == TRICKS_PER_DEAL - 1:
            points += self.last_trick
        return points


def contract_named(name: str, rules: RoiRules) -> Contract:
    """The contract of that name with the scores of ``rules``."""
    if name == "no-tricks":
        return Contract(name, NO_TRUMP, -rules.trick_penalty, 0, 0, 0)
    if name == "no-hearts":
        return Contract(name, NO_TRUMP, 0, -rules.heart_penalty, SUIT_MASKS[HEARTS], 0)
    if name == "no-kings-or-jacks":
        return Contract(name, NO_TRUMP, 0, -rules.king_jack_penalty, KINGS_AND_JACKS, 0)
    if name == "no-queens":
        return Contract(name, NO_TRUMP, 0, -rules.queen_penalty, QUEENS, 0)
    if name == "no-king-of-hearts":
        return Contract(name, NO_TRUMP, 0, -rules.king_of_hearts_penalty, KING_OF_HEARTS, 0)
    if name == "no-last-trick":
        return Contract(name, NO_TRUMP, 0, 0, 0, -rules.last_trick_penalty)
    trump = _TRUMP_OF_CONTRACT[name]
    return Contract(
        name,
        trump,
        rules.trump_trick_points,
        rules.trump_card_points,
        SUIT_MASKS[trump],
        0,
    )


def first_dealer(seed: int) -> int:
    """The first dealer of a match: ``DealRng(seed, 0, "dealer").below(4)``.

    >>> first_dealer(7) in range(4)
    True
    """
    return DealRng(seed, 0, "dealer").below(PLAYERS)


class Phase(enum.IntEnum):
    """The phases of a deal. The Jeu du Roi has neither bidding nor passing: every decision
    is a card of the PLAY phase (:meth:`RoiState.legal_actions` and
    :meth:`RoiState.apply_action`) until the 13th trick ends the deal (OVER: no action)."""

    PLAY = 0
    OVER = 1


def _card_of_action(action: Action) -> Card:
    if isinstance(action, str):
        try:
            return parse_card(action)
        except ValueError as exc:
            raise IllegalActionError(str(exc)) from None
    raise IllegalActionError(f"play one card: a card name such as 'QS' or 'TD', not {action!r}")


class RoiState(State):
    """One deal of the Jeu du Roi."""

    __slots__ = (
        "_contract",
        "_dealer",
        "_hands",
        "_leader",
        "_led",
        "_player",
        "_points",
        "_seed",
        "_start",
        "_trick",
        "_tricks",
        "_trump",
    )

    def __init__(
        self,
        game: RoiGame,
        deal_index: int,
        *,
        seed: int | None,
        dealer: int,
        hands: Sequence[CardSet],
    ) -> None:
        self.game: RoiGame = game
        self.deal_index = deal_index
        self._seed = seed
        self._dealer = dealer
        self._contract = game.contract_of(deal_index)
        self._trump = self._contract.trump
        self._start: tuple[CardSet, ...] = tuple(hands)
        self._hands: list[CardSet] = list(hands)
        leader = (dealer + 1) % PLAYERS
        self._leader = leader
        self._player = leader
        self._led: Suit = NO_TRUMP
        self._trick: list[Card] = []
        # Finished tricks as (leader, cards in play order, winner, points).
        self._tricks: list[tuple[int, tuple[Card, ...], int, int]] = []
        self._points = [0] * PLAYERS

    # -- what the deal is -------------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        return Phase.OVER if self._player < 0 else Phase.PLAY

    @property
    def contract(self) -> Contract:
        return self._contract

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def seed(self) -> int | None:
        return self._seed

    def hand(self, seat: int) -> list[str]:
        """The sorted names of the cards ``seat`` holds now."""
        return names_of(self._hands[seat])

    # -- playing ------------------------------------------------------------------------------

    def current_player(self) -> int:
        return self._player

    def is_terminal(self) -> bool:
        return self._player < 0

    def legal_mask(self) -> CardSet:
        """The legal cards of the seat to act as a set (0 when the deal is over)."""
        if self._player < 0:
            return 0
        return follow_mask(self._hands[self._player], self._led)

    def legal_actions(self) -> list[Action]:
        player = self._player
        if player < 0:
            return []
        hand = self._hands[player]
        led = self._led
        if led >= 0:
            ranks = (hand >> (13 * led)) & 0x1FFF
            if ranks:
                return list(SUIT_NAME_TABLES[led][ranks])
        return cast("list[Action]", names_of(hand))

    def apply_action(self, action: Action) -> None:
        player = self._player
        if player < 0:
            raise IllegalActionError("the deal is over: no more cards can be played")
        try:
            card = CARD_IDS[action]  # type: ignore[index]
        except (KeyError, TypeError):
            card = _card_of_action(action)
        bit = 1 << card
        hand = self._hands[player]
        if not hand & bit:
            raise IllegalActionError(f"you do not hold {CARD_NAMES[card]}")
        led = self._led
        if led < 0:
            self._led = card // 13
        elif card // 13 != led and hand & SUIT_MASKS[led]:
            raise IllegalActionError(f"you must follow {SUIT_NAMES[led]}")
        self._hands[player] = hand ^ bit
        trick = self._trick
        trick.append(card)
        if len(trick) < PLAYERS:
            self._player = (player + 1) & 3
        else:
            self._finish_trick(trick)

    def apply_card(self, card: Card) -> None:
        """Play card id ``card`` (0..51) for the seat to act: apply_action for the int form of
        an action (see :meth:`legal_mask`), checked the same way."""
        if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < DECK_SIZE:
            raise IllegalActionError(f"a card id is an integer from 0 to 51, not {card!r}")
        self.apply_action(CARD_NAMES[card])

    def _finish_trick(self, trick: list[Card]) -> None:
        leader = self._leader
        winner = (leader + winning_position(trick, self._trump)) & 3
        number = len(self._tricks)
        values = self._contract.values
        points = values[trick[0]] + values[trick[1]] + values[trick[2]] + values[trick[3]]
        points += self._contract.per_trick
        if number == TRICKS_PER_DEAL - 1:
            points += self._contract.last_trick
            self._player = -1
        else:
            self._player = winner
        self._points[winner] += points
        self._tricks.append((leader, tuple(trick), winner, points))
        trick.clear()
        self._led = NO_TRUMP
        self._leader = winner

    # -- reading ------------------------------------------------------------------------------

    def points(self) -> list[int]:
        return list(self._points)

    def tricks_taken(self) -> list[int]:
        """How many tricks each seat has taken so far."""
        taken = [0] * PLAYERS
        for _, _, winner, _ in self._tricks:
            taken[winner] += 1
        return taken

    def tricks(self) -> list[Trick]:
        return [
            Trick(leader, tuple(CARD_NAMES[c] for c in cards), winner, points)
            for leader, cards, winner, points in self._tricks
        ]

    def history(self) -> list[tuple[int, Action]]:
        # Every play is in a trick, and the seats of a trick follow its leader clockwise.
        plays: list[tuple[int, Action]] = []
        for leader, cards, _, _ in self._tricks:
            plays.extend(((leader + i) & 3, CARD_NAMES[c]) for i, c in enumerate(cards))
        leader = self._leader
        plays.extend(((leader + i) & 3, CARD_NAMES[c]) for i, c in enumerate(self._trick))
        return plays

    def observation(self, seat: int) -> dict[str, JSON]:
        """What ``seat`` may know now, JSON-safe: the contract (and the trump suit in trump
        deals), the dealer, its own hand, every hand's size, the trick in progress, every
        finished trick with its points, the points and tricks taken so far per seat, the seat
        to act; and the deal's points once it is over. Never another seat's cards."""
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < PLAYERS:
            raise ValueError(f"no seat {seat!r} at a {PLAYERS}-player table")
        contract = self._contract
        trump = contract.trump_name
        player = self._player
        obs: dict[str, JSON] = {
            "game": "roi",
            "seat": seat,
            "players": PLAYERS,
            "deal_index": self.deal_index,
            "phase": self.phase.name.lower(),
            "to_act": player,
            "dealer": self._dealer,
            "contract": contract.name,
            "contract_number": self.deal_index % DEALS_PER_GAME + 1,
            "trump": trump,
            "trump_suit": None if trump is None else SUIT_NAMES[contract.trump],
            "hand": list[JSON](names_of(self._hands[seat])),
            "hand_sizes": [hand.bit_count() for hand in self._hands],
            "trick": {
                "leader": self._leader if player >= 0 else None,
                "cards": [CARD_NAMES[c] for c in self._trick],
            },
            "tricks": [t.as_json() for t in self.tricks()],
            "tricks_taken": list[JSON](self.tricks_taken()),
            "points_taken": list[JSON](self._points),
        }
        if player < 0:
            obs["points"] = list[JSON](self._points)
        return obs

    def deal_record(self) -> dict[str, JSON]:
        return {
            "seed": self._seed,
            "dealer": self._dealer,
            "hands": [list[JSON](names_of(hand)) for hand in self._start],
        }

    def summary(self) -> dict[str, JSON]:
        return {
            "contract": self._contract.name,
            "trump": self._contract.trump_name,
            "dealer": self._dealer,
            "points": list[JSON](self._points),
            "tricks": [t.as_json() for t in self.tricks()],
        }

    def clone(self) -> RoiState:
        other = object.__new__(RoiState)
        other.game = self.game
        other.deal_index = self.deal_index
        other._seed = self._seed
        other._dealer = self._dealer
        other._contract = self._contract
        other._trump = self._trump
        other._start = self._start
        other._hands = list(self._hands)
        other._leader = self._leader
        other._player = self._player
        other._led = self._led
        other._trick = list(self._trick)
        other._tricks = list(self._tricks)
        other._points = list(self._points)
        return other

    def __repr__(self) -> str:
        return (
            f"<RoiState deal {self.deal_index} {self._contract.name} dealer {self._dealer} "
            f"trick {len(self._tricks) + 1} to act {self._player}>"
        )


def _parse_hands(hands: object) -> list[CardSet]:
    if not isinstance(hands, list | tuple) or len(hands) != PLAYERS:
        raise GameError(f"roi needs {PLAYERS} hands of {HAND_SIZE} cards")
    masks: list[CardSet] = []
    seen: CardSet = 0
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list | tuple) or len(hand) != HAND_SIZE:
            raise GameError(f"hand {seat} must be a list of {HAND_SIZE} card names")
        mask = 0
        for name in hand:
            try:
                card = parse_card(name)
            except ValueError as exc:
                raise GameError(f"hand {seat}: {exc}") from None
            if (seen | mask) >> card & 1:
                raise GameError(f"{card_name(card)} is dealt twice")
            mask |= 1 << card
        masks.append(mask)
        seen |= mask
    assert seen == FULL_DECK  # 52 distinct cards
    return masks


@register
class RoiGame(Game[RoiRules]):
    """The Jeu du Roi with fixed rules; ``games.load("roi")``."""

    name: ClassVar[str] = "roi"
    title: ClassVar[str] = "Jeu du Roi"
    rules_type: ClassVar[type] = RoiRules
    presets: ClassVar[Mapping[str, Mapping[str, object]]] = {"classic": {}}
    preset_docs: ClassVar[Mapping[str, str]] = {
        "classic": "Jeu du Roi as RULES.md: 4 players, one game of 10 deals in the classic "
        "contract order, scores floored at 0, highest wins."
    }
    default_preset: ClassVar[str] = "classic"
    lower_is_better: ClassVar[bool] = False
    deals_multiple: ClassVar[int] = DEALS_PER_GAME

    def __init__(self, rules: RoiRules, preset: str) -> None:
        super().__init__(rules, preset)
        self.contracts: tuple[Contract, ...] = tuple(
            contract_named(name, rules) for name in rules.contracts.split(",")
        )
        self.deals_per_match = rules.fixed_deals or DEALS_PER_GAME
        self._first_dealer: tuple[int, int] = (-1, 0)  # (seed, its first dealer) cache

    @property
    def players(self) -> int:
        return PLAYERS

    @property
    def decisions_per_deal(self) -> int:
        """Exact: every deal is 13 tricks of one card per seat."""
        return TRICKS_PER_DEAL * PLAYERS

    def contract_of(self, deal_index: int) -> Contract:
        """The contract of deal ``deal_index`` (its index mod 10 in the contract order)."""
        return self.contracts[deal_index % DEALS_PER_GAME]

    def dealer_of(self, deal_index: int, seed: int | None) -> int:
        """The dealer of a deal: the seed's first dealer plus the deal index, mod 4 (seat
        0 deals first when there is no seed)."""
        if seed is None:
            return deal_index % PLAYERS
        cached_seed, first = self._first_dealer
        if cached_seed != seed:
            first = first_dealer(seed)
            self._first_dealer = (seed, first)
        return (first + deal_index) % PLAYERS

    def new_deal(
        self,
        deal_index: int = 0,
        seed: int | None = None,
        hands: Sequence[Sequence[str]] | None = None,
        *,
        dealer: int | None = None,
    ) -> RoiState:
        """A deal from (seed, deal_index): the dealer from :meth:`dealer_of`, the shuffled deck
        dealt one card at a time to seats 0 to 3 (docs/dealing.md). Or from explicit ``hands``
        (13 names per seat) and ``dealer`` (default: ``deal_index`` mod 4), recorded with a
        null seed."""
        if isinstance(deal_index, bool) or not isinstance(deal_index, int) or deal_index < 0:
            raise GameError(f"a deal index is a non-negative integer, not {deal_index!r}")
        if hands is not None:
            if seed is not None:
                raise GameError("give a seed or explicit hands, not both")
            if dealer is None:
                dealer = deal_index % PLAYERS
            elif isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < 4:
                raise GameError(f"the dealer is a seat from 0 to {PLAYERS - 1}, not {dealer!r}")
            return RoiState(self, deal_index, seed=None, dealer=dealer, hands=_parse_hands(hands))
        if seed is None:
            raise GameError("a deal needs a seed or explicit hands")
        if dealer is not None:
            raise GameError("a seeded deal's dealer comes from the seed: give hands with a dealer")
        dealer = self.dealer_of(deal_index, seed)
        order = shuffled(DECK_SIZE, seed=seed, deal_index=deal_index)
        # docs/dealing.md: deck[p] goes to seat p mod 4, one card at a time, as in every game.
        # The cards are distinct, so the sum of their bits is their set.
        masks = [sum(map(CARD_BITS.__getitem__, order[seat::PLAYERS])) for seat in range(PLAYERS)]
        return RoiState(self, deal_index, seed=seed, dealer=dealer, hands=masks)

    def deal_from_record(self, deal_index: int, record: Mapping[str, JSON]) -> RoiState:
        seed = record.get("seed")
        dealer = record.get("dealer")
        hands = record.get("hands")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise LogError(f"a roi deal record's seed is null or an integer, not {seed!r}")
        if isinstance(dealer, bool) or not isinstance(dealer, int):
            raise LogError("a roi deal record needs the dealer's seat")
        state = self.new_deal(deal_index, hands=_record_hands(hands), dealer=dealer)
        state._seed = seed
        return state

    def match_over(self, deal_points: Sequence[Sequence[int]]) -> bool:
        return len(deal_points) >= self.deals_per_match

    def match_scores(self, deal_points: Sequence[Sequence[int]]) -> list[int]:
        """Each game of 10 deals: its positive points minus its penalties, floored at 0 when
        ``floor_at_zero``; a match of several games adds up the games' scores."""
        scores = [0] * PLAYERS
        for start in range(0, len(deal_points), DEALS_PER_GAME):
            game = running_totals(deal_points[start : start + DEALS_PER_GAME], PLAYERS)
            for seat in range(PLAYERS):
                scores[seat] += max(game[seat], 0) if self.rules.floor_at_zero else game[seat]
        return scores


def _record_hands(hands: JSON) -> list[list[str]]:
    if not isinstance(hands, list) or not all(
        isinstance(hand, list) and all(isinstance(name, str) for name in hand) for hand in hands
    ):
        raise LogError("a roi deal record needs the hands as lists of card names")
    return [
        [name for name in hand if isinstance(name, str)] for hand in hands if isinstance(hand, list)
    ]
