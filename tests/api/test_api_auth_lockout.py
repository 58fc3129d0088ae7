"""Failed logins are limited per user name and per address on every login path (django-axes
configured by config/settings.py and api/authentication.py), in Django's in-memory cache and in
the Redis cache of production (api/redis_cache.py, against the suite's real Redis); an operator
lifts a lock-out with ``manage.py login_unlock`` or the users' admin action."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from api.authentication import KNOWN_DEVICE_COOKIE, is_locked_out, login_unlock
from tests.api.conftest import assert_error, make_user

pytestmark = pytest.mark.django_db

# The Redis database of this run's broker (each run sharing the server is given its own).
REDIS_DB = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1")
LIMIT = 3


@pytest.fixture(params=["locmem", "redis"])
def login_cache(request: pytest.FixtureRequest, settings: Any) -> Iterator[str]:
    """The limit of failures set to 3, counted in the cache under test."""
    original = settings.CACHES
    if request.param == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "api.redis_cache.RedisCache",
                "LOCATION": REDIS_DB,
                "KEY_PREFIX": f"tapis-lockout-test-{os.getpid()}-{os.urandom(4).hex()}",
            }
        }
    settings.AXES_FAILURE_LIMIT = LIMIT
    AxesProxyHandler.get_implementation(force=True)  # axes keeps the cache it was made with
    yield str(request.param)
    if request.param == "redis":
        from django.core.cache import caches

        backend = caches["default"]
        client = backend.redis_client(write=True)  # type: ignore[attr-defined]
        keys = client.keys(backend.make_key("*"))
        if keys:
            client.delete(*keys)
        # Back to the in-memory cache before tests/api/conftest.py clears "the" cache: a
        # Redis cache's clear() is a FLUSHDB of the database every run shares.
        settings.CACHES = original
    AxesProxyHandler.implementation = None


def token(username: str, password: str, address: str = "192.0.2.1") -> Any:
    return APIClient().post(
        "/api/v1/auth/token/",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def admin_login(username: str, password: str, address: str = "192.0.2.1") -> Any:
    client = Client(REMOTE_ADDR=address)
    response = client.post(
        "/admin/login/?next=/admin/",
        {"username": username, "password": password, "next": "/admin/"},
    )
    response.client = client  # type: ignore[attr-defined]
    return response


def assert_locked_out(response: Any) -> None:
    error = assert_error(response, 429, "locked_out")
    assert "Too many failed logins" in error["message"]
    assert int(response["Retry-After"]) > 0


def test_failures_lock_the_user_name_out_whatever_the_address(login_cache: str) -> None:
    make_user("alice")
    make_user("bob")
    for attempt in range(LIMIT - 1):
        assert_error(token("alice", "wrong", f"192.0.2.{attempt}"), 400, "invalid_credentials")
    # The last failure allowed is refused as a lock-out already.
    assert_locked_out(token("alice", "wrong", "192.0.2.0"))
    # The right password is refused too, from every address a failure came from...
    for attempt in range(LIMIT - 1):
        assert_locked_out(token("alice", "alice-secret-pw", f"192.0.2.{attempt}"))
    # ... and a look-alike of the name shares its count.
    assert_locked_out(token("ALİCE", "whatever", "192.0.2.1"))
    # Another user is not concerned.
    assert token("bob", "bob-secret-pw", "192.0.2.70").status_code == 200
    # From an address nobody failed from, the owner gets in (a guesser gets one try per
    # address: each failure counts against the address it came from).
    assert token("alice", "alice-secret-pw", "192.0.2.60").status_code == 200
    assert_error(token("alice", "wrong", "192.0.2.61"), 400, "invalid_credentials")
    assert_locked_out(token("alice", "alice-secret-pw", "192.0.2.61"))


def test_failures_lock_the_address_out_whatever_the_user_name(login_cache: str) -> None:
    make_user("alice")
    for name in ("carol", "dave", "erin"):
        token(name, "guess", "198.51.100.7")
    assert_locked_out(token("alice", "alice-secret-pw", "198.51.100.7"))
    # Elsewhere, alice logs in.
    assert token("alice", "alice-secret-pw", "198.51.100.8").status_code == 200


def test_the_admin_login_is_limited(login_cache: str) -> None:
    User.objects.create_superuser("root", password="root-secret-pw")
    for _ in range(LIMIT - 1):
        assert admin_login("root", "wrong").status_code == 200  # the form again
    last = admin_login("root", "wrong")
    assert last.status_code == 429
    refused = admin_login("root", "root-secret-pw")
    assert refused.status_code == 429
    assert "Too many failed logins" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0
    # Not logged in.
    assert refused.client.get("/admin/").status_code == 302


def test_the_operator_lifts_a_lock_out_with_the_command(login_cache: str) -> None:
    make_user("alice")
    for attempt in range(LIMIT):
        token("alice", "wrong", f"203.0.113.{attempt}")
    for name in ("x1", "x2", "x3"):
        token(name, "guess", "203.0.113.200")
    assert_locked_out(token("alice", "alice-secret-pw", "203.0.113.1"))
    assert_locked_out(token("bob", "guess", "203.0.113.200"))

    call_command("login_unlock", username="ALICE")  # any look-alike of the name
    assert token("alice", "alice-secret-pw", "203.0.113.1").status_code == 200
    assert_locked_out(token("alice", "alice-secret-pw", "203.0.113.200"))

    call_command("login_unlock", address="203.0.113.200")
    assert token("alice", "alice-secret-pw", "203.0.113.200").status_code == 200

    with pytest.raises(CommandError):
        call_command("login_unlock")


def test_the_operator_lifts_a_lock_out_from_the_users_admin(login_cache: str) -> None:
    alice = make_user("alice")
    for attempt in range(LIMIT):
        token("alice", "wrong", f"203.0.113.{attempt}")
    assert_locked_out(token("alice", "alice-secret-pw", "203.0.113.0"))

    root = User.objects.create_superuser("root", password="root-secret-pw")
    client = Client()
    client.force_login(root)
    response = client.post(
        "/admin/auth/user/",
        {"action": "lift_login_lockout", "_selected_action": [alice.pk]},
        follow=True,
    )
    assert "Lifted the login lock-out of 1 user(s): alice." in response.content.decode()
    assert token("alice", "alice-secret-pw", "203.0.113.0").status_code == 200


def test_signup_is_refused_from_a_locked_out_address(login_cache: str, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    make_user("alice")

    def signup(name: str) -> Any:
        return APIClient().post(
            "/api/v1/auth/signup/",
            {"username": name, "password": "a-long-Passw0rd!"},
            format="json",
            REMOTE_ADDR="192.0.2.77",
        )

    # Names refused (taken, or a look-alike of one) count against the address...
    for name in ("alice", "ALICE", "alıce"):
        assert_error(signup(name), 400, "username_taken")
    # ... which is then locked out: no sign-up and no login from there.
    assert_locked_out(signup("newcomer"))
    assert_locked_out(token("alice", "alice-secret-pw", "192.0.2.77"))
    assert not User.objects.filter(username="newcomer").exists()


def test_a_page_can_ask_before_the_form_is_sent(login_cache: str) -> None:
    from django.test import RequestFactory

    make_user("alice")
    request = RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.100")
    assert not is_locked_out(request, username="alice")
    for attempt in range(LIMIT):
        token("alice", "wrong", f"192.0.2.{100 + attempt}")
    assert is_locked_out(
        RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.100"), username="alice"
    )
    assert not is_locked_out(RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.100"))
    # Nobody failed from there: the name's lock-out does not hold.
    assert not is_locked_out(
        RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.5"), username="alice"
    )
    assert login_unlock(username="alice") >= 1
    assert not is_locked_out(
        RequestFactory().post("/login/", REMOTE_ADDR="192.0.2.100"), username="alice"
    )


def lock_the_name(username: str, guesser: str = "198.51.100.66") -> None:
    """A guesser locks ``username`` out (and their own address)."""
    for _ in range(LIMIT):
        token(username, "guess", guesser)
    assert_locked_out(token(username, "guess", guesser))


def test_a_locked_name_lets_its_owner_in_from_an_address_it_logged_in_from(
    login_cache: str,
) -> None:
    make_user("alice")
    make_user("carol")
    assert token("alice", "alice-secret-pw", "198.51.100.20").status_code == 200
    lock_the_name("alice")
    # Someone failed from both of alice's addresses since (a shared office: carol's typo).
    for address in ("198.51.100.20", "198.51.100.21"):
        assert_error(token("carol", "typo", address), 400, "invalid_credentials")
    # From the address she logged in from, a typo is a typo, and the right password lets her
    # in; from the other one, the name's lock-out holds.
    assert_error(token("alice", "typo", "198.51.100.20"), 400, "invalid_credentials")
    assert token("alice", "alice-secret-pw", "198.51.100.20").status_code == 200
    assert_locked_out(token("alice", "alice-secret-pw", "198.51.100.21"))
    # The address vouches for alice's account only, and never lifts its own lock-out.
    assert_locked_out(token("alice", "alice-secret-pw", "198.51.100.66"))


def test_a_locked_name_lets_the_administrator_in_from_a_known_browser(login_cache: str) -> None:
    User.objects.create_superuser("root", password="root-secret-pw")
    browser = Client()
    home = {"REMOTE_ADDR": "192.0.2.10"}
    form = {"username": "root", "password": "root-secret-pw", "next": "/admin/"}
    assert browser.post("/admin/login/", form, **home).status_code == 302
    assert browser.cookies[KNOWN_DEVICE_COOKIE].value
    browser.post("/admin/logout/", **home)
    lock_the_name("root")
    # The administrator travels: new addresses, where someone has failed before (each refused
    # login counts against its address too: one address per attempt).
    for address in ("192.0.2.11", "192.0.2.12", "192.0.2.13"):
        token("someone", "typo", address)
    assert admin_login("root", "root-secret-pw", "192.0.2.12").status_code == 429
    forged = Client()
    forged.cookies[KNOWN_DEVICE_COOKIE] = browser.cookies[KNOWN_DEVICE_COOKIE].value + "0"
    assert forged.post("/admin/login/", form, REMOTE_ADDR="192.0.2.13").status_code == 429
    away = {"REMOTE_ADDR": "192.0.2.11"}
    response = browser.post("/admin/login/", form, **away)
    assert response.status_code == 302
    assert browser.get("/admin/", **away).status_code == 200
