"""Accounts of API clients: tokens, sign-up and user names (keyword-only services).

Tokens: the database keeps the SHA-256 digest of each key and its first characters, never the
key (:class:`api.models.ApiToken`); a key is shown once, when it is made. Each request for a
token with a username and password makes a new one (a user keeps at most
:data:`TOKENS_PER_USER`, the oldest going first); revoking deletes them all.

User names: two accounts may not have names that look alike (:func:`username_keys`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import unicodedata
from typing import Any

from django.conf import settings
from django.contrib.auth import authenticate, get_user_model, password_validation
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q

from api.models import ApiToken, UsernameKey
from tournaments.errors import ApplicationError

# Tokens a user may hold at once: clients that ask for a token at every start never pile up.
TOKENS_PER_USER = 10


@dataclasses.dataclass(frozen=True, slots=True)
class IssuedToken:
    """A token just made: ``key`` is the only copy of the secret, to show once."""

    key: str
    user: Any
    token: ApiToken


def token_digest(key: str) -> str:
    """The digest kept for a key.

    >>> token_digest("abc")
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """
    return hashlib.sha256(key.encode()).hexdigest()


def token_issue(*, user: Any) -> IssuedToken:
    """A new API token for ``user`` (the oldest beyond :data:`TOKENS_PER_USER` are deleted)."""
    key = secrets.token_urlsafe(32)
    with transaction.atomic():
        token = ApiToken.objects.create(
            user=user, digest=token_digest(key), prefix=key[: ApiToken.PREFIX_LENGTH]
        )
        stale = list(
            ApiToken.objects.filter(user=user)
            .order_by("-created_at", "-pk")
            .values_list("pk", flat=True)[TOKENS_PER_USER:]
        )
        if stale:
            ApiToken.objects.filter(pk__in=stale).delete()
    return IssuedToken(key=key, user=user, token=token)


def token_user(*, key: str) -> tuple[Any, ApiToken] | None:
    """The active user a presented key belongs to, and its token; None for no such token."""
    token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
    if token is None or not token.user.is_active:
        return None
    return token.user, token


def token_obtain(*, username: str, password: str, request: Any) -> IssuedToken:
    """A new API token for the user with these credentials.

    Failed attempts count against the username and the caller's address
    (``api.authentication``): once either is locked out, even the right password is refused
    with :class:`api.authentication.LockedOut` (but a name's lock-out from a known-good
    address or browser: :class:`api.authentication.LoginHandler`).
    """
    from api.authentication import LockedOut, login_succeeded  # imports DRF and axes

    user = authenticate(request, username=username, password=password)
    if user is None:
        # Set by axes when the name or the address was locked out, or this failure was the
        # last one allowed.
        if getattr(request, "axes_locked_out", False):
            raise LockedOut()
        raise ApplicationError(
            "unable to log in with these credentials", code="invalid_credentials"
        )
    login_succeeded(request, user)
    return token_issue(user=user)


def token_revoke(*, user: Any) -> bool:
    """Delete every API token of the user; False if there was none."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return bool(deleted)


# ---------------------------------------------------------------------------------------------
# User names
# ---------------------------------------------------------------------------------------------

# Letters that look like a Latin letter but are not one, even with their accents taken off
# (dotless i and j, letters with a stroke, Cyrillic and Greek letters drawn like Latin ones),
# as they are after case folding. Some look like one Latin letter as capitals and like another
# as small letters (Greek Η/η: H/n): each name gets two keys, one read as small letters, one as
# capitals, and two accounts may share neither.
_BOTH = {
    "ı": "i", "ȷ": "j", "ł": "l", "ƚ": "l", "đ": "d", "ħ": "h", "ø": "o", "ŧ": "t",
    "а": "a", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o", "р": "p",
    "ԛ": "q", "ѕ": "s", "с": "c", "у": "y", "ԝ": "w", "х": "x", "ԁ": "d",
    "α": "a", "ι": "i", "κ": "k", "ο": "o", "ρ": "p", "χ": "x",
}  # fmt: skip
_AS_SMALL = str.maketrans(
    {**_BOTH, "γ": "y", "η": "n", "μ": "u", "ν": "v", "υ": "u", "τ": "t",
     "г": "r", "п": "n", "ь": "b", "к": "k"}
)  # fmt: skip
_AS_CAPITALS = str.maketrans(
    {**_BOTH, "β": "b", "ε": "e", "ζ": "z", "η": "h", "μ": "m", "ν": "n", "τ": "t", "υ": "y",
     "в": "b", "к": "k", "м": "m", "н": "h", "т": "t"}
)  # fmt: skip


def username_keys(name: str) -> tuple[str, str]:
    """The forms in which user names are compared: two accounts may share neither.

    NFKC (full-width and other compatibility forms become the plain letter), case folding
    (``ß`` is ``ss``), the accents taken off (every combining mark after NFKD: the dot of
    ``İ``, the accent of ``é``), then the look-alike letters replaced by the Latin letter they
    imitate as small letters (first key) or as capitals (second key), and NFC again.

    >>> username_keys("ALİCE"), username_keys("malloryı"), username_keys("Ｂｏｂ")
    (('alice', 'alice'), ('malloryi', 'malloryi'), ('bob', 'bob'))
    >>> username_keys("José") == username_keys("jose"), username_keys("Straße")
    (True, ('strasse', 'strasse'))
    >>> username_keys("раураl")  # Cyrillic р, а, у, а
    ('paypal', 'paypal')
    >>> username_keys("ΝΙΚΗ") == username_keys("νικη"), username_keys("ΝΙΚΗ")  # Greek
    (True, ('vikn', 'nikh'))
    """
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name).casefold())
    bare = "".join(char for char in folded if not unicodedata.combining(char))
    return (
        unicodedata.normalize("NFC", bare.translate(_AS_SMALL)),
        unicodedata.normalize("NFC", bare.translate(_AS_CAPITALS)),
    )


def username_check(*, username: str, user: Any = None) -> None:
    """Raise ``ValidationError`` if ``username`` looks like the name of another account than
    ``user`` (None: a new account)."""
    small, capitals = username_keys(username)
    if max(len(small), len(capitals)) > UsernameKey.MAX_LENGTH:
        raise ValidationError("this name is too long once normalised", code="username_invalid")
    holders = UsernameKey.objects.filter(Q(key=small) | Q(capital_key=capitals))
    if user is not None and user.pk is not None:
        holders = holders.exclude(user_id=user.pk)
    holder = holders.select_related("user").first()
    if holder is not None:
        raise ValidationError(
            f"the name {username!r} is taken: it looks like {holder.user.get_username()!r}",
            code="username_taken",
        )


def username_key_store(*, user: AbstractBaseUser) -> None:
    """Write the look-alike key of the user's current name (after the user's row is saved).

    Raises ``IntegrityError`` when another account holds that key (two look-alike names saved
    at the same moment: the unique index refuses the second).
    """
    small, capitals = username_keys(user.get_username())
    with transaction.atomic():
        UsernameKey.objects.update_or_create(
            user_id=user.pk, defaults={"key": small, "capital_key": capitals}
        )


# ---------------------------------------------------------------------------------------------
# Sign-up
# ---------------------------------------------------------------------------------------------


def signup_allowed() -> bool:
    return bool(getattr(settings, "TAPIS_ALLOW_SIGNUP", False))


def _signup_key(request: Any) -> str:
    from api.authentication import client_address

    return f"tapis:signups:{client_address(request)}"


def _check_signups(request: Any) -> None:
    """ApplicationError ``signup_limit`` if the caller's address signed up
    ``TAPIS_SIGNUPS_PER_HOUR`` accounts in the hour since its first (the shared cache counts
    them: :func:`_count_signup`)."""
    limit = max(1, int(settings.TAPIS_SIGNUPS_PER_HOUR))
    if int(cache.get(_signup_key(request), 0)) >= limit:
        raise ApplicationError(
            f"this address signed up {limit} account{'s' if limit != 1 else ''} in the last "
            "hour, the most allowed: "
            "try again later",
            code="signup_limit",
            extra={"max_per_hour": limit},
        )


def _count_signup(request: Any) -> None:
    key = _signup_key(request)
    if not cache.add(key, 1, timeout=3600):
        try:
            cache.incr(key)
        except ValueError:  # expired meanwhile: a new hour
            cache.add(key, 1, timeout=3600)


def user_signup(
    *, username: str, password: str, email: str = "", request: Any = None
) -> IssuedToken:
    """A new account and its first API token, if the service allows sign-up.

    Refused while the caller's address (or the name asked for) is locked out for failed
    logins; a refused name counts as a failed login of the address, so that sign-up cannot be
    used to probe which names exist faster than logging in could. An address may sign up
    ``TAPIS_SIGNUPS_PER_HOUR`` accounts in an hour (``signup_limit``).
    """
    from api.authentication import raise_if_locked_out, record_failure

    if not signup_allowed():
        raise ApplicationError("this service does not allow sign-up", code="signup_closed")
    if request is not None:
        raise_if_locked_out(request, username=username)
    user_model = get_user_model()
    candidate = user_model(username=username, email=email)
    try:
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise ApplicationError(
            " ".join(exc.messages), code="weak_password", extra={"field": "password"}
        ) from None
    if request is not None:
        _check_signups(request)
    try:
        username_check(username=username)
        with transaction.atomic():
            user = user_model.objects.create_user(username=username, email=email, password=password)
            issued = token_issue(user=user)
        if request is not None:
            _count_signup(request)
    except (ValidationError, IntegrityError) as exc:
        if request is not None:
            record_failure(request)
        message = (
            " ".join(exc.messages)
            if isinstance(exc, ValidationError)
            else f"the name {username!r} is taken"
        )
        raise ApplicationError(
            message, code="username_taken", extra={"field": "username"}
        ) from None
    return issued
