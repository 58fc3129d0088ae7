"""Workers: each worker's own heartbeat (what it plays, whether it took itself out of
rotation), and the periodic housekeeping every worker may run, once per period overall."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import F
from django.utils import timezone

from tournaments import conf
from tournaments.models import Housekeeping, WorkerHeartbeat
from tournaments.services.bots import bot_version_sweep
from tournaments.services.matches import match_sweep
from tournaments.services.tables import SweepReport, table_sweep

log = logging.getLogger(__name__)

SWEEP: str = "sweep"


def worker_heartbeat_record(
    *,
    hostname: str,
    playing: Iterable[int] | None = None,
    host: str | None = None,
    pid: int | None = None,
    started_at: datetime | None = None,
    started: bool = False,
    stopped: bool = False,
) -> WorkerHeartbeat:
    """Record that the worker ``hostname`` (started at ``started_at``) is alive now and what
    it is playing. ``started``: its first beat, so its ``problem`` (a restart is the
    operator's answer to it) and ``stopped_at`` are cleared; ``stopped``: it is shutting down
    warmly."""
    now = timezone.now()
    values: dict[str, object] = {"last_seen": now}
    if started_at is not None:
        values["started_at"] = started_at
    if playing is not None:
        values["playing"] = sorted(playing)
    if host is not None:
        values["host"] = host[:255]
    if pid is not None:
        values["pid"] = pid
    if started:
        values.update(stopped_at=None, problem="")
    if stopped:
        values.update(stopped_at=now, playing=[])
    heartbeat, created = WorkerHeartbeat.objects.get_or_create(
        hostname=hostname, defaults={**values, "beats": 1}
    )
    if not created:
        WorkerHeartbeat.objects.filter(pk=heartbeat.pk).update(**values, beats=F("beats") + 1)
        heartbeat.refresh_from_db()
    return heartbeat


def worker_out_of_rotation(*, hostname: str, problem: str) -> None:
    """Record why the worker ``hostname`` stopped taking tables (a local error)."""
    now = timezone.now()
    updated = WorkerHeartbeat.objects.filter(hostname=hostname).update(
        problem=problem[:2000], last_seen=now
    )
    if not updated:
        WorkerHeartbeat.objects.create(hostname=hostname, last_seen=now, problem=problem[:2000])


def housekeeping_claim(*, name: str, period: float, by: str, now: datetime | None = None) -> bool:
    """Whether the caller runs the job ``name`` now: the first caller of each period wins a
    compare-and-set on its row (works on PostgreSQL and SQLite alike), the others skip."""
    now = now or timezone.now()
    _, created = Housekeeping.objects.get_or_create(
        name=name, defaults={"last_run_at": now, "runs": 1, "last_by": by[:255]}
    )
    if created:
        return True
    # A small tolerance: timers of workers started together do not skip a period each.
    due = now - timedelta(seconds=period * 0.9)
    return bool(
        Housekeeping.objects.filter(name=name, last_run_at__lte=due).update(
            last_run_at=now, runs=F("runs") + 1, last_by=by[:255]
        )
    )


def sweep_if_due(*, by: str, force: bool = False) -> SweepReport | None:
    """Run the sweep if no one ran it this period (every worker calls this on its timer; beat
    and operators may too): None if it was not due."""
    if not housekeeping_claim(name=SWEEP, period=conf.sweep_seconds(), by=by) and not force:
        return None
    report = table_sweep()
    match_sweep()
    bot_version_sweep()
    Housekeeping.objects.filter(name=SWEEP).update(
        last_done_at=timezone.now(), last_report={**report.as_json(), "by": by}
    )
    if report.requeued or report.failed or report.resent:
        log.info("sweep by %s: %s", by, report.as_json())
    return report
