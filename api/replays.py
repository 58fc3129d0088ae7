"""The lean path of the most requested endpoint: ``GET /api/v1/deals/{id}/``.

A replay is rendered once, when its table is recorded, and never changes: answering a request
for it is one query and the stored bytes. Through Django's handler, its middleware and DRF
(request wrapper, content negotiation, two authenticators, throttles, permissions), the
server spent about three times what the query costs on each answer (bench/api.py).

:class:`LeanReplays` wraps the WSGI application (``config/wsgi.py``) and answers the common
case itself; every other request goes on, unchanged, to Django and
:class:`api.views.deals.DealReplay`:

* only ``GET``, without a query string, an ``Authorization`` header or a session cookie (an
  anonymous client: the answer is the same for everyone), for a media type JSON satisfies,
  for a Host the site serves, and no redirect to HTTPS due;
* only a replay that may be shown (its table finished; in duplicate play, its round) and is
  stored: a hidden, missing or unstored deal goes to the view, which says why in the API's
  error shape;
* the same throttles as the view, counting the request the same way, and the same 429;
* Django's request signals around it, as its handler sends them (they close the database
  connections that are too old or broken); anything that fails on the way is logged and the
  request handed on.

Its answer is the view's, byte for byte and header for header (the headers of
``SecurityMiddleware`` and ``XFrameOptionsMiddleware`` included); the tests compare them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core import signals
from django.core.exceptions import DisallowedHost
from django.core.handlers.wsgi import WSGIRequest
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.middleware.clickjacking import XFrameOptionsMiddleware
from django.middleware.security import SecurityMiddleware
from django.urls import reverse
from rest_framework.exceptions import Throttled
from rest_framework.renderers import JSONRenderer

from tournaments import selectors

from . import caching
from .exceptions import exception_handler
from .views.deals import DealReplay

logger = logging.getLogger(__name__)

# An answer as WSGI sends it: status line, headers, body.
Answer = tuple[str, list[tuple[str, str]], bytes]

# Media ranges of an Accept header that the API's one renderer (JSON) satisfies.
_JSON_RANGES = frozenset({"application/json", "application/*", "*/*"})


def accepts_json(accept: str) -> bool:
    """Whether DRF's content negotiation picks JSON for the header ``accept`` (conservatively:
    a media range with parameters other than ``q`` does not count).

    >>> accepts_json(""), accepts_json("text/html, */*;q=0.8"), accepts_json("text/html")
    (True, True, False)
    >>> accepts_json("application/json; indent=4")
    False
    """
    if not accept.strip():
        return True
    for media_range in accept.split(","):
        media_type, *params = media_range.split(";")
        if media_type.strip().lower() in _JSON_RANGES and all(
            param.strip().lower().startswith("q=") for param in params
        ):
            return True
    return False


def _unused(request: HttpRequest) -> HttpResponseBase:
    raise AssertionError("only the middleware's own steps are called")


class LeanReplays:
    """The WSGI application ``application`` with the lean replay path in front (see the
    module's documentation)."""

    def __init__(self, application: WSGIApplication) -> None:
        self.application = application
        self.view = DealReplay()
        self.view.head = self.view.get  # type: ignore[attr-defined]  # as View.setup() does
        self.allow = ", ".join(self.view.allowed_methods)
        self.cache_control = f"public, max-age={caching.TIMEOUT}"
        # "/api/v1/deals/", from the URLconf (paths below the script name: PATH_INFO).
        self.prefix = reverse("api:deal-replay", args=[0]).removesuffix("0/")
        self.security = SecurityMiddleware(_unused)
        self.frame_options = XFrameOptionsMiddleware(_unused)
        # An answer's headers but its length, made once (by request.is_secure(): HSTS).
        self.headers: dict[bool, list[tuple[str, str]]] = {}

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("REQUEST_METHOD") == "GET" and environ.get("PATH_INFO", "").startswith(
            self.prefix
        ):
            answer = self.respond(environ)
            if answer is not None:
                status, headers, body = answer
                start_response(status, headers)
                return [body]
        return self.application(environ, start_response)

    def respond(self, environ: WSGIEnvironment) -> Answer | None:
        """The lean answer, or None to hand the request on; between Django's request
        signals."""
        signals.request_started.send(sender=self.__class__, environ=environ)
        # Without the health check (a "SELECT 1" round trip before the first query of each
        # request, CONN_HEALTH_CHECKS): if the connection has died, the query fails, this
        # path hands the request on, and Django's handler checks and opens a new one.
        connection.health_check_done = True  # type: ignore[attr-defined]
        try:
            # A copy: WSGIRequest rewrites its environ (the decoded path), which Django
            # must get as the server gave it if the request goes on.
            return self.answer(WSGIRequest(dict(environ)))
        except DisallowedHost:
            return None  # Django's answer: 400
        except Exception:
            logger.exception("the lean replay path failed: the view answers instead")
            return None
        finally:
            signals.request_finished.send(sender=self.__class__)

    def answer(self, request: HttpRequest) -> Answer | None:
        number = request.path_info.removeprefix(self.prefix).removesuffix("/")
        meta = request.META
        if (
            request.path_info != f"{self.prefix}{number}/"
            # What the URL's <int:pk> takes: ASCII digits (isdigit() alone takes "²").
            or not (number.isascii() and number.isdigit())
            or meta.get("QUERY_STRING")
            or "HTTP_AUTHORIZATION" in meta
            or settings.SESSION_COOKIE_NAME in request.COOKIES
            or not accepts_json(meta.get("HTTP_ACCEPT", ""))
            or self.security.process_request(request) is not None  # a redirect to HTTPS
        ):
            return None
        request.get_host()  # DisallowedHost for a Host the site does not serve
        stored = selectors.deal_replay_stored(deal_id=int(number))
        if stored is None or not stored.visible or stored.document is None:
            return None  # the view says why: 404, or 403 while it is hidden
        request.user = AnonymousUser()  # what the throttles count by (with the address)
        refused = self.throttled(request)
        if refused is not None:
            return self.finish(request, refused)
        body = stored.document.encode()
        secure = request.is_secure()
        headers = self.headers.get(secure)
        if headers is None:  # the first answer (over HTTP or HTTPS) sets them once for all
            template = HttpResponse(content_type="application/json")
            template["Cache-Control"] = self.cache_control
            headers = self.headers[secure] = self.finish(request, template)[1][:-1]
        return "200 OK", [*headers, ("Content-Length", str(len(body)))], body

    def finish(self, request: HttpRequest, response: HttpResponse) -> Answer:
        """``response`` with the headers the view's answer gets from DRF and from the
        middleware, as WSGI wants it (``Content-Length`` last)."""
        response["Allow"] = self.allow
        self.frame_options.process_response(request, response)
        self.security.process_response(request, response)
        headers = [item for item in response.items() if item[0] != "Content-Length"]
        headers.append(("Content-Length", str(len(response.content))))
        return f"{response.status_code} {response.reason_phrase}", headers, response.content

    def throttled(self, request: HttpRequest) -> HttpResponse | None:
        """The view's 429 if one of its throttles refuses ``request`` (as DRF's
        ``check_throttles`` decides it, counting the request the same way), else None."""
        waits = [
            throttle.wait()
            for throttle in self.view.get_throttles()
            if not throttle.allow_request(request, self.view)  # type: ignore[arg-type]
        ]
        if not waits:
            return None
        known = [wait for wait in waits if wait is not None]
        response: Any = exception_handler(Throttled(max(known, default=None)), {})
        response.accepted_renderer = JSONRenderer()
        response.accepted_media_type = "application/json"
        response.renderer_context = {}
        return response.render()  # type: ignore[no-any-return]
