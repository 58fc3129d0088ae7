"""``python -m config.run`` (``make run``): the whole demo in one command.

Prepares the database (migrate, the demo admin account, the demo data when a ``demo``
management command exists), then runs the web server and one Celery worker (with beat
embedded) side by side. Ctrl-C or SIGTERM stops both, cleanly: each child runs in its own
process group, gets SIGTERM, and whatever is left of its group after it exits (or after a
grace period) is killed. If either child dies, the other is stopped too.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

BASE_DIR = Path(__file__).resolve().parent.parent
GRACE_SECONDS = 15.0
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _prepare() -> None:
    """Migrate, make the demo admin, and load the demo data when that command exists."""
    import django
    from django.core.management import call_command, get_commands
    from django.db import connections

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    # Tables recorded before a fault stopped paying, recounted (one query when none is left).
    call_command("replaced_seats_recount", verbosity=0)
    # The stored statistics of tournaments finished before there were any (one query when
    # none is missing): what an upgrade runs after its migrations.
    call_command("tournament_summaries", verbosity=0)
    call_command("demo_admin")
    connections.close_all()
    # Demo bots, the demo tournament and the gallery (a tournament of each game, an open one),
    # in a process of its own: the sandbox that validates the demo's uploaded bots keeps a
    # guardian for as long as its judge process lives (judge/sandbox/_reaper.py).
    if "demo" in get_commands():
        subprocess.run([sys.executable, "manage.py", "demo", "--gallery"], cwd=BASE_DIR, check=True)


class Supervisor:
    """Runs child processes, each in its own process group, and stops them all together."""

    def __init__(self) -> None:
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        self.stop_requested = False

    def start(self, name: str, command: Sequence[str]) -> None:
        self.children[name] = subprocess.Popen(
            list(command),
            cwd=BASE_DIR,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
            preexec_fn=_terminate_with_parent,
        )

    def request_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop_requested = True

    def wait(self) -> str | None:
        """Block until a stop is requested (None) or a child exits (its name)."""
        while not self.stop_requested:
            for name, child in self.children.items():
                if child.poll() is not None:
                    return name
            time.sleep(0.2)
        return None

    def stop(self) -> None:
        # SIGTERM to each child itself (Celery: warm shutdown, it stops its own pool).
        for child in self.children.values():
            if child.poll() is None:
                child.terminate()
        deadline = time.monotonic() + GRACE_SECONDS
        for child in self.children.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
        # Whatever is left (a child that ignored SIGTERM, pool processes): killed.
        for child in self.children.values():
            _signal_group(child.pid, signal.SIGKILL)
            child.wait()
        # ...and gone before we return.
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(
            _group_exists(child.pid) for child in self.children.values()
        ):
            time.sleep(0.05)


def _terminate_with_parent() -> None:
    """In the child, before exec: get SIGTERM if the supervisor dies without stopping us."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def _wait_until_ready(supervisor: Supervisor, host: str, port: int, *, timeout: float) -> bool:
    """Wait until the web server answers and the worker answers a ping."""
    from config.celery import app as celery_app

    deadline = time.monotonic() + timeout
    web_ready = worker_ready = False
    while time.monotonic() < deadline:
        if supervisor.stop_requested or any(
            child.poll() is not None for child in supervisor.children.values()
        ):
            return False
        web_ready = web_ready or _answers(host, port)
        worker_ready = worker_ready or bool(celery_app.control.ping(timeout=0.5))
        if web_ready and worker_ready:
            return True
        time.sleep(0.2)
    missing = [name for name, ready in (("web", web_ready), ("worker", worker_ready)) if not ready]
    print(f"Not ready after {timeout:g} s: {', '.join(missing)} (see above)", file=sys.stderr)
    return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m config.run", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if not _port_free(args.host, args.port):
        print(
            f"{args.host}:{args.port} is already in use: stop what runs there, "
            "or choose another port (make run PORT=8001)",
            file=sys.stderr,
        )
        return 1

    _prepare()
    from django.conf import settings

    supervisor = Supervisor()
    signal.signal(signal.SIGINT, supervisor.request_stop)
    signal.signal(signal.SIGTERM, supervisor.request_stop)
    # Whatever happens (our output may go to a pipe that dies with the terminal), stop both.
    try:
        exited = _serve(supervisor, args.host, args.port, Path(settings.VAR_DIR))
    finally:
        supervisor.stop()
    return 1 if exited is not None else 0


def _say(message: str, *, error: bool = False) -> None:
    with contextlib.suppress(OSError):
        print(message, file=sys.stderr if error else sys.stdout, flush=True)


def _serve(supervisor: Supervisor, host: str, port: int, var_dir: Path) -> str | None:
    """Start the web server and the worker; return when told to stop (None) or one exits."""
    python = sys.executable
    supervisor.start("web", [python, "manage.py", "runserver", f"{host}:{port}", "--noreload"])
    supervisor.start(
        "worker",
        [
            python, "-m", "celery", "-A", "config", "worker",
            "--loglevel", "INFO",
            "--hostname", "tapis-demo@%h",
            "--without-gossip", "--without-mingle",
            "--beat", "--schedule", str(var_dir / "celerybeat-schedule"),
        ],
    )  # fmt: skip

    if _wait_until_ready(supervisor, host, port, timeout=30.0):
        url = f"http://{host}:{port}"
        _say(
            "\n"
            f"Tapis is running (Ctrl-C stops it):\n"
            f"  site    {url}/\n"
            f"  admin   {url}/admin/  (user admin, password in {var_dir / 'demo_admin_password'})\n"
            f"  health  {url}/healthz\n"
        )

    exited = supervisor.wait()
    if exited is not None:
        _say(f"The {exited} process exited: stopping the others.", error=True)
    else:
        _say("\nStopping Tapis...")
    return exited


if __name__ == "__main__":
    sys.exit(main())
