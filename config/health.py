"""``/healthz``: is this Tapis instance able to do its work?

The report has parts, each with ``ok`` and a ``detail`` a person can act on:

* ``database``: a ``SELECT 1`` on the default database;
* ``broker``: a connection to the Celery broker;
* ``workers``: how many Celery workers answered a ping within ``PING_TIMEOUT`` seconds
  (none is a failure: tournaments would never be played);
* ``heartbeats``: every worker's own heartbeat (last seen, what it plays, alive, gone, stopped
  or out of rotation: a worker that took itself out after a local error is a failure);
* ``sweep``: when the sweep last ran (late by more than two periods while a tournament runs
  is a failure: nothing would re-queue a dead worker's tables);
* ``tournaments``: running tournaments with a failed table (``needs_attention``) or with tables
  waiting while nothing is played (``stalled``): either is a failure.

``status`` is ``ok`` when every part is, ``fail`` otherwise, with ``failing`` naming the parts
that are not; the answer is HTTP 200 or 503 accordingly.

Everyone gets ``{"status": ...}`` and nothing more: the parts name the broker and the workers'
host names. Staff (logged in, or with their API token) and monitoring with the
``TAPIS_HEALTH_TOKEN`` (header ``X-Health-Token``) get the whole report.

A report costs a web thread about a second (the ping waits for the workers) and a broadcast to
every worker: it is computed at most once every ``CACHE_SECONDS`` across every thread and
process sharing the cache (a lock in the cache: the first request after that period computes,
the others answer from the last report), and ``/healthz`` is throttled like the API.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.core.cache import caches
from django.db import connection
from django.utils.cache import add_never_cache_headers
from rest_framework.exceptions import Throttled
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.permissions import AllowAny
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.celery import app as celery_app

PING_TIMEOUT = 1.0  # seconds
# A report serves every request for this long.
CACHE_SECONDS = 5.0
# An older report still answers while one request computes the next; past this, the others
# wait for the new one (for at most WAIT_SECONDS).
STALE_SECONDS = 60.0
# The longest one computation may hold the lock (then another request may start one).
LOCK_SECONDS = 30
WAIT_SECONDS = 10.0
POLL_SECONDS = 0.05

REPORT_KEY = "healthz:report"
LOCK_KEY = "healthz:computing"
TOKEN_HEADER = "X-Health-Token"

Part = dict[str, Any]
Report = dict[str, Any]


def _failure(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def _without_password(url: str) -> str:
    """``url`` with its password, if any, masked.

    >>> _without_password("redis://:s3cret@cache:6379/0")
    'redis://:**@cache:6379/0'
    """
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":**@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def check_database() -> Part:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return {"ok": False, "detail": f"unreachable: {_failure(exc)}"}
    return {"ok": True, "detail": f"{connection.vendor} reachable"}


def check_broker() -> Part:
    try:
        with celery_app.connection_for_write() as conn:
            uri = _without_password(conn.as_uri(include_password=True))
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
    except Exception as exc:
        return {"ok": False, "detail": f"unreachable: {_failure(exc)}"}
    return {"ok": True, "detail": f"{uri} reachable"}


def check_workers(*, broker_ok: bool) -> Part:
    if not broker_ok:
        return {"ok": False, "count": 0, "hostnames": [], "detail": "not asked: no broker"}
    try:
        replies = celery_app.control.ping(timeout=PING_TIMEOUT)
    except Exception as exc:
        return {"ok": False, "count": 0, "hostnames": [], "detail": f"ping failed: {_failure(exc)}"}
    hostnames = sorted(name for reply in replies for name in reply)
    count = len(hostnames)
    if count == 0:
        detail = f"no worker answered a ping within {PING_TIMEOUT:g} s"
    else:
        detail = f"{count} worker{'s' if count > 1 else ''} answered a ping"
    return {"ok": count > 0, "count": count, "hostnames": hostnames, "detail": detail}


def summarize(parts: dict[str, Part]) -> Report:
    """The report of these parts: ``status``, ``failing``, ``checked_at``, then each part.

    >>> summarize({"a": {"ok": True, "detail": "fine"}, "b": {"ok": False, "detail": "down"}})[
    ...     "failing"
    ... ]
    ['b']
    """
    failing = [name for name, part in parts.items() if not part["ok"]]
    return {
        "status": "fail" if failing else "ok",
        "failing": failing,
        "checked_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **parts,
    }


def health_report() -> Report:
    """Check every part now (about ``PING_TIMEOUT`` seconds).

    A new part is one more entry of ``parts``: a dict with ``ok`` and ``detail`` (and any
    figures of its own); ``status`` and ``failing`` follow from it."""
    parts: dict[str, Part] = {"database": check_database(), "broker": check_broker()}
    parts["workers"] = check_workers(broker_ok=parts["broker"]["ok"])
    if parts["database"]["ok"]:
        parts.update(check_operations())
    return summarize(parts)


def check_operations() -> dict[str, Part]:
    """The parts read from the database (tournaments.operations): each worker's own heartbeat,
    the sweep, and the tournaments that need attention or make no progress."""
    from tournaments import operations

    try:
        workers = operations.worker_states()
        sweep = operations.sweep_state()
        attention = operations.tournaments_needing_attention()
        stalled = operations.tournaments_stalled()
    except Exception as exc:
        return {"operations": {"ok": False, "detail": f"not read: {_failure(exc)}"}}
    broken = [w.hostname for w in workers if w.state == "out of rotation"]
    alive = sum(w.state in ("alive", "out of rotation") for w in workers)
    heartbeats: Part = {
        "ok": not broken,
        "alive": alive,
        "workers": [w.as_json() for w in workers],
        "detail": (
            f"out of rotation: {', '.join(broken)}"
            if broken
            else f"{alive} worker{'s' if alive != 1 else ''} heard from lately"
        ),
    }
    problems = []
    if attention:
        problems.append(f"failed tables (re-run them): {attention}")
    if stalled:
        problems.append(f"no progress while tables wait: {stalled}")
    tournaments: Part = {
        "ok": not problems,
        "needs_attention": list(attention),
        "stalled": list(stalled),
        "detail": "; ".join(problems) or "every running tournament is moving",
    }
    return {"heartbeats": heartbeats, "sweep": sweep.as_json(), "tournaments": tournaments}


def _now() -> float:
    return time.time()


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def cached_report() -> Report:
    """The last report if it is at most ``CACHE_SECONDS`` old, else a new one, computed by one
    request at a time across every process sharing the default cache."""
    cache = caches["default"]
    try:
        entry = cache.get(REPORT_KEY)
        if entry is not None and _now() - entry["at"] < CACHE_SECONDS:
            return dict(entry["report"])
        if cache.add(LOCK_KEY, 1, LOCK_SECONDS):
            try:
                report = health_report()
                cache.set(REPORT_KEY, {"at": _now(), "report": report}, STALE_SECONDS)
            finally:
                cache.delete(LOCK_KEY)
            return report
        if entry is not None:  # another request is computing: the last report answers
            return dict(entry["report"])
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            _sleep(POLL_SECONDS)
            entry = cache.get(REPORT_KEY)
            if entry is not None:
                return dict(entry["report"])
    except Exception as exc:
        # Without the cache, computing here would let every request ping the workers again.
        return summarize({"cache": {"ok": False, "detail": f"unreachable: {_failure(exc)}"}})
    detail = f"no report within {WAIT_SECONDS:g} s: another request is still computing it"
    return summarize({"report": {"ok": False, "detail": detail}})


def may_see_details(request: Request) -> bool:
    """Staff, or a request with the monitoring token."""
    if getattr(request.user, "is_staff", False):
        return True
    expected = getattr(settings, "TAPIS_HEALTH_TOKEN", "")
    given = request.headers.get(TOKEN_HEADER, "")
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


class _AlwaysJSON(BaseContentNegotiation):
    """A monitor's ``Accept`` does not matter: the answer is JSON."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, str(renderer.media_type)


class HealthView(APIView):
    """``GET /healthz``: 200 and ``{"status": "ok"}``, or 503 and ``{"status": "fail"}``; the
    whole report for staff and for the monitoring token."""

    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _AlwaysJSON
    schema = None

    def check_throttles(self, request: Request) -> None:
        try:
            super().check_throttles(request)
        except Throttled:
            raise
        except Exception:
            pass  # the cache is down: the report says so, and costs nothing

    def get(self, request: Request) -> Response:
        report = cached_report()
        body = report if may_see_details(request) else {"status": report["status"]}
        response = Response(body, status=200 if report["status"] == "ok" else 503)
        add_never_cache_headers(response)
        return response


healthz = HealthView.as_view()
