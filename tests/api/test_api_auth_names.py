"""Look-alike user names are refused on every path that creates or renames a user: the API's
sign-up, the admin's forms, createsuperuser, any save (api/apps.py), and the unique keys of
api.models.UsernameKey in the database."""

from __future__ import annotations

import doctest
import importlib
from io import StringIO
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.test import Client
from rest_framework.test import APIClient

from api import accounts
from api.models import UsernameKey
from tests.api.conftest import assert_error, make_user

pytestmark = pytest.mark.django_db

# (existing name, look-alike refused beside it)
LOOKALIKES = [
    ("alice", "ALİCE"),  # dotted capital I: case folding leaves i + a combining dot
    ("malloryi", "malloryı"),  # dotless i
    ("bob", "Ｂｏｂ"),  # full-width
    ("jose", "José"),  # an accent
    ("paypal", "раураl"),  # Cyrillic р, а, у, а
    ("nikh", "ΝΙΚΗ"),  # Greek capitals drawn like Latin ones
    ("strasse", "Straße"),
]


def test_the_examples_of_the_rule_hold() -> None:
    failures, tried = doctest.testmod(accounts, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


@pytest.mark.parametrize(("existing", "lookalike"), LOOKALIKES)
def test_signup_refuses_a_lookalike(existing: str, lookalike: str, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    make_user(existing)
    response = APIClient().post(
        "/api/v1/auth/signup/",
        {"username": lookalike, "password": "a-long-Passw0rd!"},
        format="json",
    )
    error = assert_error(response, 400, "username_taken")
    assert existing in error["message"]
    assert error["fields"] == {"username": [error["message"]]}
    assert User.objects.count() == 1


def test_signup_takes_a_name_that_looks_like_no_other(settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    make_user("alice")
    response = APIClient().post(
        "/api/v1/auth/signup/", {"username": "alicia", "password": "a-long-Passw0rd!"}
    )
    assert response.status_code == 201
    assert UsernameKey.objects.get(user__username="alicia").key == "alicia"


@pytest.fixture
def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="root-secret-pw"))
    return client


def test_the_admin_add_form_refuses_a_lookalike(admin_client: Client) -> None:
    make_user("alice")
    response = admin_client.post(
        "/admin/auth/user/add/",
        {
            "username": "ALİCE",
            "usable_password": "true",
            "password1": "a-long-Passw0rd!",
            "password2": "a-long-Passw0rd!",
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert "looks like &#x27;alice&#x27;" in response.content.decode()
    assert not User.objects.filter(username="ALİCE").exists()


def _change(client: Client, user: User, username: str) -> Any:
    return client.post(
        f"/admin/auth/user/{user.pk}/change/",
        {
            "username": username,
            "first_name": "",
            "last_name": "",
            "email": "",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "00:00:00",
            "initial-date_joined_0": "2026-01-01",
            "initial-date_joined_1": "00:00:00",
        },
    )


def test_the_admin_change_form_refuses_a_rename_to_a_lookalike(admin_client: Client) -> None:
    make_user("malloryi")
    carol = make_user("carol")
    response = _change(admin_client, carol, "malloryı")
    assert response.status_code == 200
    assert "looks like &#x27;malloryi&#x27;" in response.content.decode()
    carol.refresh_from_db()
    assert carol.username == "carol"
    # Renaming to a look-alike of one's own name is no impersonation.
    assert _change(admin_client, carol, "Carol").status_code == 302
    carol.refresh_from_db()
    assert carol.username == "Carol"
    assert UsernameKey.objects.get(user=carol).key == "carol"


def test_createsuperuser_refuses_a_lookalike(monkeypatch: pytest.MonkeyPatch) -> None:
    make_user("alice")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a-long-Passw0rd!")
    with pytest.raises(CommandError, match="looks like 'alice'"):
        call_command("createsuperuser", "--no-input", username="ALİCE", email="", stdout=StringIO())
    assert not User.objects.filter(username="ALİCE").exists()


def test_any_save_refuses_a_lookalike_but_not_a_password_change() -> None:
    alice = make_user("alice")
    with pytest.raises(ValidationError, match="looks like 'alice'"):
        User.objects.create_user("ALICE", password="x")
    # The account's own saves go on.
    alice.set_password("another-secret-pw")
    alice.save()
    alice.username = "Alice"
    alice.save()
    assert UsernameKey.objects.get(user=alice).key == "alice"


def test_the_database_refuses_two_lookalike_keys() -> None:
    make_user("alice")
    bob = make_user("bob")
    UsernameKey.objects.filter(user=bob).delete()
    # As if two look-alike names were saved at the same moment, past the check of each.
    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameKey.objects.create(user=bob, key="alice", capital_key="bob")
    with pytest.raises(IntegrityError), transaction.atomic():
        UsernameKey.objects.create(user=bob, key="bob", capital_key="alice")


def test_the_migration_keys_existing_users_and_names_lookalikes() -> None:
    alice = make_user("alice")
    lookalike = make_user("zed")
    bob = make_user("bob")
    UsernameKey.objects.all().delete()
    # A look-alike made before the rule (as a database of an earlier version may hold).
    User.objects.filter(pk=lookalike.pk).update(username="ALİCE")

    migration = importlib.import_module("api.migrations.0002_hash_tokens_and_name_keys")
    with connection.schema_editor() as editor:
        migration.store_name_keys(apps, editor)

    assert UsernameKey.objects.get(user=alice).key == "alice"
    assert UsernameKey.objects.get(user=bob).key == "bob"
    assert not UsernameKey.objects.filter(user=lookalike).exists()
