"""Language-independent, reproducible randomness for deals (see docs/dealing.md).

Every random choice of a deal comes from a stream of 32-bit words made by SHA-256 in counter
mode: block ``i`` of the stream for a purpose, a seed and a deal index is

    SHA-256(ASCII "tapis/v1/{purpose}/{seed}/{deal_index}/{i}")

with the integers written in decimal, and its 32 bytes are read as eight big-endian unsigned
32-bit words. A uniform integer below ``n`` takes the next word ``w`` and rejects it while
``w >= 2**32 - (2**32 mod n)``; otherwise it is ``w mod n``. A shuffle is Fisher-Yates from
the top: for ``i`` from ``len - 1`` down to 1, swap items ``i`` and ``below(i + 1)``.

Nothing here uses the host's random generator, so any deal can be re-created anywhere.

>>> shuffled(5, seed=1, deal_index=0) == shuffled(5, seed=1, deal_index=0)
True
>>> sorted(shuffled(52, seed=7, deal_index=3)) == list(range(52))
True
"""

from __future__ import annotations

import hashlib
from typing import TypeVar

from games.dealing_fast import fisher_yates

T = TypeVar("T")

_WORD = 1 << 32


def checked_seed(seed: object) -> int:
    """``seed`` when it is a seed (a non-negative integer, not a bool), else a ValueError.

    >>> checked_seed(7)
    7
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    return seed


class DealRng:
    """The SHA-256 counter-mode stream of one purpose, seed and deal index."""

    __slots__ = ("_block", "_prefix", "_words")

    def __init__(self, seed: int, deal_index: int, purpose: str = "deal") -> None:
        checked_seed(seed)
        if not isinstance(deal_index, int) or isinstance(deal_index, bool) or deal_index < 0:
            raise ValueError(f"a deal index is a non-negative integer, not {deal_index!r}")
        if "/" in purpose:
            raise ValueError("a purpose may not contain '/'")
        self._prefix = f"tapis/v1/{purpose}/{seed}/{deal_index}/"
        self._block = 0
        self._words: list[int] = []

    def next_word(self) -> int:
        """The next unsigned 32-bit word of the stream."""
        if not self._words:
            digest = hashlib.sha256(f"{self._prefix}{self._block}".encode("ascii")).digest()
            self._block += 1
            # Reversed so that pop() hands the words out in stream order.
            self._words = [int.from_bytes(digest[i : i + 4], "big") for i in range(28, -1, -4)]
        return self._words.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, by rejection sampling (no modulo bias)."""
        if not 0 < n <= _WORD:
            raise ValueError(f"below() takes 1 <= n <= 2**32, not {n}")
        limit = _WORD - _WORD % n
        while True:
            word = self.next_word()
            if word < limit:
                return word % n

    def shuffle(self, items: list[T]) -> None:
        """Shuffle a list in place, Fisher-Yates from the top."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def shuffled(n: int, *, seed: int, deal_index: int, purpose: str = "deal") -> list[int]:
    """A permutation of ``range(n)`` drawn from the stream of (purpose, seed, deal_index).

    Exactly ``DealRng(seed, deal_index, purpose).shuffle(list(range(n)))``, computed faster by
    :func:`games.dealing_fast.fisher_yates` (the words hashed in one go, no rejection test
    while none can reject), which hands the rare deal where a word might be rejected back to
    the reference implementation.
    """
    if (
        type(seed) is not int
        or type(deal_index) is not int
        or seed < 0
        or deal_index < 0
        or "/" in purpose
    ):
        DealRng(seed, deal_index, purpose)  # raises the reference implementation's error
    order = fisher_yates(n, f"tapis/v1/{purpose}/{seed}/{deal_index}/".encode("ascii"))
    if order is None:
        order = list(range(n))
        DealRng(seed, deal_index, purpose).shuffle(order)
    return order
