"""What every page's base template needs to know beyond the request and the user."""

from __future__ import annotations

from django.http import HttpRequest

from api import accounts


def site(request: HttpRequest) -> dict[str, bool]:
    """``signup_open``: the service takes new accounts (the navigation offers Sign up)."""
    return {"signup_open": accounts.signup_allowed()}
