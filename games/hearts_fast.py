"""The int fast path of the Hearts engine: whole random playouts on bitmasks, for simulations
(Monte Carlo bots, benchmarks). Same rules as :class:`games.hearts.HeartsState` (the test suite
replays fast playouts through the named API), none of its names or checks.

>>> import random, games
>>> from games.hearts_fast import random_playout
>>> state = games.load("hearts").new_deal(3, seed=1)
>>> points = random_playout(state, random.Random(0))
>>> sum(points) in (26, 78)          # 26 points, or 3 x 26 after a moon
True
>>> state.is_terminal()              # the state itself is untouched
False

Random choices use ``rng.random()`` (``int(rng.random() * k)`` picks among k), which is fast
and plenty for simulations; the authoritative, reproducible deals stay in games.dealing.
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable

from games.cards import DECK_SIZE, SUIT_MASKS, Card, CardSet
from games.hearts import (
    _BITS,
    HEART_CARDS,
    PENALTY_CARDS,
    QS_BIT,
    TD_BONUS_POINTS,
    HeartsGame,
    HeartsState,
    Phase,
    exchange,
    final_points,
    first_lead,
)


def _rank_table() -> tuple[tuple[int, ...], ...]:
    table: list[tuple[int, ...]] = [()] * 8192
    for bits in range(1, 8192):
        low = bits & -bits
        table[bits] = (low.bit_length() - 1, *table[bits ^ low])
    return tuple(table)


#: A 13-bit rank mask -> its ranks in ascending order.
RANKS_OF: tuple[tuple[int, ...], ...] = _rank_table()


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
    hands, leftover = _deal(game, rng.random)
    return HeartsState(game, deal_index, None, hands, leftover)


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
        count = state._g.rules.pass_count
        while state.phase is Phase.PASS:
            cards = random_subset(state.hand(state.current_player()), count, random)
            if trace is not None:
                trace.append(cards)
            state._pass_cards(cards)
    if state.phase is Phase.OVER:
        return state.points()
    return _play_out(
        state._g,
        list(state._hands),
        list(state._trick),
        state._tmask,
        state._trick_leader,
        state._current,
        state._trick_no,
        state._broken,
        state._first_lead,
        state._reserve,
        state._stock,
        state._stock_pos,
        list(state._taken),
        list(state._pen),
        random,
        trace,
    )


def random_deal_points(game: HeartsGame, deal_index: int, rng: _random.Random) -> list[int]:
    """Deal at random, pass at random (if the deal has a pass), play at random: the points.
    The fastest way through a whole deal (bench/engine.py measures it)."""
    random = rng.random
    hands, leftover = _deal(game, random)
    offset = game.pass_offset(deal_index)
    if offset:
        count = game.rules.pass_count
        passes = [random_subset(hand, count, random) for hand in hands]
        hands = exchange(hands, passes, offset)
    leader, lead = first_lead(game, hands, deal_index)
    stock_mode = game.stock_mode
    reserve = 0
    if not stock_mode:
        for card in leftover:
            reserve |= 1 << card
    n = game.n
    return _play_out(
        game,
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
        [0] * n,
        random,
        None,
    )


def _deal(game: HeartsGame, random: Callable[[], float]) -> tuple[list[CardSet], list[Card]]:
    deck = list(range(DECK_SIZE))
    for i in range(DECK_SIZE - 1, 0, -1):
        j = int(random() * (i + 1))
        deck[i], deck[j] = deck[j], deck[i]
    n = game.n
    dealt = game.rules.hand_size * n
    bit = _BITS.__getitem__
    return [sum(map(bit, deck[seat:dealt:n])) for seat in range(n)], deck[dealt:]


def _play_out(
    game: HeartsGame,
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
    taken: list[int],
    pen: list[int],
    random: Callable[[], float],
    trace: list[int] | None,
) -> list[int]:
    """The playout loop: the rules of HeartsState._legal_play / _play / _end_trick, inlined
    over local variables."""
    n = game.n
    ntricks = game.tricks_per_deal
    forbid = game.forbid_mask
    no_first = game.no_first_points
    play_breaks = game.play_breaks
    discard_breaks = game.discard_breaks
    td_bit = game.td_bit
    stock_len = len(stock)
    suit_masks = SUIT_MASKS
    ranks_of = RANKS_OF
    led = trick[0] // 13 if trick else -1
    while True:
        while len(trick) < n:
            hand = hands[seat]
            if trick:
                legal = hand & suit_masks[led]
                if legal:
                    ranks = ranks_of[legal >> (13 * led)]
                    card = 13 * led + ranks[int(random() * len(ranks))]
                else:
                    legal = hand & ~PENALTY_CARDS or hand if trick_no == 0 and no_first else hand
                    card = random_card(legal, random)
            else:
                if trick_no == 0:
                    legal = lead
                elif broken or not forbid:
                    legal = hand
                else:
                    legal = hand & ~forbid or hand
                card = random_card(legal, random)
                led = card // 13
            bit = 1 << card
            hands[seat] = hand ^ bit
            tmask |= bit
            trick.append(card)
            if trace is not None:
                trace.append(card)
            seat = seat + 1 if seat + 1 < n else 0
        led_cards = suit_masks[led]
        winner = (leader + trick.index((tmask & led_cards).bit_length() - 1)) % n
        if not broken and (tmask & play_breaks or tmask & ~led_cards & discard_breaks):
            broken = True
        if trick_no == 0:
            tmask |= reserve
        points = (tmask & HEART_CARDS).bit_count() + (13 if tmask & QS_BIT else 0)
        pen[winner] += points
        taken[winner] += points + TD_BONUS_POINTS if tmask & td_bit else points
        trick_no += 1
        if stock_pos < stock_len:
            for k in range(n):
                drawer = (winner + k) % n
                hands[drawer] |= 1 << stock[stock_pos + k]
            stock_pos += n
        if trick_no == ntricks:
            return final_points(game, taken, pen)
        trick = []
        tmask = 0
        leader = seat = winner
