"""Fixtures shared by the whole test suite.

The suite runs against real services: PostgreSQL (``DATABASE_URL``) and Redis
(``CELERY_BROKER_URL``); ``make test`` sets both. Each test session (each pytest-xdist worker
process) is kept apart from every other run on the same servers:

* its test database gets a suffix naming the host and the process (unless ``--reuse-db``), so
  that two runs at the same time never drop each other's database; the databases of killed
  runs on this host are dropped by the next run;
* its Celery queue and remote-control exchange carry a run id (``CELERY_ISOLATION``), so that
  no other worker takes its tasks or answers its pings.

``live_worker`` starts a real Celery worker in a subprocess against those; see its docstring.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from config.celery import app as celery_app

BASE_DIR = Path(__file__).resolve().parent.parent
# Unique among the runs sharing these servers now, and the same if this module is imported
# twice in one process (``from tests.conftest import LiveWorker``).
HOST_ID = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
RUN_ID = f"{os.getpid()}-{HOST_ID}"
CELERY_ISOLATION = {
    "task_default_queue": f"tapis-test-{RUN_ID}",
    "control_exchange": f"tapis-test-{RUN_ID}",
}
# Before anything sends a task or a ping (both read these once).
celery_app.conf.update(CELERY_ISOLATION)
# The queue of the tests that do not ask for the live worker: nothing consumes it, so the
# session's worker (it keeps running between the tests that use it) never plays a table that
# such a test queued and plays itself (tournament_run_here).
IDLE_QUEUE = f"tapis-test-{RUN_ID}-idle"

WORKER_START_TIMEOUT = 60.0


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
    request: pytest.FixtureRequest,
) -> None:
    """Give this process's test databases a unique name (see the module docstring), and drop
    those that runs on this host left behind when they were killed."""
    from django.conf import settings

    if request.config.getoption("reuse_db", default=False):
        return
    for db in settings.DATABASES.values():
        if db["ENGINE"] != "django.db.backends.postgresql":
            continue
        _drop_abandoned_test_databases(db)
        test = db.setdefault("TEST", {})
        test["NAME"] = f"{test.get('NAME') or 'test_' + db['NAME']}_{HOST_ID}_{os.getpid()}"


def _drop_abandoned_test_databases(db: Mapping[str, Any]) -> None:
    """Drop ``test_..._<HOST_ID>_<pid>`` databases whose process is gone."""
    import psycopg
    from psycopg import sql

    pattern = re.compile(rf"^test_\w*_{HOST_ID}_(\d+)$")
    try:
        with psycopg.connect(
            _database_url({**db, "NAME": "postgres"}), autocommit=True, connect_timeout=5
        ) as conn:
            names = [row[0] for row in conn.execute("SELECT datname FROM pg_database")]
            for name in names:
                match = pattern.match(name)
                if match and not _process_exists(int(match.group(1))):
                    with contextlib.suppress(psycopg.Error):
                        conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error:
        pass  # the database fixtures will report what is wrong with the server


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _database_url(settings_dict: Mapping[str, Any]) -> str:
    """A ``DATABASE_URL`` for a Django PostgreSQL database settings dict."""
    user = quote(str(settings_dict.get("USER") or ""), safe="")
    password = quote(str(settings_dict.get("PASSWORD") or ""), safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = str(settings_dict.get("HOST") or "")
    port = str(settings_dict.get("PORT") or "")
    netloc = f"{credentials}{host}{':' + port if port else ''}"
    return f"postgresql://{netloc}/{quote(str(settings_dict['NAME']), safe='')}"


@dataclass
class LiveWorker:
    """A real ``celery worker`` subprocess serving this test session's queue.

    ``start()`` returns once the worker answers a ping; ``stop()`` is a warm shutdown (the
    worker finishes its task), ``kill()`` a SIGKILL of the worker and its pool. ``log()`` is
    what the worker printed, for failure messages.
    """

    environment: dict[str, str]
    log_path: Path
    hostname: str = field(default_factory=lambda: f"tapis-test-{RUN_ID}@%h")
    concurrency: int = 2
    process: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "celery", "-A", "config", "worker",
            "--loglevel", "INFO",
            "--hostname", self.hostname,
            "--concurrency", str(self.concurrency),
            "--without-gossip", "--without-mingle", "--without-heartbeat",
        ]  # fmt: skip

    def start(self, timeout: float = WORKER_START_TIMEOUT) -> LiveWorker:
        if self.alive:
            return self
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=BASE_DIR,
                env=self.environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise RuntimeError(f"the Celery worker exited at start:\n{self.log()}")
            if self.ping():
                return self
        self.kill()
        raise RuntimeError(
            f"the Celery worker did not answer a ping in {timeout:g} s:\n{self.log()}"
        )

    def ping(self, timeout: float = 0.5) -> bool:
        return bool(celery_app.control.ping(timeout=timeout))

    def stop(self, timeout: float = 20.0) -> None:
        """Warm shutdown (SIGTERM); killed if still running after ``timeout`` seconds."""
        if self.process is None:
            return
        if self.alive:
            os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=timeout)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the worker and what is left of its process group (the pool)."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except FileNotFoundError:
            return ""


@pytest.fixture(scope="session")
def _live_worker_session(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveWorker]:
    from django.db import connections

    settings_dict = connections["default"].settings_dict
    broker_url = str(celery_app.conf.broker_url)
    if settings_dict["ENGINE"] != "django.db.backends.postgresql" or not broker_url.startswith(
        ("redis://", "rediss://")
    ):
        pytest.fail(
            "live_worker needs PostgreSQL and Redis: run `make test`, or set DATABASE_URL "
            "(postgresql://...) and CELERY_BROKER_URL (redis://...)",
            pytrace=False,
        )
    environment = {
        **os.environ,
        "DATABASE_URL": _database_url(settings_dict),
        "CELERY_BROKER_URL": broker_url,
        "CELERY_RESULT_BACKEND": str(celery_app.conf.result_backend),
        "CELERY_TASK_DEFAULT_QUEUE": CELERY_ISOLATION["task_default_queue"],
        "CELERY_CONTROL_EXCHANGE": CELERY_ISOLATION["control_exchange"],
        "PYTHONUNBUFFERED": "1",
        # No sweep on the worker's timer: it serves several tests in a row (see live_worker),
        # and a sweep of its own would act on their tables (a test of expired leases counted a
        # 7th claim of its table). Those that need a sweep run one (a task, or the service).
        "TAPIS_WORKER_SWEEP": "0",
    }
    worker = LiveWorker(
        environment=environment, log_path=tmp_path_factory.mktemp("celery") / "worker.log"
    )
    try:
        yield worker
    finally:
        worker.kill()
        _forget_broker_keys(broker_url)


def _forget_broker_keys(broker_url: str) -> None:
    """Delete this run's queue, bindings and mailboxes from Redis."""
    import redis

    client = redis.Redis.from_url(broker_url)
    try:
        keys = list(client.scan_iter(match=f"*tapis-test-{RUN_ID}*", count=1000))
        if keys:
            client.delete(*keys)
    except redis.RedisError:
        pass
    finally:
        client.close()


@pytest.fixture(autouse=True)
def _tasks_reach_the_worker_only_in_its_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Send this test's tasks to the live worker's queue only if the test uses the worker."""
    uses_worker = "live_worker" in request.fixturenames
    celery_app.conf.task_default_queue = (
        CELERY_ISOLATION["task_default_queue"] if uses_worker else IDLE_QUEUE
    )
    yield
    celery_app.conf.task_default_queue = CELERY_ISOLATION["task_default_queue"]


_next_test_uses_the_worker = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Tell ``live_worker``'s teardown whether the next test of this process uses it too."""
    global _next_test_uses_the_worker
    _next_test_uses_the_worker = nextitem is not None and "live_worker" in getattr(
        nextitem, "fixturenames", ()
    )
    return (yield)


@pytest.fixture
def live_worker(_live_worker_session: LiveWorker, transactional_db: None) -> Iterator[LiveWorker]:
    """A real Celery worker, running, for this test.

    The worker is a ``celery -A config worker`` subprocess on the real Redis broker (this
    session's own queue) and the real PostgreSQL test database, so tasks run exactly as in
    production and what they write is visible to the test. It is started on first use and
    serves the tests that follow as long as they use it too (restarted if a test stopped or
    killed it); it is stopped after the last of them, before the database is emptied: a
    worker left running would go on in the next tests' database (its timer's heartbeats
    counted as another worker's, before TAPIS_WORKER_SWEEP=0 a sweep claimed between a
    test's own calls).

    The test database is transactional (``transactional_db``): data committed by the test
    is visible to the worker and the other way round.

        def test_heartbeat(live_worker: LiveWorker) -> None:
            result = worker_heartbeat_record.delay()
            assert result.get(timeout=30)["beats"] == 1
    """
    yield _live_worker_session.start()
    if not _next_test_uses_the_worker:
        _live_worker_session.stop()
