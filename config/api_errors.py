"""Under ``/api/`` an unexpected error (a bug, the database away) is answered in the API's
JSON error shape with a 500, DEBUG or not: clients parse JSON, and Django's debug page (with
DEBUG=1, on a developer's machine) is hundreds of kilobytes of HTML. The error is logged as Django
logs a server error. Other paths keep Django's own handling."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from api.exceptions import server_error

log = logging.getLogger("django.request")


class ApiServerErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not request.path.startswith("/api/"):
            return None
        log.error(
            "Internal Server Error: %s",
            request.path,
            exc_info=(type(exception), exception, exception.__traceback__),
            extra={"status_code": 500, "request": request},
        )
        return server_error(request)
