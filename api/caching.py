"""What the API keeps in memory: answers that never change once they may be shown.

* Final standings (a finished or cancelled tournament), and live standings under a key that
  moves with every recorded table and entry (``selectors.standings_version``).

Not replays: each is stored once rendered, and sent with a single prepared query
(:mod:`api.replays`); requested at random over many deals, a cache in front would mostly miss
and add its own round trip (and a copy of the bytes) to nearly every request.

They live in caches of their own, apart from Django's default cache (which holds the throttle
counters: one per client, they would push the standings out). By default each web process has
its own bounded in-memory caches; a ``CACHES["api"]`` entry in the settings (Redis, for
instance) is used instead when it exists, and then shared by every process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.locmem import LocMemCache

T = TypeVar("T")

# How long what never changes is kept (it may be pushed out earlier when a cache is full).
TIMEOUT = 24 * 3600

_LOCAL = {
    "standings": LocMemCache("tapis-api-standings", {"OPTIONS": {"MAX_ENTRIES": 2000}}),
}


def cache_for(name: str) -> BaseCache:
    """The cache of ``name`` (``standings``)."""
    if "api" in settings.CACHES:
        return caches["api"]
    return _LOCAL[name]


def cached(name: str, key: str, build: Callable[[], T], timeout: float = TIMEOUT) -> T:
    """``build()``, kept in the cache ``name`` under ``key`` (whose text says what it
    depends on)."""
    cache = cache_for(name)
    value: T | None = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, timeout)
    return value


def clear() -> None:
    """Forget everything (tests)."""
    for name in _LOCAL:
        cache_for(name).clear()
