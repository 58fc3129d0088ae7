"""Tables on the workers: claim (compare-and-set), keep the lease, play, fail, re-run, and the
periodic sweep that re-queues tables whose worker died or whose message was lost."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import logging
import threading
import time
import traceback
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Greatest
from django.utils import timezone

from games.base import JSON
from judge.launchers.zygote import ZygoteError
from judge.runner import TableResult, run_table
from judge.sandbox import SandboxError
from tournaments import conf, judging, queue
from tournaments.errors import DATABASE_ERRORS, ApplicationError
from tournaments.models import (
    Table,
    Tournament,
    WorkerHeartbeat,
)
from tournaments.services._sql import TABLE, sql_row
from tournaments.services.practice import practice_dispatch, practice_table_failed
from tournaments.services.recording import table_record_result

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


class LeaseLost(BaseException):
    """Raised in the judge's thread at the next deal's end when the table's lease was lost
    (another worker took the table over): the worker stops playing. A BaseException, so that
    the judge's handlers of its own errors let it through."""


# errno values that say this worker's machine, not the table, is at fault: its disk or temp
# space is full or read-only, or it is out of processes, files or memory.
LOCAL_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EIO,
        errno.EMFILE,
        errno.ENFILE,
        errno.ENOMEM,
        errno.EAGAIN,
    }
)


def local_worker_error(exc: BaseException) -> str | None:
    """Why ``exc`` is an error of this worker's machine (full disk, temp space, a missing
    runtime), for it to give the table back and leave the rotation; None for anything else."""
    if isinstance(exc, OSError) and exc.errno in LOCAL_ERRNOS:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{errno.errorcode.get(exc.errno or 0, exc.errno)}: {exc.strerror}{where}"
    if isinstance(exc, FileNotFoundError | PermissionError) and exc.filename:
        # An executable the judge needs (bwrap, the bots' Python) is missing or not runnable.
        name = str(exc.filename)
        if name.startswith("/usr/") or "/" not in name:
            return f"a runtime is missing: {exc}"
    if isinstance(exc, SandboxError | ZygoteError) and "not found" in str(exc).lower():
        return f"the sandbox cannot start: {exc}"
    return None


class WorkerOutOfRotation(Exception):
    """This worker cannot play tables (a local error): it gave its table back."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def table_claim(
    *, table_id: int, worker: str, token: str, now: datetime | None = None
) -> Table | None:
    """Claim a table for a worker (compare-and-set): it must be pending, or running under an
    expired lease (its worker died or was cut off). A message delivered twice (the broker's
    redelivery, the same task id) claims nothing while the lease holds. None if another
    worker has it, it is done, or it used up its attempts or claims."""
    now = now or timezone.now()
    tournament = sql_row(
        Tournament, f"id = (SELECT tournament_id FROM {TABLE} WHERE id = %s)", table_id
    )
    if tournament is None or tournament.status != Tournament.Status.RUNNING:
        return None
    # A plain WHERE on the table's row, no join: PostgreSQL re-checks it on the row it waited
    # for, so of two claims at the same moment exactly one updates the row.
    table = sql_row(
        Table,
        "id = %s AND attempts < %s AND claims < %s AND "
        "(status = %s OR (status = %s AND lease_expires_at < %s))",
        table_id,
        conf.max_attempts(),
        conf.max_claims(),
        Table.Status.PENDING,
        Table.Status.RUNNING,
        now,
        update=(
            "status = %s, claimed_by = %s, claim_token = %s, lease_expires_at = %s, "
            "attempts = attempts + 1, claims = claims + 1, started_at = %s, host = %s",
            [
                Table.Status.RUNNING,
                worker[:255],
                token[:64],
                now + timedelta(seconds=conf.lease_seconds()),
                now,
                kernel_id(),
            ],
        ),
    )
    if table is None:
        return None
    table.tournament = tournament
    return table


@functools.cache
def kernel_id() -> str:
    """This machine's kernel: its boot id (a new one at each boot, one per virtual machine)."""
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:64]


# A PostgreSQL advisory lock per duplicate round (two int keys: this namespace, the round's id),
# held while a worker checks the round's tables on its kernel and claims one.
ROUND_LOCK = 0x7461_7069  # "tapi"


def _round_busy_here(table_id: int, now: datetime) -> bool:
    """Whether another table of the table's duplicate round plays on this worker's kernel, where
    bots of the two tables could meet a channel of the whole host that no sandbox closes
    (docs/sandbox.md, "Host-wide channels"). Takes the round's advisory lock until the
    transaction ends: of two workers on one kernel, the second to claim sees the first's
    claim. Practice runs and tournaments without duplicate deals are never busy."""
    round_id = (
        Table.objects.filter(pk=table_id, tournament__duplicate=True, tournament__practice=False)
        .values_list("round_id", flat=True)
        .first()
    )
    if round_id is None:
        return False
    if connection.vendor == "postgresql":  # SQLite (development) runs one write at a time
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [ROUND_LOCK, round_id])
    playing = Table.objects.filter(
        round_id=round_id,
        status=Table.Status.RUNNING,
        host=kernel_id(),
        lease_expires_at__gte=now,
    )
    return playing.exclude(pk=table_id).exists()


def round_resend_deferred(*, table_id: int, now: datetime | None = None) -> list[int]:
    """Send again the tables of ``table_id``'s round that a worker deferred (pending, unsent),
    once that table no longer holds its kernel: the same resend as the sweep's."""
    now = now or timezone.now()
    deferred = Table.objects.filter(
        round__tables=table_id,
        status=Table.Status.PENDING,
        queued_at__isnull=True,
        tournament__status=Tournament.Status.RUNNING,
        tournament__practice=False,
    ).select_related("tournament")
    return [table.pk for table in deferred if _resend(table, now)]


def _resend(table: Table, now: datetime) -> bool:
    """Send a pending table's message again (compare-and-set on when it was last sent)."""
    last_sent = (
        Q(queued_at=table.queued_at) if table.queued_at is not None else Q(queued_at__isnull=True)
    )
    with transaction.atomic():
        sent = Table.objects.filter(last_sent, pk=table.pk, status=Table.Status.PENDING).update(
            queued_at=now
        )
        if sent:
            queue.table_enqueue(table=table, tournament=table.tournament)
    return bool(sent)


def table_lease_renew(*, table_id: int, token: str) -> bool:
    """Extend a claimed table's lease; False if the claim was lost (another worker has it)."""
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            lease_expires_at=timezone.now() + timedelta(seconds=conf.lease_seconds())
        )
    )


class Lease:
    """A claimed table's lease, renewed from a thread every third of it while the table plays.
    ``lost`` is set once a renewal finds the claim gone: :meth:`check` then raises LeaseLost."""

    def __init__(self, table_id: int, token: str) -> None:
        self.table_id = table_id
        self.token = token
        self.lost = threading.Event()

    def check(self, *_: object) -> None:
        if self.lost.is_set():
            raise LeaseLost(f"table {self.table_id}: the lease was lost to another worker")

    @contextlib.contextmanager
    def kept(self) -> Iterator[Lease]:
        stop = threading.Event()
        interval = max(0.5, conf.lease_seconds() / 3)

        def keep() -> None:
            try:
                while not stop.wait(interval):
                    try:
                        if not table_lease_renew(table_id=self.table_id, token=self.token):
                            log.warning("table %s: lease lost to another worker", self.table_id)
                            self.lost.set()
                            return
                    except Exception:  # the database is away: try again next time
                        log.exception("table %s: lease renewal failed", self.table_id)
            finally:
                connection.close()

        thread = threading.Thread(target=keep, name=f"lease-table-{self.table_id}", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()


def table_play(*, table: Table, lease: Lease | None = None) -> TableResult:
    """Play a claimed table through the judge (no transaction is open meanwhile). With a
    ``lease``, the play stops at the next deal's end once the lease is lost (LeaseLost)."""
    tournament = table.tournament
    return run_table(
        game=tournament.game,
        preset=tournament.preset,
        options=tournament.options,
        bots=judging.table_bots(table=table),
        deals=tournament.deals_per_table,
        seed=table.deal_seed,
        limits=judging.tournament_limits(tournament=tournament),
        sandbox=conf.sandbox_mode(),
        zygotes=conf.bot_zygotes(),
        cpu="free" if conf.pin_tables() else None,
        on_progress=lease.check if lease is not None else None,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TableRun:
    """What a table task did: ``recorded``; ``duplicate`` or ``lost`` (its result refused:
    the table was recorded, or another worker holds it now); ``released`` (given back for
    another worker: infrastructure); ``deferred`` (another table of its duplicate round plays
    on this kernel); ``skipped`` (not claimable) or ``failed``."""

    table_id: int
    outcome: str  # "recorded", "duplicate", "lost", "released", "deferred", "skipped", "failed"
    detail: str = ""

    def as_json(self) -> dict[str, JSON]:
        return {"table": self.table_id, "outcome": self.outcome, "detail": self.detail}


# How long a played table's result waits for the database to come back before it is dropped
# (the table is then played again): a PostgreSQL restart takes seconds.
RECORD_RETRY_SECONDS = 300.0


def _record_with_retries(table_id: int, result: TableResult, token: str) -> bool:
    """Record a played table, retrying while the database is away: the result took the whole
    table to play. Refused (False) once another worker holds the table."""
    delay, deadline = 0.5, time.monotonic() + RECORD_RETRY_SECONDS
    while True:
        try:
            return table_record_result(table_id=table_id, result=result, token=token)
        except DATABASE_ERRORS:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("table %s: the database is away, recording again in %g s", table_id, delay)
            connection.close()
            time.sleep(delay)
            delay = min(delay * 2, 10.0)


def table_run(*, table_id: int, worker: str, token: str) -> TableRun:
    """Claim, play and record one table: what a table task does. Safe to run twice.

    Bots cannot make this fail (the judge turns whatever they do into faults). A result is
    recorded only under the claim that is still current; a worker that learns it lost the
    claim stops playing. An error of the infrastructure (the database away) or of this
    worker's machine (:func:`local_worker_error`, raised as WorkerOutOfRotation) gives the
    table back for another worker, without counting an attempt; any other error (a bug, a
    setting the judge refuses) marks the table failed with its traceback, for an operator to
    look at and re-run."""
    with transaction.atomic():
        if _round_busy_here(table_id, timezone.now()):
            # Unsent: the table holding the kernel sends it when it ends, or the next sweep.
            Table.objects.filter(pk=table_id, status=Table.Status.PENDING).update(queued_at=None)
            return TableRun(table_id, "deferred", DEFERRED)
        table = table_claim(table_id=table_id, worker=worker, token=token)
    if table is None:
        return TableRun(table_id, "skipped", "not claimable (done, taken or out of attempts)")
    if table.tournament.duplicate and not table.tournament.practice:
        try:
            return _table_run(table, worker, token)
        finally:  # its kernel is free for the round's tables deferred meanwhile
            with contextlib.suppress(*DATABASE_ERRORS):
                round_resend_deferred(table_id=table_id)
    if not table.tournament.practice:
        return _table_run(table, worker, token)
    try:
        return _table_run(table, worker, token)
    finally:
        # Its slot goes to the next waiting practice run (or, the database away, the sweep's).
        with contextlib.suppress(*DATABASE_ERRORS):
            practice_dispatch()


DEFERRED = "another table of its duplicate round plays on this worker's kernel"


def _table_run(table: Table, worker: str, token: str) -> TableRun:
    table_id = table.pk
    lease = Lease(table_id, token)
    try:
        with lease.kept():
            result = table_play(table=table, lease=lease)
        lease.check()
        recorded = _record_with_retries(table_id, result, token)
    except LeaseLost:
        log.warning("table %s: lease lost, stopped playing", table_id)
        return TableRun(table_id, "lost", "the lease was lost to another worker: stopped")
    except DATABASE_ERRORS as exc:
        log.exception("table %s: the database is away; giving the table back", table_id)
        with contextlib.suppress(*DATABASE_ERRORS):
            table_release(table_id=table_id, token=token, reason=f"database: {exc}")
        return TableRun(table_id, "released", f"database: {exc}")
    except Exception as exc:
        reason = local_worker_error(exc)
        if reason is not None:
            log.error("table %s: local error of worker %s: %s", table_id, worker, reason)
            table_release(table_id=table_id, token=token, reason=f"worker {worker}: {reason}")
            raise WorkerOutOfRotation(reason) from exc
        log.exception("table %s failed", table_id)
        table_fail(table_id=table_id, token=token, error=traceback.format_exc())
        return TableRun(table_id, "failed", f"{type(exc).__name__}: {exc}")
    if recorded:
        return TableRun(table_id, "recorded")
    status = Table.objects.filter(pk=table_id).values_list("status", flat=True).first()
    if status == Table.Status.DONE:
        return TableRun(table_id, "duplicate", "already recorded")
    return TableRun(table_id, "lost", "another worker holds the table: result refused")


def table_release(*, table_id: int, token: str, reason: str) -> bool:
    """Give a claimed table back (its worker cannot play it: the infrastructure failed, not
    the table): pending again, its attempt given back, for the next sweep to send."""
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            status=Table.Status.PENDING,
            attempts=Greatest(F("attempts") - 1, 0),
            claim_token="",
            lease_expires_at=None,
            queued_at=None,
            error=f"given back: {reason}"[:20000],
        )
    )


def table_fail(*, table_id: int, token: str, error: str) -> bool:
    """Fail a table under its current claim (a bug, a setting the judge refused, its time
    limit); a practice run's table ends its run."""
    failed = bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            status=Table.Status.FAILED, error=error[-20000:], lease_expires_at=None
        )
    )
    if failed:
        practice_table_failed(table_id=table_id)
    return failed


def table_rerun(*, table: Table) -> Table:
    """Queue a failed table again with fresh attempts (an operator's action)."""
    updated = Table.objects.filter(pk=table.pk, status=Table.Status.FAILED).update(
        status=Table.Status.PENDING,
        attempts=0,
        claims=0,
        claim_token="",
        claimed_by="",
        lease_expires_at=None,
        queued_at=timezone.now(),
    )
    table.refresh_from_db()
    if not updated:
        # (as it is now: a second click, from a stale page, finds it pending or played)
        raise ApplicationError(f"{table} is {table.status}: only a failed table can be re-run")
    if table.tournament.status == Tournament.Status.RUNNING:
        queue.table_enqueue(table=table, tournament=table.tournament)
    return table


@dataclasses.dataclass(frozen=True, slots=True)
class SweepReport:
    requeued: list[int]
    failed: list[int]
    resent: list[int]
    broker_lost: bool = False

    def as_json(self) -> dict[str, JSON]:
        return {
            "requeued": list[JSON](self.requeued),
            "failed": list[JSON](self.failed),
            "resent": list[JSON](self.resent),
            "broker_lost": self.broker_lost,
        }


def _lease_counts(table: Table) -> bool:
    """Whether a table's expired lease counts as an attempt: only if its play ended it, i.e.
    its worker was seen alive after the lease ran out, and not restarted since the claim (its
    process died under the table: a time limit, a crash). A worker that is gone (killed,
    paused, cut off, restarted) gives it back."""
    heartbeat = (
        WorkerHeartbeat.objects.filter(hostname=table.claimed_by)
        .values_list("last_seen", "started_at")
        .first()
    )
    if heartbeat is None or table.lease_expires_at is None:
        return False
    seen, started = heartbeat
    restarted = started is not None and table.started_at is not None and started > table.started_at
    return seen > table.lease_expires_at and not restarted


def table_sweep(*, now: datetime | None = None) -> SweepReport:
    """The periodic sweep: tables whose lease expired (their worker died) go back to the
    queue, or fail after too many attempts; pending tables whose message was not sent, seems
    lost, or was lost with the broker's data are sent again; practice tables waiting for a
    slot are sent if one is free (:func:`~tournaments.services.practice.practice_dispatch`).
    Every change is a compare-and-set, so sweeps may overlap."""
    now = now or timezone.now()
    running = Tournament.Status.RUNNING
    requeued: list[int] = []
    failed: list[int] = []
    resent: list[int] = []
    expired = Table.objects.filter(
        status=Table.Status.RUNNING, lease_expires_at__lt=now, tournament__status=running
    ).select_related("tournament")
    for table in expired:
        counts = _lease_counts(table)
        attempts = table.attempts if counts else max(table.attempts - 1, 0)
        if attempts >= conf.max_attempts() or table.claims >= conf.max_claims():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at=table.lease_expires_at
            ).update(
                status=Table.Status.FAILED,
                attempts=attempts,
                lease_expires_at=None,
                error=f"the table's play ended {attempts} attempts and {table.claims} claims "
                f"without a result (last worker: {table.claimed_by})",
            ):
                failed.append(table.pk)
                practice_table_failed(table_id=table.pk)
            continue
        with transaction.atomic():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at=table.lease_expires_at
            ).update(
                status=Table.Status.PENDING,
                attempts=attempts,
                claim_token="",
                lease_expires_at=None,
                queued_at=now,
                error=f"lease expired at {table.lease_expires_at:%Y-%m-%d %H:%M:%S} "
                f"(worker {table.claimed_by}{'' if counts else ', gone: not counted'}); "
                "queued again",
            ):
                queue.table_enqueue(table=table, tournament=table.tournament)
                requeued.append(table.pk)
    broker_lost = bool(queue.broker_lost_its_queue())
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    pending = Table.objects.filter(status=Table.Status.PENDING, tournament__status=running).exclude(
        tournament__practice=True, queued_at__isnull=True
    )  # waiting for a slot: below
    if not broker_lost:
        pending = pending.filter(Q(queued_at__isnull=True) | Q(queued_at__lt=stale))
    resent.extend(table.pk for table in pending.select_related("tournament") if _resend(table, now))
    resent.extend(practice_dispatch())
    return SweepReport(requeued, failed, resent, broker_lost)


def tournament_run_here(*, tournament: Tournament, worker: str = "inline") -> int:
    """Play every table of a running tournament in this process, round after round, until
    it is finished (the demo does this; workers do it in production). Returns tables played.
    Tables a worker took meanwhile are waited for (and taken over if their lease expires)."""
    played = 0
    while True:
        tournament.refresh_from_db(fields=["status"])
        if tournament.status != Tournament.Status.RUNNING:
            return played
        tables = Table.objects.filter(tournament=tournament)
        claimable = list(
            tables.filter(
                Q(status=Table.Status.PENDING)
                | Q(status=Table.Status.RUNNING, lease_expires_at__lt=timezone.now())
            )
            .order_by("round__number", "number")
            .values_list("pk", flat=True)
        )
        if not claimable:
            if not tables.filter(status=Table.Status.RUNNING).exists():
                return played
            time.sleep(0.05)  # a worker plays a table of this round: wait for it
            continue
        for table_id in claimable:
            outcome = table_run(table_id=table_id, worker=worker, token=f"{worker}-{table_id}")
            if outcome.outcome == "failed":
                raise ApplicationError(f"table {table_id} failed: {outcome.detail}")
            if outcome.outcome == "deferred":
                time.sleep(0.05)  # a worker on this kernel plays a table of its round
            played += outcome.outcome == "recorded"
