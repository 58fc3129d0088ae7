"""The lean path of the most requested endpoint: ``GET /api/v1/deals/{id}/``.

A replay is rendered once, when its table is recorded, and never changes: answering a request
for it is one query and the stored bytes. Through Django's whole middleware stack and DRF
(request wrapper, content negotiation, two authenticators, throttles, permissions) that
answer cost the server three times what the query does. :class:`ReplayMiddleware` answers
the common case itself, early in the middleware stack (after ``SecurityMiddleware``, which
adds its headers to the answer as to any other), and hands everything else on unchanged to
:class:`api.views.DealReplay`:

* only ``GET``, without a query string, an ``Authorization`` header or a session cookie (an
  anonymous client: the answer is the same for everyone), for a media type JSON satisfies;
* only a replay that may be shown (its table finished; in duplicate play, its round) and is
  stored: a hidden, missing or unstored deal goes to the view, which says why in the API's
  error shape;
* the same throttles as the view, counting the request the same way, and the same 429.

The answer is the view's, byte for byte and header for header (tests/api/test_api_replays.py).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse
from rest_framework.exceptions import Throttled
from rest_framework.renderers import JSONRenderer

from tournaments import selectors

from . import caching
from .exceptions import exception_handler
from .views import DealReplay

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


class ReplayMiddleware:
    """Answers anonymous ``GET`` requests for the replay of a deal that may be shown (see the
    module's documentation); hands every other request on."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.view = DealReplay()
        self.view.head = self.view.get  # type: ignore[attr-defined]  # as View.setup() does
        self.allow = ", ".join(self.view.allowed_methods)
        self.cache_control = f"public, max-age={caching.TIMEOUT}"
        self.prefix: str | None = None  # "/api/v1/deals/", from the URLconf, on first use

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if self.prefix is None:
            self.prefix = reverse("api:deal-replay", args=[0]).removesuffix("0/")
        path = request.path
        if request.method == "GET" and path.startswith(self.prefix) and path.endswith("/"):
            number = path[len(self.prefix) : -1]
            # What the URL's <int:pk> accepts: ASCII digits only (isdigit() alone takes "²").
            if number.isascii() and number.isdigit():
                response = self.answer(request, int(number))
                if response is not None:
                    return response
        return self.get_response(request)

    def answer(self, request: HttpRequest, pk: int) -> HttpResponseBase | None:
        """The answer to a ``GET`` of the replay of deal ``pk``, or None to leave it to the
        view."""
        meta = request.META
        if (
            meta.get("QUERY_STRING")
            or "HTTP_AUTHORIZATION" in meta
            or settings.SESSION_COOKIE_NAME in request.COOKIES
            or not accepts_json(meta.get("HTTP_ACCEPT", ""))
        ):
            return None
        request.get_host()  # refuses a Host the site does not serve, as CommonMiddleware does
        stored = selectors.deal_replay_stored(deal_id=pk)
        if stored is None or not stored.visible or stored.document is None:
            return None  # the view says why: 404, or 403 while it is hidden
        request.user = AnonymousUser()  # what the throttles count by (with the address)
        refused = self.throttled(request)
        if refused is not None:
            return refused
        body = stored.document.encode()
        response = HttpResponse(body, content_type="application/json")
        # The headers the view's answer gets from DRF and from the middleware after this one.
        response["Content-Length"] = str(len(body))
        response["Cache-Control"] = self.cache_control
        response["Allow"] = self.allow
        response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        return response

    def throttled(self, request: HttpRequest) -> HttpResponseBase | None:
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
        response = exception_handler(Throttled(max(known, default=None)), {})
        assert response is not None
        response.accepted_renderer = JSONRenderer()
        response.accepted_media_type = "application/json"
        response.renderer_context = {}  # type: ignore[attr-defined]
        response["Allow"] = self.allow
        response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
        rendered = response.render()
        rendered["Content-Length"] = str(len(rendered.content))
        return rendered
