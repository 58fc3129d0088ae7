"""Typed readers for the environment variables that configure Tapis.

Every variable the settings read goes through these helpers, which record its name in
``READ``: the settings expose that set as ``ENVIRONMENT_VARIABLES`` so that tests can check
that the docker files and the README name only (and all) the variables Tapis understands.
"""

from __future__ import annotations

import os
from typing import overload

from django.core.exceptions import ImproperlyConfigured

READ: set[str] = set()

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


@overload
def env_str(name: str) -> str | None: ...
@overload
def env_str(name: str, default: str) -> str: ...
def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's value, ``default`` when it is unset or empty."""
    READ.add(name)
    value = os.environ.get(name, "").strip()
    return value or default


def env_bool(name: str, *, default: bool) -> bool:
    """A yes/no variable: 1/true/yes/on or 0/false/no/off (any case)."""
    READ.add(name)
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r}: expected one of 1/true/yes/on or 0/false/no/off")


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list (``" a.example, b.example ,"`` -> two items); blanks ignored."""
    READ.add(name)
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def email_settings(url: str | None) -> dict[str, object] | None:
    """Django's e-mail settings from an ``EMAIL_URL``; None for no URL.

    >>> email_settings("smtp://me%40x.org:p%2Fw@mail.x.org:587")["EMAIL_HOST_PASSWORD"]
    'p/w'
    >>> email_settings("console://")["EMAIL_BACKEND"]
    'django.core.mail.backends.console.EmailBackend'
    """
    from urllib.parse import unquote, urlsplit

    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme == "console":
        return {"EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend"}
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        raise ImproperlyConfigured(
            f"EMAIL_URL={url!r}: expected smtp://user:password@host:587, smtps://... or console://"
        )
    secure = parts.scheme == "smtps"
    return {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": parts.port or (465 if secure else 587),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_SSL": secure,
        "EMAIL_USE_TLS": not secure,
    }
