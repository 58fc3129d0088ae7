"""gunicorn's thread worker (``gthread``), answering an over-long request line in the API's
JSON error shape.

gunicorn refuses a request line over ``--limit-request-line`` (4094 bytes) before the
application sees it, with a page of HTML. Tapis answers every error under ``/api/`` as JSON
(docs/api.md): this worker writes that 414 instead. The path was not read (the line was too
long to be), so every path gets it. Everything else is gunicorn's ``gthread`` worker as is.

    gunicorn config.wsgi:application --worker-class config.gunicorn.ThreadWorker ...
"""

from __future__ import annotations

import json
from typing import Any

from gunicorn import util
from gunicorn.http.errors import LimitRequestLine
from gunicorn.workers.gthread import ThreadWorker as GunicornThreadWorker


class ThreadWorker(GunicornThreadWorker):  # type: ignore[misc]
    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        if not isinstance(exc, LimitRequestLine):
            super().handle_error(req, client, addr, exc)
            return
        # Here, not at the top: gunicorn imports this module before the application (Django).
        from api.exceptions import error_body

        self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        message = f"The request line is over {self.cfg.limit_request_line} bytes."
        body = json.dumps(error_body("uri_too_long", message)).encode()
        head = (
            "HTTP/1.1 414 URI Too Long\r\n"
            "Connection: close\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except Exception:
            self.log.debug("Failed to send error message.")
