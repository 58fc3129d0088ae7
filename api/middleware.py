"""Requests refused before any view: a URL longer than any the site needs (414).

Under ``/api/`` the answer is the API's error shape; elsewhere a short plain text. The web
server in front has a longer limit of its own (gunicorn: 4094 bytes for the request line;
docs/operations.md): between the two, Tapis answers.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from api.exceptions import error_body

# Longer than any URL of the site or the API (the longest, a list with every filter, is a few
# hundred characters), shorter than the web servers' own limits.
MAX_URL_LENGTH = 2048


class UrlLengthMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        length = len(request.META.get("PATH_INFO", "")) + len(request.META.get("QUERY_STRING", ""))
        if length <= MAX_URL_LENGTH:
            return self.get_response(request)
        message = f"The URL is {length} characters long; at most {MAX_URL_LENGTH} are accepted."
        if request.path.startswith("/api/"):
            return JsonResponse(error_body("uri_too_long", message), status=414)
        return HttpResponse(message, status=414, content_type="text/plain; charset=utf-8")
