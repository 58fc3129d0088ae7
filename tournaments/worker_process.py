"""What a Celery worker does besides taking tasks, wired to Celery's signals (config/celery.py
imports this module):

* it consumes the housekeeping queue as well as the tables' (``celeryd_after_setup``);
* a timer thread in its main process records its own heartbeat every
  ``TAPIS_WORKER_HEARTBEAT_SECONDS`` (with the tables it is playing) and runs the sweep when
  no other worker ran it this period (unless ``TAPIS_WORKER_SWEEP`` is off): neither depends
  on beat nor waits behind tables;
* each pool process keeps its temporary folders (the judge's ``tapis-table-*``,
  ``tapis-zygotes-*``) under a folder of its own, ``$TMPDIR/tapis-worker-<pid>-<start>``,
  removed when the process exits and, at the next start of any worker of the host, when its
  process is gone (killed);
* a pool process keeps its database connection from one task to the next, closed as Django
  closes a request's (broken, in a transaction left open, or older than ``CONN_MAX_AGE``)
  before and after each task (``CELERY_DB_REUSE_MAX`` keeps Celery from closing it);
* a pool process that met a local error (:class:`~tournaments.services.tables.
  WorkerOutOfRotation`) takes the whole worker out of rotation: it stops consuming tables and
  its heartbeat says why (:func:`out_of_rotation`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import tempfile
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from celery import signals

log = logging.getLogger(__name__)

PROCESS_DIR_PREFIX = "tapis-worker-"

_stop = threading.Event()
_timer: threading.Thread | None = None
_hostname = ""
_started_at: datetime | None = None
# Set in a pool process whose machine cannot play tables: later tables are given back unplayed.
_out_of_rotation: str = ""
# This pool process's own temporary folder.
_process_dir: Path | None = None


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot, /proc), or None if it is gone: a pid
    and its start time name one process, even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]


def process_dir_name(pid: int) -> str | None:
    start = _start_time(pid)
    return None if start is None else f"{PROCESS_DIR_PREFIX}{pid}-{start}"


def remove_dead_process_dirs(root: Path | None = None) -> list[Path]:
    """Remove the temporary folders of this host's worker processes that are gone."""
    root = root or Path(tempfile.gettempdir())
    removed = []
    for path in root.glob(f"{PROCESS_DIR_PREFIX}*"):
        pid, _, start = path.name.removeprefix(PROCESS_DIR_PREFIX).partition("-")
        if not pid.isdigit() or _start_time(int(pid)) == start:
            continue  # alive (or not ours)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    if removed:
        log.info("removed %d temporary folders of dead worker processes", len(removed))
    return removed


def use_process_dir() -> Path | None:
    """Put this process's temporary files under a folder named after it (see the module)."""
    name = process_dir_name(os.getpid())
    if name is None:
        return None
    path = Path(tempfile.gettempdir()) / name
    path.mkdir(mode=0o711, exist_ok=True)
    path.chmod(0o711)  # the sandbox's uid must reach the bots' folders under it
    tempfile.tempdir = str(path)
    os.environ["TMPDIR"] = str(path)
    return path


def playing() -> list[int]:
    """Ids of the tables this worker's processes are playing (read in the main process)."""
    from celery.worker import state

    from tournaments import queue

    tables = []
    for request in list(state.active_requests):
        if getattr(request, "name", None) == queue.TABLE_RUN and request.args:
            with contextlib.suppress(TypeError, ValueError):
                tables.append(int(request.args[0]))
    return tables


def beat(*, started: bool = False, stopped: bool = False) -> None:
    """Record this worker's heartbeat (from its main process)."""
    from django.db import connection

    from tournaments import services

    try:
        services.worker_heartbeat_record(
            hostname=_hostname,
            playing=playing(),
            host=socket.gethostname(),
            pid=os.getpid(),
            started_at=_started_at,
            started=started,
            stopped=stopped,
        )
    except Exception:
        log.exception("worker %s: heartbeat not recorded", _hostname)
    finally:
        connection.close()


def sweep() -> None:
    from django.db import connection

    from tournaments import services

    try:
        services.sweep_if_due(by=_hostname)
    except Exception:
        log.exception("worker %s: the sweep failed", _hostname)
    finally:
        connection.close()


def _timer_loop() -> None:
    from tournaments import conf

    beat(started=True)
    sweeps = conf.worker_sweeps()
    if sweeps:
        sweep()
    period = conf.heartbeat_seconds()
    while not _stop.wait(period):
        beat()
        if sweeps:
            sweep()


def out_of_rotation(*, hostname: str, reason: str) -> None:
    """Take this worker out of rotation (from a pool process): no more tables here, and the
    heartbeat says why. The worker's main process stops consuming the tables' queue (remote
    control through the broker); until it does, tables reaching this process are given back
    unplayed."""
    global _out_of_rotation
    from celery import current_app

    from tournaments import queue, services

    _out_of_rotation = reason
    try:
        services.worker_out_of_rotation(hostname=hostname, problem=reason)
    except Exception:
        log.exception("worker %s: could not record that it is out of rotation", hostname)
    try:
        current_app.control.cancel_consumer(queue.tables_queue(), destination=[hostname])
    except Exception:
        log.exception("worker %s: could not stop consuming tables", hostname)


def out_of_rotation_reason() -> str:
    return _out_of_rotation


@signals.celeryd_after_setup.connect
def _consume_housekeeping(sender: str, instance: Any, **_: Any) -> None:
    from tournaments import queue

    instance.app.amqp.queues.select_add(queue.housekeeping_queue())


@signals.worker_ready.connect
def _worker_ready(sender: Any, **_: Any) -> None:
    global _timer, _hostname, _started_at
    from django.utils import timezone

    _hostname = str(getattr(sender, "hostname", "") or socket.gethostname())
    _started_at = timezone.now()
    remove_dead_process_dirs()
    _stop.clear()
    _timer = threading.Thread(target=_timer_loop, name="tapis-heartbeat", daemon=True)
    _timer.start()


@signals.worker_shutdown.connect
def _worker_shutdown(**_: Any) -> None:
    _stop.set()
    if _timer is not None:
        _timer.join(timeout=10)
    if _hostname:
        beat(stopped=True)
    remove_dead_process_dirs()


@signals.worker_process_init.connect
def _process_init(**_: Any) -> None:
    global _process_dir
    _process_dir = use_process_dir()


@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(sender: Any = None, **_: Any) -> None:
    """Around each task: the pool process's database connection is kept, unless it is broken
    or too old (Django's request rule). Not for a task run in the caller (eager), whose
    connection is the caller's."""
    from django.db import close_old_connections

    request = getattr(sender, "request", None)
    if not getattr(request, "is_eager", False):
        close_old_connections()


@signals.worker_process_shutdown.connect
def _process_shutdown(**_: Any) -> None:
    from judge.launchers import zygote

    with contextlib.suppress(Exception):
        zygote.retire_all()
    if _process_dir is not None:
        shutil.rmtree(_process_dir, ignore_errors=True)
