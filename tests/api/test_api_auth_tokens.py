"""API tokens are kept as digests (api/models.py ApiToken): the database and the admin hold no
usable token, a token works once issued, a wrong one fails, and the migration hashes the
tokens DRF's authtoken kept in clear."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from api import accounts
from api.models import ApiToken
from tests.api.conftest import assert_error, make_user

pytestmark = pytest.mark.django_db


def _obtain(username: str, **extra: Any) -> Any:
    return APIClient().post(
        "/api/v1/auth/token/",
        {"username": username, "password": f"{username}-secret-pw"},
        format="json",
        **extra,
    )


def _table_text(table: str) -> str:
    """Every value of every row of a table, as text."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
        return repr(cursor.fetchall())


def test_the_database_holds_no_usable_token() -> None:
    make_user("alice")
    response = _obtain("alice")
    assert response.status_code == 200
    key = response.json()["token"]
    assert len(key) >= 40

    stored = _table_text(ApiToken._meta.db_table)
    assert key not in stored
    assert key[: ApiToken.PREFIX_LENGTH] in stored  # the prefix, for people to recognise it
    token = ApiToken.objects.get()
    assert token.digest == accounts.token_digest(key)
    # DRF's table of clear keys is gone.
    assert "authtoken_token" not in connection.introspection.table_names()


def test_a_token_works_and_a_wrong_one_fails() -> None:
    make_user("alice")
    key = _obtain("alice").json()["token"]

    assert (
        APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/v1/auth/me/").json()["username"]
        == "alice"
    )
    last = "A" if key[-1] != "A" else "B"
    for wrong in (key[:-1] + last, key[: ApiToken.PREFIX_LENGTH], accounts.token_digest(key)):
        response = APIClient(HTTP_AUTHORIZATION=f"Token {wrong}").get("/api/v1/auth/me/")
        assert_error(response, 401, "authentication_failed")


def test_an_inactive_users_token_fails() -> None:
    user = make_user("alice")
    key = accounts.token_issue(user=user).key
    user.is_active = False
    user.save(update_fields=["is_active"])
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/v1/auth/me/")
    assert_error(response, 401, "authentication_failed")


def test_signup_shows_its_token_once_and_keeps_only_its_digest(settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    response = APIClient().post(
        "/api/v1/auth/signup/",
        {"username": "newcomer", "password": "a-long-Passw0rd!"},
        format="json",
    )
    assert response.status_code == 201
    key = response.json()["token"]
    assert key not in _table_text(ApiToken._meta.db_table)
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/v1/auth/me/").status_code == 200


def test_a_user_holds_at_most_the_newest_tokens() -> None:
    user = make_user("alice")
    keys = [accounts.token_issue(user=user).key for _ in range(accounts.TOKENS_PER_USER + 2)]
    assert ApiToken.objects.filter(user=user).count() == accounts.TOKENS_PER_USER
    assert accounts.token_user(key=keys[0]) is None  # the oldest went first
    assert accounts.token_user(key=keys[-1]) is not None


def test_the_admin_shows_only_a_prefix() -> None:
    make_user("alice")
    key = _obtain("alice").json()["token"]
    token = ApiToken.objects.get()
    staff = User.objects.create_superuser("root", password="root-secret-pw")
    client = Client()
    client.force_login(staff)

    for url in (
        "/admin/api/apitoken/",
        f"/admin/api/apitoken/{token.pk}/change/",
        f"/admin/auth/user/{token.user_id}/change/",
    ):
        page = client.get(url)
        assert page.status_code == 200, url
        text = page.content.decode()
        assert key not in text, url
        assert token.digest not in text, url
    assert f"{token.prefix}…" in client.get("/admin/api/apitoken/").content.decode()
    # Nothing to make or edit a token with.
    assert client.get("/admin/api/apitoken/add/").status_code == 403


def test_the_token_endpoint_counts_the_callers_address_whatever_token_is_sent(
    settings: Any,
) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": "1000/minute"},
    }
    user = make_user("alice")
    key = accounts.token_issue(user=user).key
    client = APIClient(HTTP_AUTHORIZATION=f"Token {key}", REMOTE_ADDR="192.0.2.10")
    answers = [
        client.post(
            "/api/v1/auth/token/",
            {"username": "alice", "password": "alice-secret-pw"},
            format="json",
        ).status_code
        for _ in range(4)
    ]
    assert answers == [200, 200, 200, 429]
    # Another address has its own count; the token still works for everything else.
    assert _obtain("alice", REMOTE_ADDR="192.0.2.11").status_code == 200
    assert client.get("/api/v1/auth/me/").status_code == 200


def _migration() -> Any:
    return importlib.import_module("api.migrations.0002_hash_tokens_and_name_keys")


def test_the_migration_hashes_the_existing_tokens_in_place() -> None:
    user = make_user("alice")
    old_key = "0123456789abcdef0123456789abcdef01234567"  # as DRF's authtoken made them
    with connection.schema_editor() as editor:
        editor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "user_id integer NOT NULL, created timestamp with time zone NOT NULL)"
        )
        editor.execute("INSERT INTO authtoken_token VALUES (%s, %s, now())", [old_key, user.pk])
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO django_migrations (app, name, applied) "
            "VALUES ('authtoken', '0001_initial', now())"
        )

    with connection.schema_editor() as editor:
        _migration().hash_tokens(apps, editor)

    assert "authtoken_token" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
        assert cursor.fetchone() == (0,)
    assert old_key not in _table_text(ApiToken._meta.db_table)
    assert ApiToken.objects.get().prefix == old_key[:8]
    # The token issued before keeps working.
    me = APIClient(HTTP_AUTHORIZATION=f"Token {old_key}").get("/api/v1/auth/me/")
    assert me.json()["username"] == "alice"
