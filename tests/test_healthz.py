"""/healthz reports the database, the broker and the workers, each correctly, to staff and to
monitoring with the token; everyone else gets the status alone, from a report computed at most
once per period however many ask at once, and throttled like the API."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.http import HttpRequest
from django.test import Client

from config import health
from config.health import _without_password

if TYPE_CHECKING:
    from tests.conftest import LiveWorker


BASE_DIR = Path(__file__).resolve().parent.parent


def closed_port() -> int:
    """A local TCP port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


TOKEN = "monitoring-" + "x" * 40
REDIS = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1").rsplit("/", 1)[0]


@pytest.fixture(autouse=True)
def _fresh_report(settings: Any) -> None:
    """Every test computes its own report; the monitoring token is set."""
    settings.TAPIS_HEALTH_TOKEN = TOKEN
    cache.delete_many([health.REPORT_KEY, health.LOCK_KEY])


def get_health(client: Client, **headers: str) -> tuple[int, dict[str, Any]]:
    """The whole report, as monitoring with the token asks for it."""
    response = client.get("/healthz", headers={"X-Health-Token": TOKEN, **headers})
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


@pytest.mark.slow
def test_all_up(client: Client, live_worker: LiveWorker) -> None:
    status, report = get_health(client)

    assert status == 200, report
    assert report["status"] == "ok"
    assert report["failing"] == []
    assert report["database"] == {"ok": True, "detail": "postgresql reachable"}
    assert report["broker"]["ok"] is True
    assert report["broker"]["detail"].startswith("redis://")
    assert report["workers"]["ok"] is True
    assert report["workers"]["count"] == 1
    assert report["workers"]["hostnames"][0].startswith("tapis-test-")
    # Everyone else: the status, and nothing that names the broker or the workers.
    public = client.get("/healthz")
    assert (public.status_code, public.json()) == (200, {"status": "ok"})


@pytest.mark.slow
def test_worker_stopped(client: Client, live_worker: LiveWorker) -> None:
    live_worker.stop()

    status, report = get_health(client)

    assert status == 503
    assert report["status"] == "fail"
    assert report["failing"] == ["workers"]
    assert report["database"]["ok"] is True
    assert report["broker"]["ok"] is True
    assert report["workers"] == {
        "ok": False,
        "count": 0,
        "hostnames": [],
        "detail": "no worker answered a ping within 1 s",
    }


@pytest.mark.django_db
def test_broker_down(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # Celery reads CELERY_BROKER_URL from the environment before its own settings.
    monkeypatch.setenv("CELERY_BROKER_URL", f"redis://127.0.0.1:{closed_port()}/0")

    status, report = get_health(client)

    assert status == 503
    assert report["failing"] == ["broker", "workers"]
    assert report["database"]["ok"] is True
    assert report["broker"]["ok"] is False
    assert "unreachable" in report["broker"]["detail"]
    assert "refused" in report["broker"]["detail"].lower()
    assert report["workers"]["detail"] == "not asked: no broker"
    public = client.get("/healthz")
    assert (public.status_code, public.json()) == (503, {"status": "fail"})


def test_database_down() -> None:
    environment = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{closed_port()}/tapis",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    code = (
        "import json, django; django.setup()\n"
        "from config.health import health_report\n"
        "print(json.dumps(health_report()))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(completed.stdout)

    assert "database" in report["failing"]
    assert report["database"]["ok"] is False
    assert report["database"]["detail"].startswith("unreachable: OperationalError")


@pytest.mark.django_db
def test_healthz_is_read_only_and_never_cached(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
    assert "no-cache" in client.head("/healthz")["Cache-Control"]


def test_broker_password_is_masked() -> None:
    assert _without_password("redis://:s3cret@cache:6379/0") == "redis://:**@cache:6379/0"
    assert _without_password("redis://tapis:s3cret@cache/0") == "redis://tapis:**@cache/0"
    assert _without_password("redis://127.0.0.1:6379/1") == "redis://127.0.0.1:6379/1"


def broker_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CELERY_BROKER_URL", f"redis://:s3cret@127.0.0.1:{closed_port()}/0")


@pytest.mark.django_db
def test_only_staff_and_the_token_see_the_details(
    client: Client, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    broker_down(monkeypatch)
    anonymous = client.get("/healthz")
    assert anonymous.json() == {"status": "fail"}
    assert b"127.0.0.1" not in anonymous.content
    for wrong in ("", "monitoring", TOKEN + "x", TOKEN.upper()):
        assert client.get("/healthz", headers={"X-Health-Token": wrong}).json() == {
            "status": "fail"
        }
    status, report = get_health(client)
    assert (status, report["failing"]) == (503, ["broker", "workers"])
    assert "s3cret" not in json.dumps(report)

    User.objects.create_user("plain", password="pw")
    client.login(request=HttpRequest(), username="plain", password="pw")
    assert client.get("/healthz").json() == {"status": "fail"}
    User.objects.create_user("boss", password="pw", is_staff=True)
    client.login(request=HttpRequest(), username="boss", password="pw")
    assert client.get("/healthz").json()["failing"] == ["broker", "workers"]

    # No token configured: an empty header is no token.
    settings.TAPIS_HEALTH_TOKEN = ""
    anonymous_client = Client()
    assert anonymous_client.get("/healthz", headers={"X-Health-Token": ""}).json() == {
        "status": "fail"
    }


@pytest.mark.django_db
def test_healthz_is_throttled_like_the_api(client: Client, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "user": "5/minute"},
    }
    cache.clear()  # the counters of the requests of other tests
    for _ in range(2):
        assert client.get("/healthz").status_code in (200, 503)
    response = client.get("/healthz")
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "throttled"
    assert int(response["Retry-After"]) > 0


@pytest.fixture(params=["locmem", "redis"])
def shared_cache(request: pytest.FixtureRequest, settings: Any) -> str:
    """The cache the web processes share: per process in the demo, Redis in production (where
    the lock in it holds across processes as it does across threads)."""
    if request.param == "redis":
        settings.CACHES = {
            "default": {
                "BACKEND": "api.redis_cache.RedisCache",
                "LOCATION": f"{REDIS}/6",
                "KEY_PREFIX": f"tapis-health-test-{os.getpid()}-{os.urandom(4).hex()}",
            }
        }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    return str(request.param)


class CountedReport:
    """``health_report`` replaced: counts its calls, and the first one holds until ``waiters``
    other requests wait for it (so that they all come while it is being computed)."""

    def __init__(self, waiters: int) -> None:
        self.calls = 0
        self.waiting: set[int] = set()
        self.all_waiting = threading.Event()
        self.waiters = waiters
        self.lock = threading.Lock()

    def report(self) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
        assert self.all_waiting.wait(60), f"only {len(self.waiting)} requests waited"
        return health.summarize({"database": {"ok": True, "detail": "fine"}})

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.waiting.add(threading.get_ident())
            if len(self.waiting) >= self.waiters:
                self.all_waiting.set()
        threading.Event().wait(seconds)


def ask_at_once(clients: int) -> list[tuple[int, dict[str, Any]]]:
    answers: list[tuple[int, dict[str, Any]]] = []

    def ask() -> None:
        response = Client().get("/healthz")
        answers.append((response.status_code, response.json()))

    threads = [threading.Thread(target=ask) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_a_report_is_computed_once_for_many_requests(
    shared_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = CountedReport(waiters=15)
    monkeypatch.setattr(health, "health_report", counted.report)
    monkeypatch.setattr(health, "_sleep", counted.sleep)

    answers = ask_at_once(16)

    assert counted.calls == 1
    assert answers == [(200, {"status": "ok"})] * 16
    # Within the period, the same report answers.
    assert ask_at_once(4) == [(200, {"status": "ok"})] * 4
    assert counted.calls == 1


def test_after_the_period_one_request_computes_while_the_last_report_answers(
    shared_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1_000_000.0]
    monkeypatch.setattr(health, "_now", lambda: clock[0])
    calls: list[str] = []

    def report() -> dict[str, Any]:
        calls.append("computed")
        return health.summarize({"database": {"ok": len(calls) == 1, "detail": "x"}})

    monkeypatch.setattr(health, "health_report", report)
    assert health.cached_report()["status"] == "ok"
    clock[0] += health.CACHE_SECONDS - 0.5
    assert health.cached_report()["status"] == "ok"
    assert len(calls) == 1

    clock[0] += 1  # the report is now too old: the next request computes a new one...
    backend = health.caches["default"]
    assert backend.add(health.LOCK_KEY, 1, 30)  # ...unless another one is computing it:
    assert health.cached_report()["status"] == "ok"  # then the last report answers
    assert len(calls) == 1
    backend.delete(health.LOCK_KEY)
    assert health.cached_report()["status"] == "fail"
    assert len(calls) == 2


def test_the_cache_down(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.CACHES = {
        "default": {
            "BACKEND": "api.redis_cache.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
        }
    }
    monkeypatch.setattr(health, "health_report", lambda: pytest.fail("computed without a lock"))
    response = Client().get("/healthz", headers={"X-Health-Token": TOKEN})
    assert response.status_code == 503
    assert response.json()["failing"] == ["cache"]


# --- issue 13: heartbeats, the sweep, tournaments that need attention -------------------------


def _started_tournament() -> Any:
    from tests.tournaments.factories import enter_builtins, make_tournament
    from tournaments import services

    tournament = make_tournament(rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 4)
    services.tournament_start(tournament=tournament)
    return tournament


@pytest.mark.django_db(transaction=True)
def test_a_failed_table_a_late_sweep_and_a_worker_out_of_rotation_are_reported(
    client: Client,
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from tournaments import services
    from tournaments.models import Housekeeping, Table, WorkerHeartbeat

    tournament = _started_tournament()
    now = timezone.now()
    Housekeeping.objects.create(
        name="sweep", last_run_at=now - timedelta(hours=1), last_done_at=now - timedelta(hours=1)
    )
    WorkerHeartbeat.objects.create(
        hostname="w-full@host", host="host", last_seen=now, playing=[], problem="ENOSPC: full"
    )
    WorkerHeartbeat.objects.create(hostname="w-ok@host", host="host", last_seen=now, playing=[7])
    table = Table.objects.get(tournament=tournament)
    Table.objects.filter(pk=table.pk).update(status=Table.Status.RUNNING, claim_token="t")
    services.table_fail(table_id=table.pk, token="t", error="a bug")

    status, report = get_health(client)

    assert status == 503
    assert {"heartbeats", "sweep", "tournaments"} <= set(report["failing"])
    assert report["tournaments"]["needs_attention"] == [tournament.pk]
    assert "re-run" in report["tournaments"]["detail"]
    assert report["sweep"]["ok"] is False
    assert "late" in report["sweep"]["detail"]
    workers = {w["hostname"]: w for w in report["heartbeats"]["workers"]}
    assert workers["w-full@host"]["state"] == "out of rotation"
    assert workers["w-full@host"]["problem"] == "ENOSPC: full"
    assert (workers["w-ok@host"]["state"], workers["w-ok@host"]["playing"]) == ("alive", [7])
    # The API's progress and the tournament's page flag it too.
    progress = client.get(f"/api/v1/tournaments/{tournament.pk}/progress/").json()
    assert progress["needs_attention"] is True
    page = client.get(f"/tournaments/{tournament.pk}/").content.decode()
    assert 'data-testid="needs-attention"' in page


@pytest.mark.django_db(transaction=True)
def test_a_tournament_with_tables_waiting_and_nothing_played_is_stalled(client: Client) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from tournaments.models import Table

    tournament = _started_tournament()
    Table.objects.filter(tournament=tournament).update(
        queued_at=timezone.now() - timedelta(hours=1)
    )

    status, report = get_health(client)

    assert status == 503
    assert report["tournaments"]["stalled"] == [tournament.pk]
    assert report["tournaments"]["needs_attention"] == []
    assert report["sweep"]["ok"] is False  # a tournament runs and no sweep ever ran
