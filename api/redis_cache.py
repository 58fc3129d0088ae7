"""Django's Redis cache backend, with one redis-py client per connection pool.

Django's ``RedisCacheClient.get_client()`` makes a new ``redis.Redis`` for every cache
operation, and redis-py builds its response callbacks each time it makes one: on the paths
every request takes (the throttles) that costs more CPU than the round trip to Redis itself
(figures in docs/operations.md). A ``redis.Redis`` is safe to share
between threads (it takes a connection from its pool for each command); Django keeps one
cache object per thread anyway.

Settings: ``CACHES = {"default": {"BACKEND": "api.redis_cache.RedisCache", ...}}``.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusingClient(RedisCacheClient):
    """Keeps the ``redis.Redis`` of each connection pool instead of making one per call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's own helpers (django-stubs does not declare them).
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(DjangoRedisCache):
    """Django's Redis cache through :class:`ReusingClient`."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusingClient

    def redis_client(self, *, write: bool) -> Any:
        """The ``redis.Redis`` behind the cache, for what Django's API cannot do in one round
        trip (api.throttling: an increment and an expiry in one pipeline)."""
        return self._cache.get_client(write=write)  # type: ignore[attr-defined]
