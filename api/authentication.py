"""Who is calling: hashed API tokens, and the limit on failed logins of every login path.

Tokens
    :class:`TokenAuthentication` reads ``Authorization: Token <key>`` as DRF's does, and finds
    the token by the SHA-256 digest of the key (:class:`api.models.ApiToken`).

Failed logins (django-axes, configured in ``config/settings.py``: ``AXES_*``)
    Every call of ``django.contrib.auth.authenticate(request, username=..., password=...)`` goes
    through axes' backend first: the admin's login, the API's token endpoint, and any login
    page built on Django's ``LoginView``/``AuthenticationForm``. Each failure counts against
    the caller's address (:func:`client_address`, the address the API's throttles count) and
    against the user name tried (:func:`lockout_username`: its look-alike key, so ``ALICE`` and
    ``alice`` share one count); the counts live in the ``default`` cache (Redis in production)
    for ``AXES_COOLOFF_TIME`` after the last failure. At ``AXES_FAILURE_LIMIT`` failures of
    either, logins of that name, or from that address, are refused, the right password
    included, until the cool-off ends or an operator lifts it (:func:`login_unlock`:
    ``manage.py login_unlock``, or the users' admin action). A page sees the refusal as
    ``request.axes_locked_out`` and axes' middleware answers it with :func:`lockout_response`
    (429).

Known-good logins (:class:`LoginHandler`)
    A locked user name alone would let anyone lock any account, the administrator's included.
    So a name's lock-out (not an address's) does not refuse the right password from an
    address that logged into that account in the last :data:`KNOWN_DAYS` days, from a browser
    with the signed known-device cookie a successful login of that account set
    (:class:`KnownDeviceMiddleware`), or from an address nobody failed from: the guesser is
    still held by the lock-out of their own addresses.
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta
from typing import Any

from axes.handlers.cache import AxesCacheHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_ip_address, get_cool_off, get_failure_limit, make_cache_key_list
from axes.models import AccessBase
from django.conf import settings
from django.core.cache import BaseCache
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html
from rest_framework import authentication, exceptions, status
from rest_framework.throttling import BaseThrottle

from api import accounts


class TokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>``, the key looked up by its digest."""

    def authenticate_credentials(self, key: str) -> tuple[Any, Any]:
        found = accounts.token_user(key=key)
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        return found


# ---------------------------------------------------------------------------------------------
# Failed logins
# ---------------------------------------------------------------------------------------------


def lockout_message() -> str:
    minutes = math.ceil(_cool_off_seconds() / 60)
    return (
        "Too many failed logins for this user name or from this address: logins are refused "
        f"for {minutes} minutes after the last failure, or until an operator lifts the lock-out."
    )


class LockedOut(exceptions.APIException):
    """The API's answer to a login while its user name or the caller's address is locked out."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self) -> None:
        super().__init__(lockout_message())
        self.wait = _cool_off_seconds()


def _cool_off_seconds() -> float:
    cool_off = get_cool_off()
    return cool_off.total_seconds() if cool_off else 0.0


def client_address(request: HttpRequest) -> str | None:
    """The caller's address as the API's throttles count it (``TAPIS_NUM_PROXIES``):
    ``AXES_CLIENT_IP_CALLABLE``."""
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]


def lockout_username(request: Any, credentials: dict[str, Any] | None) -> str | None:
    """The user name a login attempt counts against (``AXES_USERNAME_CALLABLE``): the
    look-alike key of the name tried, marked so that it never collides with an address."""
    if credentials is not None:
        name = credentials.get("username")
    else:
        data = getattr(request, "data", None) or getattr(request, "POST", {})
        name = data.get("username") if hasattr(data, "get") else None
    if not isinstance(name, str) or not name:
        return None
    return _username_counter(name)


def _username_counter(name: str) -> str:
    return "user:" + accounts.username_keys(name)[0]


def lockout_parameters(request_or_attempt: Any, credentials: dict[str, Any] | None) -> list[str]:
    """``AXES_LOCKOUT_PARAMETERS``: the address always, the user name when there is one (a
    count of failures without a name would be one count shared by every such attempt)."""
    if isinstance(request_or_attempt, AccessBase):
        username = request_or_attempt.username
    else:
        username = lockout_username(request_or_attempt, credentials)
    return ["ip_address", "username"] if username else ["ip_address"]


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: 429, in the API's error shape under /api/, a page elsewhere."""
    message = lockout_message()
    retry_after = str(math.ceil(_cool_off_seconds()))
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"error": {"code": "locked_out", "message": message, "fields": {}}},
            status=status.HTTP_429_TOO_MANY_REQUESTS,
        )
    else:
        response = HttpResponse(
            format_html(
                '<!doctype html><html lang="en"><head><meta charset="utf-8">'
                "<title>Too many failed logins</title></head><body>"
                '<main><h1>Too many failed logins</h1><p role="alert">{}</p></main>'
                "</body></html>",
                message,
            ),
            status=status.HTTP_429_TOO_MANY_REQUESTS,
        )
    if retry_after != "0":
        response["Retry-After"] = retry_after
    return response


def is_locked_out(request: Any, *, username: str | None = None) -> bool:
    """Whether logins of ``username`` (None: any name) from this request's address are
    refused now. For a page that wants to say so before the form is even sent."""
    if not getattr(settings, "AXES_ENABLED", True):
        return False
    return not AxesProxyHandler.is_allowed(request, {"username": username})


def raise_if_locked_out(request: Any, *, username: str | None = None) -> None:
    """:class:`LockedOut` if :func:`is_locked_out`."""
    if is_locked_out(request, username=username):
        raise LockedOut()


def record_failure(request: Any) -> None:
    """Count a failed attempt against the request's address only (a refused sign-up)."""
    AxesProxyHandler.user_login_failed(
        sender=record_failure, credentials={"username": None}, request=request
    )


def login_unlock(*, username: str | None = None, address: str | None = None) -> int:
    """Lift the lock-out of a user name (any look-alike of it) and/or an address: forget
    their failed logins. Returns how many counts were deleted."""
    if username is None and address is None:
        raise ValueError("name a user name or an address")
    deleted = 0
    if username is not None:
        deleted += AxesProxyHandler.reset_attempts(username=_username_counter(username))
    if address is not None:
        deleted += AxesProxyHandler.reset_attempts(ip_address=address)
    return deleted


# ---------------------------------------------------------------------------------------------
# Known-good logins: a locked user name still lets its owner in
# ---------------------------------------------------------------------------------------------

#: How long a successful login vouches for its address and its browser.
KNOWN_DAYS = 30
KNOWN_DEVICE_COOKIE = "tapis_device"
_KNOWN_DEVICE_SALT = "api.authentication.known-device"


def _counter_key(parameter: str, value: str) -> str:
    """axes' cache key of the count of one lock-out parameter (as axes makes it)."""
    return make_cache_key_list([{parameter: value}])[0]


def _known_address_key(counter: str, address: str) -> str:
    digest = hashlib.sha256(f"{counter}|{address}".encode()).hexdigest()
    return f"tapis-known-login-{digest}"


def _device_mark(counter: str) -> str:
    """What the known-device cookie holds for an account: a digest, not its name."""
    return hashlib.sha256(counter.encode()).hexdigest()[:32]


def _address(request: Any) -> str | None:
    address = getattr(request, "axes_ip_address", None) or get_client_ip_address(request)
    return address if isinstance(address, str) and address else None


class LoginHandler(AxesCacheHandler):  # type: ignore[misc]
    """axes' cache handler (``AXES_HANDLER``), but a user name's lock-out is waived for a
    known-good login (:meth:`name_lock_waived`); an address's lock-out never is."""

    def _counts(self, request: Any, credentials: dict[str, Any] | None) -> tuple[int, int]:
        """The failures counted against the request's address and the name tried."""
        address = _address(request)
        counter = lockout_username(request, credentials)
        by_address = self.cache.get(_counter_key("ip_address", address), 0) if address else 0
        by_name = self.cache.get(_counter_key("username", counter), 0) if counter else 0
        return int(by_address), int(by_name)

    def name_lock_waived(self, request: Any, credentials: dict[str, Any] | None) -> bool:
        """Whether the lock-out of the name tried does not apply to this request: from an
        address nobody failed from, an address that logged into the account within
        :data:`KNOWN_DAYS` days, or a browser with its known-device cookie."""
        counter = lockout_username(request, credentials)
        address = _address(request)
        if counter is None or address is None:
            return False
        if self._counts(request, credentials)[0] == 0:
            return True
        if self.cache.get(_known_address_key(counter, address)) is not None:
            return True
        cookie = request.get_signed_cookie(
            KNOWN_DEVICE_COOKIE,
            default=None,
            salt=_KNOWN_DEVICE_SALT,
            max_age=timedelta(days=KNOWN_DAYS),
        )
        return bool(cookie == _device_mark(counter))

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        by_address, by_name = self._counts(request, credentials)
        limit = get_failure_limit(request, credentials)
        if by_name >= limit and by_address < limit and self.name_lock_waived(request, credentials):
            return by_address
        return max(by_address, by_name)

    def user_login_failed(
        self, sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any
    ) -> None:
        waived = request is not None and self.name_lock_waived(request, credentials)
        super().user_login_failed(sender, credentials, request, **kwargs)
        if waived and getattr(request, "axes_locked_out", False):
            # Only the name's count reached the limit: a wrong password, not a lock-out.
            by_address = self._counts(request, credentials)[0]
            if by_address < get_failure_limit(request, credentials):
                request.axes_locked_out = False

    def user_logged_in(self, sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
        super().user_logged_in(sender, request, user, **kwargs)
        login_succeeded(request, user)


def _handler_cache() -> BaseCache:
    implementation = AxesProxyHandler.get_implementation()
    cache: BaseCache = implementation.cache
    return cache


def login_succeeded(request: Any, user: Any) -> None:
    """Remember a successful login of ``user``: its address for :data:`KNOWN_DAYS` days, and
    its browser (the known-device cookie, set on the answer by :class:`KnownDeviceMiddleware`)."""
    if request is None:
        return
    counter = _username_counter(user.get_username())
    address = _address(request)
    if address is not None:
        _handler_cache().set(
            _known_address_key(counter, address), 1, timeout=KNOWN_DAYS * 24 * 3600
        )
    # A DRF request wraps Django's, which the middleware sees.
    django_request = getattr(request, "_request", request)
    django_request.tapis_known_device = _device_mark(counter)


class KnownDeviceMiddleware:
    """Sets the signed known-device cookie on the answer to a successful login."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = self.get_response(request)
        mark = getattr(request, "tapis_known_device", None)
        if mark:
            response.set_signed_cookie(
                KNOWN_DEVICE_COOKIE,
                mark,
                salt=_KNOWN_DEVICE_SALT,
                max_age=KNOWN_DAYS * 24 * 3600,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
