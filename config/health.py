"""``/healthz``: is this Tapis instance able to do its work?

Three parts, each reported with ``ok`` and a ``detail`` a person can act on:

* ``database``: a ``SELECT 1`` on the default database;
* ``broker``: a connection to the Celery broker;
* ``workers``: how many Celery workers answered a ping within ``PING_TIMEOUT`` seconds
  (none is a failure: tournaments would never be played).

The answer is HTTP 200 only when all three are fine, 503 otherwise, with ``failing`` naming
the parts that are not.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.celery import app as celery_app

PING_TIMEOUT = 1.0  # seconds

Part = dict[str, Any]


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


def health_report() -> dict[str, Any]:
    database = check_database()
    broker = check_broker()
    workers = check_workers(broker_ok=broker["ok"])
    parts = {"database": database, "broker": broker, "workers": workers}
    failing = [name for name, part in parts.items() if not part["ok"]]
    return {"status": "fail" if failing else "ok", "failing": failing, **parts}


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=503 if report["failing"] else 200)
