"""Pieces shared by the trick-taking games (Hearts family, Jeu du Roi)."""

from __future__ import annotations

from collections.abc import Sequence

from games.cards import SUIT_MASKS, Card, CardSet, Suit

NO_TRUMP = -1


def follow_mask(hand: CardSet, led: Suit) -> CardSet:
    """The cards of ``hand`` that obey "follow suit if able" when ``led`` was led
    (``led`` < 0 when leading: every card)."""
    if led < 0:
        return hand
    same = hand & SUIT_MASKS[led]
    return same if same else hand


def winning_position(cards: Sequence[Card], trump: Suit = NO_TRUMP) -> int:
    """The position (0 = the lead) of the card that wins a trick: the highest trump if any
    was played, else the highest card of the suit led.

    >>> from games.cards import parse_card as c
    >>> winning_position([c("5H"), c("KH"), c("AS"), c("2H")])
    1
    >>> winning_position([c("5H"), c("KH"), c("2S"), c("2H")], trump=3)
    2
    """
    # The best card so far is always of the suit led or a trump, so a card beats it when it
    # is higher in the same suit, or the first trump over a card of the suit led.
    best = 0
    best_card = cards[0]
    for position in range(1, len(cards)):
        card = cards[position]
        suit = card // 13
        if suit == best_card // 13:
            if card > best_card:
                best, best_card = position, card
        elif suit == trump:
            best, best_card = position, card
    return best
