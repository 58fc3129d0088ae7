"""Cards as plain ints and sets of cards as bitmasks.

A card is ``suit * 13 + rank`` with ranks ``2 3 4 5 6 7 8 9 T J Q K A`` numbered 0 to 12 and
suits ``C D H S`` numbered 0 to 3, so sorting card ids sorts by suit then rank: that is the
order of every sorted list of cards the engine returns. A set of cards is an int whose bit
``c`` is set when card ``c`` is in the set.

>>> card_name(parse_card("10h"))
'TH'
>>> [card_name(c) for c in cards_of(mask_of([parse_card("QS"), parse_card("2C")]))]
['2C', 'QS']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, TypeAlias

Card: TypeAlias = int
CardSet: TypeAlias = int
Suit: TypeAlias = int
Rank: TypeAlias = int

# Final: compiled by mypyc (games/_native.py), these are C constants, not dict lookups.
RANKS: Final = "23456789TJQKA"
SUITS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
DECK_SIZE: Final = 52

RANK_2: Final = 0
RANK_T: Final = 8
RANK_J: Final = 9
RANK_Q: Final = 10
RANK_K: Final = 11
RANK_A: Final = 12

FULL_DECK: Final[CardSet] = (1 << DECK_SIZE) - 1
SUIT_MASKS: Final[tuple[CardSet, ...]] = tuple(0x1FFF << (13 * s) for s in range(4))


def make_card(rank: Rank, suit: Suit) -> Card:
    """The card of that rank and suit.

    >>> card_name(make_card(RANK_Q, SPADES))
    'QS'
    """
    return suit * 13 + rank


def suit_of(card: Card) -> Suit:
    return card // 13


def rank_of(card: Card) -> Rank:
    return card % 13


def card_name(card: Card) -> str:
    """The two-letter name of a card, rank then suit.

    >>> card_name(0), card_name(51)
    ('2C', 'AS')
    """
    if not 0 <= card < DECK_SIZE:
        raise ValueError(f"not a card id: {card!r}")
    return RANKS[card % 13] + SUITS[card // 13]


def parse_card(name: object) -> Card:
    """Parse a card name such as ``"QS"``, ``"TD"`` or ``"10D"`` (case does not matter); anything
    else raises ValueError (typed ``object``: compiled, a ``str`` parameter would raise
    TypeError before the check).

    >>> parse_card("2C"), parse_card("AS"), parse_card("10d") == parse_card("TD")
    (0, 51, True)
    """
    if not isinstance(name, str):
        raise ValueError(f"a card is a string like 'QS', not {type(name).__name__}")
    text = name.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise ValueError(f"not a card: {name!r} (write rank then suit, e.g. 'QS', 'TD' or '10D')")
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def mask_of(cards: Iterable[Card]) -> CardSet:
    """The set holding these cards."""
    result = 0
    for card in cards:
        result |= 1 << card
    return result


def cards_of(cards: CardSet) -> Iterator[Card]:
    """The cards of a set, in ascending order."""
    while cards:
        low = cards & -cards
        yield low.bit_length() - 1
        cards ^= low


#: The name of every card id: ``CARD_NAMES[c] == card_name(c)``.
CARD_NAMES: Final[tuple[str, ...]] = tuple(RANKS[c % 13] + SUITS[c // 13] for c in range(DECK_SIZE))
#: The set of each single card: ``CARD_BITS[c] == 1 << c``.
CARD_BITS: Final[tuple[CardSet, ...]] = tuple(1 << c for c in range(DECK_SIZE))


def _card_ids() -> dict[str, Card]:
    ids: dict[str, Card] = {}
    for card, name in enumerate(CARD_NAMES):
        rank, suit = name[0], name[1]
        for r in (rank, rank.lower(), *(["10"] if rank == "T" else [])):
            for s in (suit, suit.lower()):
                ids[r + s] = card
    return ids


#: The card of every spelling :func:`parse_card` accepts without surrounding spaces (``"QS"``,
#: ``"qs"``, ``"10D"``...): the engines check an action with one lookup, and only what is not
#: here goes to parse_card for its error message.
CARD_IDS: Final[dict[str, Card]] = _card_ids()


def _suit_name_tables() -> tuple[tuple[tuple[str, ...], ...], ...]:
    """Per suit, a table from a 13-bit rank mask to the sorted names of those cards."""
    tables = []
    for suit in range(4):
        table: list[tuple[str, ...]] = [()] * 8192
        for bits in range(1, 8192):
            low = bits & -bits
            table[bits] = (CARD_NAMES[suit * 13 + low.bit_length() - 1], *table[bits ^ low])
        tables.append(tuple(table))
    return tuple(tables)


#: ``SUIT_NAME_TABLES[suit][ranks]``: the sorted names of the cards of that suit whose ranks are
#: the bits of the 13-bit mask ``ranks``, so that the names of a hand are four lookups (the
#: engines' hot path: the legal cards when following suit are one).
SUIT_NAME_TABLES: Final[tuple[tuple[tuple[str, ...], ...], ...]] = _suit_name_tables()
_CLUB_NAMES: Final = SUIT_NAME_TABLES[CLUBS]
_DIAMOND_NAMES: Final = SUIT_NAME_TABLES[DIAMONDS]
_HEART_NAMES: Final = SUIT_NAME_TABLES[HEARTS]
_SPADE_NAMES: Final = SUIT_NAME_TABLES[SPADES]


def names_of(cards: CardSet) -> list[str]:
    """The sorted names of the cards of a set (table driven: every engine lists hands, legal
    cards and records through it).

    >>> names_of((1 << 49) | 1 | (1 << 26))
    ['2C', '2H', 'QS']
    """
    return [
        *_CLUB_NAMES[cards & 0x1FFF],
        *_DIAMOND_NAMES[(cards >> 13) & 0x1FFF],
        *_HEART_NAMES[(cards >> 26) & 0x1FFF],
        *_SPADE_NAMES[cards >> 39],
    ]


def lowest(cards: CardSet) -> Card:
    """The lowest card id of a non-empty set."""
    return (cards & -cards).bit_length() - 1


def highest(cards: CardSet) -> Card:
    """The highest card id of a non-empty set."""
    return cards.bit_length() - 1
