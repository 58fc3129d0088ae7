"""Throttling of anonymous and authenticated clients: one counter per client and window.

The rates are ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["anon"]`` and ``["user"]`` (set from
``TAPIS_API_THROTTLE_ANON`` and ``TAPIS_API_THROTTLE_USER``, e.g. ``60/minute``; ``off`` turns
one off), read when a request comes, so a changed setting takes effect at once. An anonymous
client is counted by its address (``TAPIS_NUM_PROXIES`` says which one: README.md), a logged-in
one by its user.

A request costs one counter increment in the cache: fixed windows (the first ``N`` requests of
each period pass; ``Retry-After`` is the rest of the period), instead of DRF's sliding windows,
which keep a list of every request's time per client and scope and read and write it back whole
(docs/operations.md has what each costs). The price of fixed windows: a client may send up to
``2N`` requests across the boundary of two windows.

With the Redis cache (``api.redis_cache.RedisCache``) the increment and the key's expiry go to
Redis in one round trip; with another cache, ``add`` then ``incr``.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.cache import caches
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from api.redis_cache import RedisCache

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str) -> tuple[int, int]:
    """``"120/minute"`` -> (120, 60): requests, and the period in seconds.

    >>> parse_rate("120/minute"), parse_rate("5/s"), parse_rate("1000/day")
    ((120, 60), (5, 1), (1000, 86400))
    """
    count, _, period = rate.partition("/")
    return int(count), _PERIODS[period[0]]


class ClientThrottle(BaseThrottle):
    """The ``user`` rate for a logged-in client, the ``anon`` rate for the others."""

    def __init__(self) -> None:
        self._retry_after: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        user = getattr(request, "user", None)
        scope = "user" if user is not None and user.is_authenticated else "anon"
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
        if not rate:
            return True
        allowed, period = parse_rate(str(rate))
        ident = f"u{user.pk}" if scope == "user" and user is not None else self.get_ident(request)
        now = time.time()
        window = int(now // period)
        count = _increment(f"throttle:{scope}:{ident}:{period}:{window}", period)
        if count <= allowed:
            return True
        self._retry_after = (window + 1) * period - now
        return False

    def wait(self) -> float | None:
        return self._retry_after


def _increment(key: str, period: int) -> int:
    """Count one more request under ``key`` (kept a little longer than its window)."""
    ttl = period + 1
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        name = backend.make_and_validate_key(key)
        pipeline = backend.redis_client(write=True).pipeline(transaction=False)
        pipeline.incr(name)
        pipeline.expire(name, ttl)
        count, _ = pipeline.execute()
        return int(count)
    backend.add(key, 0, ttl)
    try:
        return int(backend.incr(key))
    except ValueError:  # expired between add and incr: this is the window's first request
        backend.add(key, 1, ttl)
        return 1
