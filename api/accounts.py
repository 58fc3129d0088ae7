"""Accounts of API clients: tokens and sign-up (keyword-only services, as in tournaments).

A user has at most one API token (DRF's ``authtoken``): obtaining one returns the existing
token, revoking deletes it (a new one is made at the next request for a token).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token

from tournaments.errors import ApplicationError


def token_obtain(*, username: str, password: str, request: Any = None) -> Token:
    """The API token of the user with these credentials (made on first request)."""
    user = authenticate(request, username=username, password=password)
    if user is None or not user.is_active:
        raise ApplicationError(
            "unable to log in with these credentials", code="invalid_credentials"
        )
    token, _ = Token.objects.get_or_create(user=user)
    return token


def token_revoke(*, user: Any) -> bool:
    """Delete the user's API token; False if there was none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def signup_allowed() -> bool:
    return bool(getattr(settings, "TAPIS_ALLOW_SIGNUP", False))


def user_signup(*, username: str, password: str, email: str = "") -> tuple[Any, Token]:
    """A new account and its API token, if the service allows sign-up."""
    if not signup_allowed():
        raise ApplicationError("this service does not allow sign-up", code="signup_closed")
    user_model = get_user_model()
    candidate = user_model(username=username, email=email)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise ApplicationError(
            " ".join(exc.messages), code="weak_password", extra={"field": "password"}
        ) from None
    try:
        with transaction.atomic():
            if user_model.objects.filter(username__iexact=username).exists():
                raise IntegrityError
            user = user_model.objects.create_user(username=username, email=email, password=password)
            token = Token.objects.create(user=user)
    except IntegrityError:
        raise ApplicationError(
            f"the name {username!r} is taken", code="username_taken", extra={"field": "username"}
        ) from None
    return user, token
