"""The fault-injection suite's own services: a PostgreSQL cluster (initdb and pg_ctl from
/usr/lib/postgresql/*/bin, in a temporary folder, on a free port) and a redis-server (free port,
no persistence), never the machine's; Celery workers and beat as subprocesses against them.

The test process reaches the private database with psycopg (to watch) and through
``probe.py`` subprocesses (to create tournaments and check them with the services): its own
Django connection stays on the machine's test database.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).resolve().parent / "probe.py"
LEASE_SECONDS = 4
SWEEP_SECONDS = 2
# Validations renew no lease: longer than a validation of the fault suite's bots (~8 s).
VALIDATION_LEASE_SECONDS = 20
# Recovery times measured by the tests, printed at the end of the session.
RECOVERIES: list[tuple[str, str, float]] = []


def note_recovery(fault: str, outcome: str, seconds: float) -> None:
    """Keep a measured recovery for the session's summary and var/fault-recoveries.txt."""
    RECOVERIES.append((fault, outcome, seconds))
    with contextlib.suppress(OSError), (BASE_DIR / "var" / "fault-recoveries.txt").open("a") as out:
        out.write(f"{fault} | {outcome} | {seconds:.1f}\n")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not found:
        pytest.fail(f"{name} not found under /usr/lib/postgresql/*/bin: install postgresql")
    return found[-1]


def _as_postgres(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """PostgreSQL refuses to run as root: its tools run as the postgres user."""
    if os.geteuid() == 0:
        command = ["runuser", "-u", "postgres", "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=True, **kwargs)


@dataclass
class Postgres:
    """A private PostgreSQL cluster."""

    directory: Path
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    # Addresses it listens on (default: ``host``), e.g. loopback and a veth's address.
    listen: str = ""

    @property
    def data(self) -> Path:
        return self.directory / "data"

    def url(self, host: str | None = None, database: str = "tapis") -> str:
        return f"postgresql://postgres@{host or self.host}:{self.port}/{database}"

    def init(self) -> Postgres:
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
        _as_postgres(
            [_pg_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync"]
        )
        # Clients on the private links of this machine (a worker in a network namespace).
        with (self.data / "pg_hba.conf").open("a") as hba:
            hba.write("host all all samenet trust\n")
        self.start()
        with psycopg.connect(self.url(database="postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE tapis")
        return self

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses='{self.listen or self.host}' "
            "-c fsync=off -c max_connections=200"
        )
        _as_postgres(
            [
                _pg_bin("pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.directory / "log"),
                "-o",
                options,
                "-w",
                "start",
            ]
        )

    def stop(self, mode: str = "fast") -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            _as_postgres([_pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url(), autocommit=True, connect_timeout=3)


@dataclass
class Redis:
    """A private redis-server, without persistence (as the machine's)."""

    directory: Path
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    # Addresses it listens on (default: ``host``).
    bind: tuple[str, ...] = ()

    def url(self, db: int = 0, host: str | None = None) -> str:
        return f"redis://{host or self.host}:{self.port}/{db}"

    def start(self) -> Redis:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                *(self.bind or (self.host,)),
                "--protected-mode",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
                "--logfile",
                str(self.directory / "redis.log"),
            ],
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), 1):
                return self
            time.sleep(0.05)
        raise RuntimeError("the private redis-server did not start")

    def kill(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            self.process.wait()
            self.process = None


@dataclass
class Cluster:
    postgres: Postgres
    redis: Redis
    root: Path

    def environment(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            "DATABASE_URL": self.postgres.url(),
            "CELERY_BROKER_URL": self.redis.url(0),
            "CELERY_RESULT_BACKEND": self.redis.url(1),
            "CELERY_TASK_DEFAULT_QUEUE": "faults",
            "CELERY_CONTROL_EXCHANGE": "faults",
            "TAPIS_TABLE_LEASE_SECONDS": str(LEASE_SECONDS),
            "TAPIS_SWEEP_SECONDS": str(SWEEP_SECONDS),
            "TAPIS_WORKER_HEARTBEAT_SECONDS": "1",
            "TAPIS_PENDING_REQUEUE_SECONDS": "120",
            "TAPIS_VALIDATION_LEASE_SECONDS": str(VALIDATION_LEASE_SECONDS),
            "TAPIS_VAR_DIR": str(self.root / "var"),
            "PYTHONUNBUFFERED": "1",
            **extra,
        }

    def probe(self, *args: str) -> str:
        completed = subprocess.run(
            [sys.executable, str(PROBE), *args],
            cwd=BASE_DIR,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if completed.returncode:
            raise RuntimeError(f"probe {args} failed:\n{completed.stderr[-4000:]}")
        return completed.stdout.strip().splitlines()[-1]

    def create(self, *, entries: int = 8, rounds: int = 2, deals: int = 3) -> int:
        return int(
            self.probe(
                "create", "--entries", str(entries), "--rounds", str(rounds), "--deals", str(deals)
            )
        )

    def check(self, tournament: int) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.probe("check", str(tournament)))
        return result

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """A query on the private database; [] while it is away (a fault may be under way)."""
        try:
            with self.postgres.connect() as conn:
                return list(conn.execute(sql, params).fetchall())
        except psycopg.Error:
            return []


def new_dir(prefix: str) -> Path:
    """A folder in the system's temporary folder that the sandbox's uid may traverse (pytest's
    own are private to root)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o711)
    return path


@contextlib.contextmanager
def private_cluster(listen: tuple[str, ...] = ("127.0.0.1",)) -> Iterator[Cluster]:
    """A private PostgreSQL (migrated) and Redis, listening on ``listen`` (the first is where
    this process reaches them), removed afterwards."""
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is not installed (make services installs it)")
    root = new_dir("tapis-faults-")
    postgres = Postgres(root / "postgres", host=listen[0], listen=",".join(listen)).init()
    redis = Redis(root / "redis", host=listen[0], bind=listen).start()
    cluster = Cluster(postgres, redis, root)
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=BASE_DIR,
            env=cluster.environment(),
            check=True,
            timeout=300,
        )
        yield cluster
    finally:
        redis.kill()
        postgres.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """The private PostgreSQL and Redis of this session."""
    with private_cluster() as cluster:
        yield cluster


@dataclass
class Worker:
    """A ``celery worker`` subprocess on the private services; ready once its own heartbeat
    (written by its main process) is in the database."""

    cluster: Cluster
    name: str
    tmpdir: Path
    bot_cache: Path
    concurrency: int = 1
    extra_env: dict[str, str] = field(default_factory=dict)
    # Run through this (``ip netns exec NAME``: a worker on another "host").
    prefix: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def hostname(self) -> str:
        return f"{self.name}@faults"

    @property
    def log_path(self) -> Path:
        return self.tmpdir.parent / f"{self.name}.log"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 90) -> Worker:
        environment = self.cluster.environment(
            TMPDIR=str(self.tmpdir), TAPIS_BOT_CACHE_DIR=str(self.bot_cache), **self.extra_env
        )
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *self.prefix,
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "--loglevel",
                    "INFO",
                    "--hostname",
                    self.hostname,
                    "--concurrency",
                    str(self.concurrency),
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                ],
                cwd=BASE_DIR,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_for(
            lambda: bool(
                self.cluster.query(
                    "SELECT 1 FROM tournaments_workerheartbeat WHERE hostname = %s AND pid = %s",
                    self.hostname,
                    self.pid,
                )
            ),
            timeout,
            f"worker {self.name} to record its heartbeat",
            self,
        )
        return self

    def pool_pids(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, sig)

    def stop(self, timeout: float = 30) -> None:
        """Warm shutdown (SIGTERM to the main process), then whatever is left is killed."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGCONT)
            os.kill(self.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=timeout)
        self.kill()

    def kill(self) -> None:
        if self.process is None:
            return
        self.signal(signal.SIGKILL)
        self.process.wait()
        self.process = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except OSError:
            return ""


def wait_for(condition: Callable[[], bool], timeout: float, what: str, *workers: Any) -> float:
    """Seconds it took ``condition`` to hold; fails the test (with the workers' logs) after
    ``timeout`` seconds."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if condition():
            return time.monotonic() - start
        time.sleep(0.2)
    logs = "\n".join(f"--- {w.name}\n{w.log()}" for w in workers if hasattr(w, "log"))
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{logs}")


@pytest.fixture
def workers(cluster: Cluster) -> Iterator[Callable[..., Worker]]:
    """Start workers for a test (``workers("a")``); every one is killed after it."""
    started: list[Worker] = []
    folders: list[Path] = []

    def start(name: str, *, start: bool = True, **kwargs: Any) -> Worker:
        folder = new_dir(f"tapis-faults-{name}-")
        folders.append(folder)
        (folder / "tmp").mkdir(mode=0o711)
        (folder / "tmp").chmod(0o711)
        worker = Worker(cluster, name, folder / "tmp", folder / "bot-cache", **kwargs)
        started.append(worker)
        return worker.start() if start else worker

    yield start
    for worker in started:
        worker.kill()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _print_recoveries(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not RECOVERIES:
        return
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    reporter.write_line("")
    reporter.write_line("fault | outcome | recovery (s)")
    for fault, outcome, seconds in RECOVERIES:
        reporter.write_line(f"{fault} | {outcome} | {seconds:.1f}")
