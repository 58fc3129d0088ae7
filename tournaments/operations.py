"""Reads for operators (``/healthz``, the admin): the workers' own heartbeats, whether the
sweep keeps running, and the tournaments that need attention or make no progress.
docs/operations.md, "When things fail", says what to do about each."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from games.base import JSON
from tournaments import conf
from tournaments.models import Housekeeping, Table, Tournament, WorkerHeartbeat
from tournaments.services.workers import SWEEP


def heartbeat_stale_after() -> timedelta:
    """A worker not heard from for three heartbeats is gone (dead, paused or cut off)."""
    return timedelta(seconds=3 * conf.heartbeat_seconds())


def sweep_stale_after() -> timedelta:
    """A sweep older than two periods is late: no worker (and no beat) runs it."""
    return timedelta(seconds=2 * conf.sweep_seconds())


def stall_window() -> timedelta:
    """No table started nor recorded for this long while tables wait: nothing is played."""
    return timedelta(seconds=max(2 * conf.sweep_seconds(), 2 * conf.lease_seconds()))


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerState:
    hostname: str
    host: str
    last_seen: datetime
    age_seconds: float
    state: str  # "alive", "out of rotation", "gone", "stopped"
    playing: list[int]
    problem: str

    def as_json(self) -> dict[str, JSON]:
        return {
            "hostname": self.hostname,
            "host": self.host,
            "last_seen": self.last_seen.isoformat(timespec="seconds"),
            "age_seconds": round(self.age_seconds, 1),
            "state": self.state,
            "playing": list[JSON](self.playing),
            "problem": self.problem,
        }


def worker_states(*, now: datetime | None = None) -> list[WorkerState]:
    """Every worker that ever recorded a heartbeat, with its state now."""
    now = now or timezone.now()
    stale = heartbeat_stale_after()
    states = []
    for h in WorkerHeartbeat.objects.order_by("hostname"):
        age = now - h.last_seen
        if h.stopped_at is not None and h.stopped_at >= h.last_seen - timedelta(seconds=1):
            state = "stopped"
        elif age > stale:
            state = "gone"
        elif h.problem:
            state = "out of rotation"
        else:
            state = "alive"
        playing = [int(t) for t in h.playing] if isinstance(h.playing, list) else []
        states.append(
            WorkerState(
                h.hostname, h.host, h.last_seen, age.total_seconds(), state, playing, h.problem
            )
        )
    return states


@dataclasses.dataclass(frozen=True, slots=True)
class SweepState:
    ok: bool
    last_done_at: datetime | None
    age_seconds: float | None
    by: str
    detail: str

    def as_json(self) -> dict[str, JSON]:
        return {
            "ok": self.ok,
            "last_done_at": self.last_done_at.isoformat(timespec="seconds")
            if self.last_done_at
            else None,
            "age_seconds": None if self.age_seconds is None else round(self.age_seconds, 1),
            "by": self.by,
            "detail": self.detail,
        }


def sweep_state(*, now: datetime | None = None) -> SweepState:
    """Whether the sweep runs: late (more than two periods) only matters while a tournament
    runs, when nothing re-queues a dead worker's tables without it."""
    now = now or timezone.now()
    row = Housekeeping.objects.filter(name=SWEEP).first()
    running = Tournament.objects.filter(status=Tournament.Status.RUNNING).exists()
    done = row.last_done_at if row is not None else None
    age = (now - done).total_seconds() if done is not None else None
    late = done is None or now - done > sweep_stale_after()
    by = row.last_by if row is not None else ""
    detail = "the sweep never ran" if done is None else f"last sweep {age:.0f} s ago by {by}"
    if late and running:
        detail += (
            f" (late: more than {sweep_stale_after().total_seconds():.0f} s, a tournament runs)"
        )
    return SweepState(not (late and running), done, age, by, detail)


def tournaments_needing_attention() -> list[int]:
    """Running tournaments with a failed table: they wait for an operator (re-run it)."""
    return list(
        Tournament.objects.filter(
            status=Tournament.Status.RUNNING, tables__status=Table.Status.FAILED
        )
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def tournaments_stalled(*, now: datetime | None = None) -> list[int]:
    """Running tournaments with tables waiting while no table anywhere started, renewed its
    lease or was recorded for :func:`stall_window`: nothing is being played."""
    now = now or timezone.now()
    since = now - stall_window()
    waiting = list(
        Tournament.objects.filter(
            status=Tournament.Status.RUNNING, tables__status=Table.Status.PENDING
        )
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not waiting:
        return []
    moving = Table.objects.filter(
        Q(started_at__gte=since)
        | Q(finished_at__gte=since)
        | Q(status=Table.Status.RUNNING, lease_expires_at__gte=now)
    ).exists()
    if moving:
        return []
    # Tables queued within the window may simply not have been taken yet.
    return [
        pk
        for pk in waiting
        if not Table.objects.filter(
            tournament_id=pk, status=Table.Status.PENDING, queued_at__gte=since
        ).exists()
    ]
