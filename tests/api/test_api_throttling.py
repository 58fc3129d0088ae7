"""The API's throttle (api/throttling.py): one counter per client and window, in Django's cache
or, with the Redis cache, in one round trip to the real Redis of the test suite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.cache import caches
from rest_framework.test import APIRequestFactory

from api.throttling import ClientThrottle

REDIS = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1").rsplit("/", 1)[0]


def anonymous_request(address: str) -> Any:
    request = APIRequestFactory().get("/api/v1/games/", REMOTE_ADDR=address)
    request.user = AnonymousUser()
    return request


def use_cache(kind: str, settings: Any) -> None:
    if kind == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "api.redis_cache.RedisCache",
                "LOCATION": f"{REDIS}/5",
                "KEY_PREFIX": f"tapis-throttle-test-{os.getpid()}-{os.urandom(4).hex()}",
            }
        }
    else:
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": "5/minute"},
    }


@pytest.fixture
def restore_caches(settings: Any) -> Iterator[None]:
    """Back to the in-memory cache before tests/api/conftest.py clears "the" cache: a Redis
    cache's clear() is a FLUSHDB of a database other runs share."""
    original = settings.CACHES
    yield
    settings.CACHES = original


@pytest.fixture(params=["locmem", "redis"])
def throttle_cache(request: pytest.FixtureRequest, settings: Any, restore_caches: None) -> str:
    use_cache(str(request.param), settings)
    return str(request.param)


def test_a_client_gets_its_rate_per_window_and_then_a_retry_after(throttle_cache: str) -> None:
    throttle = ClientThrottle()
    verdicts = [throttle.allow_request(anonymous_request("192.0.2.1"), None) for _ in range(5)]
    assert verdicts == [True, True, True, False, False]
    wait = throttle.wait()
    assert wait is not None
    assert 0 < wait <= 60
    # Another address has a counter of its own.
    assert ClientThrottle().allow_request(anonymous_request("192.0.2.2"), None)


def test_the_redis_counter_expires_with_its_window(settings: Any, restore_caches: None) -> None:
    use_cache("redis", settings)
    ClientThrottle().allow_request(anonymous_request("192.0.2.3"), None)
    backend = caches["default"]
    client = backend.redis_client(write=False)  # type: ignore[attr-defined]
    (key,) = client.keys(backend.make_key("throttle:anon:192.0.2.3:*"))
    assert int(client.get(key)) == 1
    assert 0 < client.ttl(key) <= 61
    client.delete(key)
