"""The fast path of :func:`games.dealing.shuffled`: the same permutation, hashed in one go.

Compiled by mypyc with the engine (games/_native.py), it takes already checked arguments;
games.dealing keeps the public API, its checks and the reference implementation.

>>> from games.dealing import DealRng
>>> order = list(range(52))
>>> DealRng(7, 3).shuffle(order)
>>> fisher_yates(52, b"tapis/v1/deal/7/3/") == order
True
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from typing import Final, cast

_WORD: Final = 1 << 32
#: SHA-256 blocks -> the unpacker of their big-endian 32-bit words.
_UNPACK: Final[dict[int, Callable[[bytes], tuple[object, ...]]]] = {}


def fisher_yates(n: int, prefix: bytes) -> list[int] | None:
    """``DealRng(...).shuffle(list(range(n)))`` for the stream whose blocks are
    ``SHA-256(prefix + block number)``, or None when a word might be rejected by ``below()``
    (then only the reference implementation, word by word, is exact).

    ``below(m)`` for ``m <= n`` never rejects a word up to ``2**32 - n``, so while every word
    is at most that, item ``i`` (from ``n - 1`` down to 1) swaps with item ``word mod (i + 1)``.
    A word above it is rarer than one deal in a million.
    """
    order = list(range(n))
    if n < 2:
        return order
    blocks = (n + 6) // 8  # n - 1 words, eight per block
    # Each block hashes a copy of the prefix's state (half the cost of a new hash object).
    # hashlib.sha256 is looked up per call: a test rigs it to force the fallback.
    stem = hashlib.sha256(prefix)
    digests = []
    for b in range(blocks):
        block = stem.copy()
        block.update(b"%d" % b)
        digests.append(block.digest())
    data = b"".join(digests)
    unpack = _UNPACK.get(blocks)
    if unpack is None:
        unpack = _UNPACK[blocks] = struct.Struct(f">{8 * blocks}I").unpack
    words = cast("tuple[int, ...]", unpack(data))
    limit = _WORD - n
    i = n - 1
    for k in range(n - 1):
        word = words[k]
        if word > limit:
            return None
        j = word % (i + 1)
        order[i], order[j] = order[j], order[i]
        i -= 1
    return order
