"""Throttling of anonymous and authenticated clients.

The rates are ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["anon"]`` and ``["user"]`` (set from
``TAPIS_API_THROTTLE_ANON`` and ``TAPIS_API_THROTTLE_USER``, e.g. ``60/minute``; ``off`` turns
one off). Unlike DRF's own classes, these read the rates when a request comes, not when the
module is imported, so a changed setting takes effect at once.
"""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _SettingsRate:
    def get_rate(self) -> str | None:
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(getattr(self, "scope", ""))
        return str(rate) if rate else None


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    """Requests of clients that are not logged in, counted per IP address."""


class UserThrottle(_SettingsRate, UserRateThrottle):
    """Requests of logged-in clients, counted per user (anonymous ones per IP address)."""
