"""Limits of uploads per author and of sign-ups per address: 429 with the API's error shape."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.api.conftest import BOT_FILE, assert_error, client_for, make_user
from tournaments import services

pytestmark = pytest.mark.django_db


def test_an_author_over_the_uploads_of_an_hour_gets_429(settings: Any) -> None:
    settings.TAPIS_UPLOADS_PER_HOUR = 2
    author = make_user("author")
    bot = services.bot_create(owner=author, name="many", game="hearts")
    client = client_for(author)

    def upload(n: int) -> Any:
        data = BOT_FILE.read_bytes() + b"#%d\n" % n
        return client.post(
            f"/api/v1/bots/{bot.pk}/versions/",
            {"file": SimpleUploadedFile("bot.py", data)},
            format="multipart",
        )

    assert upload(1).status_code == 201
    assert upload(2).status_code == 201
    error = assert_error(upload(3), 429, "upload_limit")
    assert "uploaded 2 versions in the last hour" in error["message"]
    assert bot.versions.count() == 2


def test_an_address_over_the_sign_ups_of_an_hour_gets_429(settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    settings.TAPIS_SIGNUPS_PER_HOUR = 2

    def signup(name: str, address: str = "192.0.2.8") -> Any:
        return APIClient().post(
            "/api/v1/auth/signup/",
            {"username": name, "password": "a-long-Passw0rd!"},
            format="json",
            REMOTE_ADDR=address,
        )

    assert signup("first").status_code == 201
    assert signup("second").status_code == 201
    error = assert_error(signup("third"), 429, "signup_limit")
    assert "signed up 2 accounts in the last hour" in error["message"]
    assert signup("third", "192.0.2.9").status_code == 201  # another address
