"""The int fast path of the Hearts engine: whole random playouts on bitmasks, for simulations
(Monte Carlo bots, benchmarks). Same rules as :class:`games.hearts.HeartsState` (the test suite
replays fast playouts through the checked API), none of its names or checks.

>>> import random, games
>>> from games.hearts_fast import random_playout
>>> state = games.load("hearts").new_deal(3, seed=1)
>>> points = random_playout(state, random.Random(0))
>>> sum(points) in (26, 78)          # 26 points, or 3 x 26 after a moon
True
>>> state.is_terminal()              # the state itself is untouched
False

Randomness comes in one batch of 32-bit words per deal, drawn with ``rng.getrandbits``: the
deal is a Fisher-Yates shuffle that swaps card i with card ``word % (i + 1)``, and the play
picks among k cards by ``word % k`` (a bias below 2**-26: plenty for simulations; compiled,
32-bit words are machine ints). Passes draw with ``rng.random``. The authoritative,
reproducible deals stay in games.dealing.

How it is fast: the first trick and any trick already under way are played by a careful loop
that knows every first-trick rule; every later trick is played by a tight loop that tracks the
winner as the cards fall, picks a follower's card straight from a rank table of its hand in
the suit led, and keeps each seat's taken cards as one bitmask, scored once at the end (as the
state does).
"""

from __future__ import annotations

import random as _random
import struct
from collections.abc import Callable
from typing import Final, cast

from games.cards import DECK_SIZE, SUIT_MASKS, Card, CardSet
from games.hearts import (
    PENALTY_CARDS,
    HeartsGame,
    HeartsState,
    Phase,
    PlayRules,
    exchange,
    first_lead,
)


def _rank_table() -> tuple[tuple[int, ...], ...]:
    table: list[tuple[int, ...]] = [()] * 8192
    for bits in range(1, 8192):
        low = bits & -bits
        table[bits] = (low.bit_length() - 1, *table[bits ^ low])
    return tuple(table)


#: A 13-bit rank mask -> its ranks in ascending order.
RANKS_OF: Final[tuple[tuple[int, ...], ...]] = _rank_table()
_COUNTS: Final[tuple[int, ...]] = tuple(len(ranks) for ranks in RANKS_OF)
_DECK: Final[tuple[Card, ...]] = tuple(range(DECK_SIZE))
#: Players -> leader -> the other seats in playing order.
_FOLLOWERS: Final[dict[int, tuple[tuple[int, ...], ...]]] = {
    n: tuple(tuple((leader + k) % n for k in range(1, n)) for leader in range(n))
    for n in range(2, 7)
}


#: Random 32-bit words for a shuffle (one per swap) and for a playout (one per card played is
#: the most it may need).
SHUFFLE_WORDS: Final = DECK_SIZE - 1
PLAY_WORDS: Final = DECK_SIZE
_UNPACK: Final[dict[int, Callable[[bytes], tuple[object, ...]]]] = {
    count: struct.Struct(f">{count}I").unpack
    for count in (SHUFFLE_WORDS, PLAY_WORDS, SHUFFLE_WORDS + PLAY_WORDS)
}


def _words(rng: _random.Random, count: int) -> tuple[int, ...]:
    """``count`` random 32-bit words, drawn in one call."""
    data = rng.getrandbits(32 * count).to_bytes(4 * count, "big")
    return cast("tuple[int, ...]", _UNPACK[count](data))


def random_card(cards: CardSet, random: Callable[[], float]) -> Card:
    """A uniformly random card of a non-empty set.

    >>> random_card(0b100, _random.Random(1).random)
    2
    """
    k = int(random() * cards.bit_count())
    while k:
        cards &= cards - 1
        k -= 1
    return (cards & -cards).bit_length() - 1


def random_subset(cards: CardSet, count: int, random: Callable[[], float]) -> CardSet:
    """A uniformly random subset of ``count`` cards of a set that holds at least that many."""
    chosen = 0
    for _ in range(count):
        chosen |= 1 << random_card(cards & ~chosen, random)
    return chosen


def random_deal(game: HeartsGame, deal_index: int, rng: _random.Random) -> HeartsState:
    """A deal drawn from ``rng`` (not from a seed: for simulations only)."""
    hands, leftover = _deal(game.table, _words(rng, SHUFFLE_WORDS))
    return HeartsState(game, deal_index, None, hands, leftover)


class _Deal:
    """The mutable playout state, as plain attributes (only the careful loop uses it)."""

    __slots__ = (
        "broken",
        "game",
        "hands",
        "lead",
        "leader",
        "pos",
        "reserve",
        "seat",
        "stock",
        "stock_pos",
        "tmask",
        "trick",
        "trick_no",
        "won",
        "words",
    )

    def __init__(
        self,
        game: PlayRules,
        hands: list[CardSet],
        trick: list[Card],
        tmask: CardSet,
        leader: int,
        seat: int,
        trick_no: int,
        broken: bool,
        lead: CardSet,
        reserve: CardSet,
        stock: tuple[Card, ...],
        stock_pos: int,
        won: list[CardSet],
        words: tuple[int, ...],
        pos: int,
    ) -> None:
        self.game = game
        self.hands = hands
        self.trick = trick
        self.tmask = tmask
        self.leader = leader
        self.seat = seat
        self.trick_no = trick_no
        self.broken = broken
        self.lead = lead
        self.reserve = reserve
        self.stock = stock
        self.stock_pos = stock_pos
        self.won = won
        self.words = words  # random 32-bit words, the next one at ``pos``
        self.pos = pos


def random_playout(
    state: HeartsState, rng: _random.Random, trace: list[int] | None = None
) -> list[int]:
    """Finish a copy of ``state`` with uniformly random legal actions; its final points.

    With ``trace``, every action taken is appended to it as an int: a pass as the bitmask of
    the cards passed, a play as the card id (replayable with ``apply_pass_mask`` and
    ``apply_card``).
    """
    random = rng.random
    if state.phase is Phase.PASS:
        state = state.clone()
        count = state._t.pass_count
        while state.phase is Phase.PASS:
            cards = random_subset(state.hand(state.current_player()), count, random)
            if trace is not None:
                trace.append(cards)
            state._pass_cards(cards)
    if state.phase is Phase.OVER:
        return state.points()
    deal = _Deal(
        state._t,
        list(state._hands),
        state.trick_cards(),
        sum(state._trick),
        state._trick_leader,
        state._current,
        state._trick_no,
        state._broken,
        state._first_lead,
        state._reserve,
        state._stock,
        state._stock_pos,
        list(state._won),
        _words(rng, PLAY_WORDS),
        0,
    )
    return _play_out(deal, trace)


def random_deal_points(game: HeartsGame, deal_index: int, rng: _random.Random) -> list[int]:
    """Deal at random, pass at random (if the deal has a pass), play at random: the points.
    The fastest way through a whole deal (bench/engine.py measures it)."""
    random = rng.random
    table = game.table
    words = _words(rng, SHUFFLE_WORDS + PLAY_WORDS)
    hands, leftover = _deal(table, words)
    offset = table.pass_offset(deal_index)
    if offset:
        count = table.pass_count
        passes = [random_subset(hand, count, random) for hand in hands]
        hands = exchange(hands, passes, offset)
    leader, lead = first_lead(table, hands, deal_index)
    stock_mode = table.stock_mode
    reserve = 0
    if not stock_mode:
        for card in leftover:
            reserve |= 1 << card
    n = table.n
    deal = _Deal(
        table,
        hands,
        [],
        0,
        leader,
        leader,
        0,
        False,
        lead,
        reserve,
        tuple(leftover) if stock_mode else (),
        0,
        [0] * n,
        words,
        SHUFFLE_WORDS,
    )
    return _play_out(deal, None)


def _deal(table: PlayRules, words: tuple[int, ...]) -> tuple[list[CardSet], list[Card]]:
    """The hands and left-overs of a deck shuffled with the first SHUFFLE_WORDS words."""
    deck = list(_DECK)
    i = DECK_SIZE - 1
    for k in range(SHUFFLE_WORDS):
        j = words[k] % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
        i -= 1
    return table.deal(deck)


def _play_out(deal: _Deal, trace: list[int] | None) -> list[int]:
    game = deal.game
    # The careful loop finishes a trick under way (then the tight loop takes over).
    while deal.trick:
        _careful_card(deal, trace)
        if deal.trick_no == game.tricks_per_deal:
            return game.score(deal.won)
    return _fast_tricks(deal, trace)


def _careful_card(deal: _Deal, trace: list[int] | None) -> None:
    """One card by the full rules (HeartsState._legal_play, _play and _end_trick)."""
    game = deal.game
    n = game.n
    trick = deal.trick
    seat = deal.seat
    hand = deal.hands[seat]
    if trick:
        legal = hand & SUIT_MASKS[trick[0] // 13]
        if not legal:
            legal = (
                hand & ~PENALTY_CARDS or hand
                if deal.trick_no == 0 and game.no_first_points
                else hand
            )
    elif deal.trick_no == 0:
        legal = deal.lead
    elif deal.broken or not game.forbid_mask:
        legal = hand
    else:
        legal = hand & ~game.forbid_mask or hand
    k = deal.words[deal.pos] % legal.bit_count()
    deal.pos += 1
    while k:
        legal &= legal - 1
        k -= 1
    card = (legal & -legal).bit_length() - 1
    if trace is not None:
        trace.append(card)
    bit = 1 << card
    deal.hands[seat] = hand ^ bit
    deal.tmask |= bit
    trick.append(card)
    deal.seat = seat + 1 if seat + 1 < n else 0
    if len(trick) < n:
        return
    tmask = deal.tmask
    led_cards = SUIT_MASKS[trick[0] // 13]
    winner = (deal.leader + trick.index((tmask & led_cards).bit_length() - 1)) % n
    if not deal.broken and (tmask & game.play_breaks or tmask & ~led_cards & game.discard_breaks):
        deal.broken = True
    deal.won[winner] |= tmask | deal.reserve if deal.trick_no == 0 else tmask
    deal.trick_no += 1
    _draw(deal, winner)
    deal.trick = []
    deal.tmask = 0
    deal.leader = deal.seat = winner


def _draw(deal: _Deal, winner: int) -> None:
    stock = deal.stock
    pos = deal.stock_pos
    if pos < len(stock):
        n = deal.game.n
        for k in range(n):
            deal.hands[(winner + k) % n] |= 1 << stock[pos + k]
        deal.stock_pos = pos + n


def _fast_tricks(deal: _Deal, trace: list[int] | None) -> list[int]:
    """Every remaining trick, from a trick boundary. The first trick's own rules (its fixed
    lead, no points when discarding) only cost anything in the lead and discard branches."""
    game = deal.game
    n = game.n
    hands = deal.hands
    forbid = game.forbid_mask
    play_breaks = game.play_breaks
    discard_breaks = game.discard_breaks
    broken = deal.broken or not forbid
    stock = deal.stock
    stock_pos = deal.stock_pos
    stock_len = len(stock)
    ranks_of = RANKS_OF
    counts = _COUNTS
    suit_masks = SUIT_MASKS
    followers = _FOLLOWERS[n]
    won = deal.won
    words = deal.words
    w = deal.pos
    leader = deal.leader
    first = deal.trick_no == 0
    no_first_points = first and game.no_first_points
    for _ in range(deal.trick_no, game.tricks_per_deal):
        if trace is not None:
            before = list(hands)
        hand = hands[leader]
        legal = deal.lead if first else (hand if broken else hand & ~forbid or hand)
        k = words[w] % legal.bit_count()
        w += 1
        while k:
            legal &= legal - 1
            k -= 1
        best = (legal & -legal).bit_length() - 1
        hands[leader] = hand ^ (1 << best)
        tmask = 1 << best
        led = best // 13
        base = led * 13
        winner = leader
        for seat in followers[leader]:
            hand = hands[seat]
            bits = (hand >> base) & 0x1FFF
            if bits:
                card = base + ranks_of[bits][words[w] % counts[bits]]
                w += 1
                if card > best:
                    best = card
                    winner = seat
            else:
                legal = hand & ~PENALTY_CARDS or hand if no_first_points else hand
                k = words[w] % legal.bit_count()
                w += 1
                while k:
                    legal &= legal - 1
                    k -= 1
                card = (legal & -legal).bit_length() - 1
            bit = 1 << card
            hands[seat] = hand ^ bit
            tmask |= bit
        if trace is not None:
            trace.extend(
                (before[s] ^ hands[s]).bit_length() - 1 for s in (leader, *followers[leader])
            )
        if not broken and (tmask & play_breaks or tmask & ~suit_masks[led] & discard_breaks):
            broken = True
        if first:
            tmask |= deal.reserve
            first = no_first_points = False
        won[winner] |= tmask
        if stock_pos < stock_len:
            for k in range(n):
                hands[(winner + k) % n] |= 1 << stock[stock_pos + k]
            stock_pos += n
        leader = winner
    return game.score(won)
