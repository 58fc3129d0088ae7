"""Tables on the workers: claim (compare-and-set), keep the lease, play, fail, re-run, and the
periodic sweep that re-queues tables whose worker died or whose message was lost."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import traceback
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.utils import timezone

from games.base import JSON
from judge.runner import TableResult, run_table
from tournaments import conf, judging, queue
from tournaments.errors import DATABASE_ERRORS, ApplicationError
from tournaments.models import (
    Table,
    Tournament,
)
from tournaments.services._sql import TABLE, sql_row
from tournaments.services.recording import table_record_result

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


def table_claim(
    *, table_id: int, worker: str, token: str, now: datetime | None = None
) -> Table | None:
    """Claim a table for a worker (compare-and-set): it must be pending, or running under an
    expired lease (its worker died), or already claimed with this same token (a retry of the
    same task). None if another worker has it, it is done, or it used up its attempts."""
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
        "id = %s AND attempts < %s AND (status = %s OR (status = %s AND "
        "(lease_expires_at < %s OR claim_token = %s)))",
        table_id,
        conf.max_attempts(),
        Table.Status.PENDING,
        Table.Status.RUNNING,
        now,
        token[:64],
        update=(
            "status = %s, claimed_by = %s, claim_token = %s, lease_expires_at = %s, "
            "attempts = attempts + 1, started_at = %s",
            [
                Table.Status.RUNNING,
                worker[:255],
                token[:64],
                now + timedelta(seconds=conf.lease_seconds()),
                now,
            ],
        ),
    )
    if table is None:
        return None
    table.tournament = tournament
    return table


def table_lease_renew(*, table_id: int, token: str) -> bool:
    """Extend a claimed table's lease; False if the claim was lost (another worker has it)."""
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            lease_expires_at=timezone.now() + timedelta(seconds=conf.lease_seconds())
        )
    )


@contextlib.contextmanager
def _lease_kept(table_id: int, token: str) -> Iterator[None]:
    """Renew the table's lease every third of it from a thread while the table plays."""
    stop = threading.Event()
    interval = max(0.5, conf.lease_seconds() / 3)

    def keep() -> None:
        try:
            while not stop.wait(interval):
                try:
                    if not table_lease_renew(table_id=table_id, token=token):
                        log.warning("table %s: lease lost to another worker", table_id)
                except Exception:  # the database is away: try again next time
                    log.exception("table %s: lease renewal failed", table_id)
        finally:
            connection.close()

    thread = threading.Thread(target=keep, name=f"lease-table-{table_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def table_play(*, table: Table) -> TableResult:
    """Play a claimed table through the judge (no transaction is open meanwhile)."""
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
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TableRun:
    """What a table task did: ``played`` (and ``recorded``), or ``skipped`` and why."""

    table_id: int
    outcome: str  # "recorded", "duplicate", "skipped", "failed"
    detail: str = ""

    def as_json(self) -> dict[str, JSON]:
        return {"table": self.table_id, "outcome": self.outcome, "detail": self.detail}


def table_run(*, table_id: int, worker: str, token: str) -> TableRun:
    """Claim, play and record one table: what a table task does. Safe to run twice.

    Bots cannot make this fail (the judge turns whatever they do into faults). An error of the
    infrastructure (the database away) propagates, for the task to retry; any other error (a
    bug, a setting the judge refuses) marks the table failed with its traceback, for an
    operator to look at and re-run."""
    table = table_claim(table_id=table_id, worker=worker, token=token)
    if table is None:
        return TableRun(table_id, "skipped", "not claimable (done, taken or out of attempts)")
    try:
        with _lease_kept(table_id, token):
            result = table_play(table=table)
        recorded = table_record_result(table_id=table_id, result=result)
    except DATABASE_ERRORS:
        raise
    except Exception as exc:
        log.exception("table %s failed", table_id)
        table_fail(table_id=table_id, token=token, error=traceback.format_exc())
        return TableRun(table_id, "failed", f"{type(exc).__name__}: {exc}")
    return TableRun(table_id, "recorded" if recorded else "duplicate")


def table_fail(*, table_id: int, token: str, error: str) -> bool:
    return bool(
        Table.objects.filter(pk=table_id, status=Table.Status.RUNNING, claim_token=token).update(
            status=Table.Status.FAILED, error=error[-20000:], lease_expires_at=None
        )
    )


def table_rerun(*, table: Table) -> Table:
    """Queue a failed table again with fresh attempts (an operator's action)."""
    updated = Table.objects.filter(pk=table.pk, status=Table.Status.FAILED).update(
        status=Table.Status.PENDING,
        attempts=0,
        claim_token="",
        claimed_by="",
        lease_expires_at=None,
        queued_at=timezone.now(),
    )
    if not updated:
        raise ApplicationError(f"{table} is {table.status}: only a failed table can be re-run")
    table.refresh_from_db()
    if table.tournament.status == Tournament.Status.RUNNING:
        queue.table_enqueue(table=table, tournament=table.tournament)
    return table


@dataclasses.dataclass(frozen=True, slots=True)
class SweepReport:
    requeued: list[int]
    failed: list[int]
    resent: list[int]

    def as_json(self) -> dict[str, JSON]:
        return {
            "requeued": list[JSON](self.requeued),
            "failed": list[JSON](self.failed),
            "resent": list[JSON](self.resent),
        }


def table_sweep(*, now: datetime | None = None) -> SweepReport:
    """The periodic sweep: tables whose lease expired (their worker died) go back to the
    queue, or fail after too many attempts; pending tables whose message seems lost are
    queued again. Every change is a compare-and-set, so sweeps may overlap."""
    now = now or timezone.now()
    running = Tournament.Status.RUNNING
    requeued, failed, resent = [], [], []
    expired = Table.objects.filter(
        status=Table.Status.RUNNING, lease_expires_at__lt=now, tournament__status=running
    ).select_related("tournament")
    for table in expired:
        if table.attempts >= conf.max_attempts():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at__lt=now
            ).update(
                status=Table.Status.FAILED,
                lease_expires_at=None,
                error=f"the worker's lease expired {table.attempts} times "
                f"(last worker: {table.claimed_by})",
            ):
                failed.append(table.pk)
            continue
        with transaction.atomic():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.RUNNING, lease_expires_at__lt=now
            ).update(
                status=Table.Status.PENDING,
                claim_token="",
                lease_expires_at=None,
                queued_at=now,
                error=f"lease expired at {table.lease_expires_at:%Y-%m-%d %H:%M:%S} "
                f"(worker {table.claimed_by}); queued again",
            ):
                queue.table_enqueue(table=table, tournament=table.tournament)
                requeued.append(table.pk)
    stale = now - timedelta(seconds=conf.pending_requeue_seconds())
    lost = Table.objects.filter(
        status=Table.Status.PENDING, queued_at__lt=stale, tournament__status=running
    ).select_related("tournament")
    for table in lost:
        with transaction.atomic():
            if Table.objects.filter(
                pk=table.pk, status=Table.Status.PENDING, queued_at=table.queued_at
            ).update(queued_at=now):
                queue.table_enqueue(table=table, tournament=table.tournament)
                resent.append(table.pk)
    return SweepReport(requeued, failed, resent)


def tournament_run_here(*, tournament: Tournament, worker: str = "inline") -> int:
    """Play every table of a running tournament in this process, round after round, until
    it is finished (the demo does this; workers do it in production). Returns tables played.
    Tasks queued meanwhile find their tables done and do nothing."""
    played = 0
    while True:
        tournament.refresh_from_db(fields=["status"])
        if tournament.status != Tournament.Status.RUNNING:
            return played
        pending = list(
            Table.objects.filter(tournament=tournament, status=Table.Status.PENDING)
            .order_by("round__number", "number")
            .values_list("pk", flat=True)
        )
        if not pending:
            return played
        for table_id in pending:
            outcome = table_run(table_id=table_id, worker=worker, token=f"{worker}-{table_id}")
            if outcome.outcome == "failed":
                raise ApplicationError(f"table {table_id} failed: {outcome.detail}")
            played += outcome.outcome == "recorded"
