"""Fair share of the workers for work that is not a tournament's: matches' batches, practice
runs' tables and new versions' validations.

Such work shares the tables' queue with tournament tables (one queue, every worker serves it in
order), so a crowd of it could fill the queue ahead of a tournament's round. Its fair share: a
*pool* of such work has at most ``cap`` items in flight (sent to the workers, or playing) at
once; the others wait in the database, unsent, and are sent one by one as those in flight end.
A tournament's table then waits behind at most ``cap`` items of each pool, however many wait.
Within a pool, :func:`fair_share_turns` orders the waiting items by turns of their authors, so
that one author's crowd never holds back another's first.

:func:`fair_share_dispatch` is the one place that decision is made. It is called inside the
transaction that changed the pool (an item created, recorded, failed, given back) and by the
periodic sweep, which also sends what a lost message or a dead worker left waiting: nothing
waits for ever. Two dispatches of a pool never overfill it: each holds the pool's lock until
its transaction ends (PostgreSQL's advisory lock; SQLite's ``IMMEDIATE`` transactions, the
demo's, already hold the whole database's write lock), and what it starts is sent once the
transaction commits.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Final, TypeVar

from django.db import connection, transaction

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

#: The advisory locks' first key, "Tapis" in ASCII: the pools' locks share no key with others.
_LOCK_NAMESPACE: Final = 0x546170
MATCHES: Final = "matches"
PRACTICE: Final = "practice"
VALIDATIONS: Final = "validations"


def fair_share_lock(*, pool: str) -> None:
    """Hold ``pool``'s lock until the current transaction ends (call inside one)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("fair_share_lock needs a transaction: it is held until it ends")
    if connection.vendor == "postgresql":
        key = zlib.crc32(pool.encode()) & 0x7FFFFFFF
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_LOCK_NAMESPACE, key])


def fair_share_dispatch(
    *,
    pool: str,
    cap: int,
    in_flight: Callable[[], int],
    waiting: Callable[[], Sequence[T]],
    start: Callable[[T], bool],
) -> list[T]:
    """Start waiting items of ``pool`` while fewer than ``cap`` are in flight: under the
    pool's lock, count ``in_flight()``, then ``start`` the first of ``waiting()`` (in the order
    they should take the free slots) until the slots are full. ``start`` marks an item in
    flight (it is then counted by the next dispatch) and queues its message on commit; it
    returns False for an item it could not start (taken meanwhile, nothing left to do), which
    takes no slot. Call inside a transaction. Returns the items started.
    """
    fair_share_lock(pool=pool)
    free = max(cap, 1) - in_flight()
    started: list[T] = []
    if free <= 0:
        return started
    for item in waiting():
        if len(started) >= free:
            break
        if start(item):
            started.append(item)
    return started


def fair_share_turns(
    items: Sequence[T], *, author: Callable[[T], K], busy: Mapping[K, int]
) -> list[T]:
    """``items`` (in the order they came) in the order they should take free slots: by turns
    of their authors, an author's first before anyone's second, counting the items each
    author has in flight already (``busy``); in the order they came within a turn.

    >>> fair_share_turns(["a1", "a2", "a3", "b1", "c1"], author=lambda x: x[0], busy={"c": 1})
    ['a1', 'b1', 'a2', 'c1', 'a3']
    """
    taken: Counter[K] = Counter(busy)
    turns = []
    for item in items:
        turns.append(taken[author(item)])
        taken[author(item)] += 1
    order = sorted(range(len(items)), key=lambda index: (turns[index], index))
    return [items[index] for index in order]
