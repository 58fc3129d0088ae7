"""The Redis cache backend that keeps its redis-py clients (api/redis_cache.py), against the
real Redis of the test suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from api.redis_cache import RedisCache

# The broker's Redis, another database: the cache's keys stay apart from the queues.
REDIS = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1").rsplit("/", 1)[0]
KEYS = ["history", "count"]


@pytest.fixture
def cache() -> Iterator[RedisCache]:
    cache = RedisCache(f"{REDIS}/5", {"KEY_PREFIX": f"tapis-test-{os.getpid()}"})
    cache.delete_many(KEYS)
    yield cache
    cache.delete_many(KEYS)  # its own keys only (not clear(): the whole database)


def test_one_client_serves_every_operation(cache: RedisCache) -> None:
    client = cache._cache.get_client()
    assert cache._cache.get_client(write=True) is client
    cache.set("history", [3.0, 2.0, 1.0], 30)
    assert cache.get("history") == [3.0, 2.0, 1.0]
    assert cache._cache.get_client("history") is client


def test_it_is_still_djangos_cache(cache: RedisCache) -> None:
    assert cache.add("count", 1, 30)
    assert not cache.add("count", 5, 30)
    assert cache.incr("count") == 2
    assert cache.get_many(["count", "none"]) == {"count": 2}
    cache.delete("count")
    assert cache.get("count", "gone") == "gone"
