"""Celery tasks of the tournaments app: thin, they take ids and call the service they are
named after (services queue them by these names through :mod:`tournaments.queue`).

Task policy (docs/operations.md):

* ``table_run`` is long: acknowledged late and rejected (so re-delivered) when its worker is
  lost; soft and hard time limits are set per call above the table's time budget
  (``queue.table_options``). It is safe to run twice: the claim is a compare-and-set and only
  the current claim records. It is never retried from a worker's memory: a table the
  infrastructure stopped is given back to the database, and the sweep sends it again. A local
  error of the worker's machine takes the worker out of rotation
  (:func:`tournaments.worker_process.out_of_rotation`).
* ``table_sweep`` runs the sweep if no worker ran it this period (workers run it on their own
  timer; beat or an operator may send it too).
* ``bot_version_validate`` plays a new upload at a short sandboxed table; when the database or
  the broker is away its message goes back to the queue (no countdown in a worker's memory).
* ``match_batch_run`` plays a batch of a match (services.matches): like ``table_run``, late
  acknowledged, safe to run twice, never retried from memory (the match sweep sends it again).
* ``worker_heartbeat_record`` records that the worker that ran it is alive (workers record
  their own heartbeat on a timer; the task is for checks by hand).
* ``tournament_audit_store`` audits a tournament that finished (every deal re-played through
  the engine) and stores the report for its audit page; safe to run twice, never retried (its
  page makes the audit when there is none).
"""

from __future__ import annotations

import time
from typing import Any

from celery import Task, shared_task
from celery.exceptions import Reject, SoftTimeLimitExceeded

from tournaments import queue, services, worker_process
from tournaments.errors import DATABASE_ERRORS, INFRASTRUCTURE_ERRORS
from tournaments.models import Table
from tournaments.services import matches
from tournaments.services.tables import WorkerOutOfRotation

# Before a table's message goes back to the queue because the database is away.
REQUEUE_PAUSE_SECONDS = 2.0


@shared_task(bind=True, name=queue.WORKER_HEARTBEAT_RECORD, ignore_result=False)
def worker_heartbeat_record(self: Task) -> dict[str, Any]:
    """Record that the worker running this task is alive."""
    hostname = self.request.hostname or "unknown"
    heartbeat = services.worker_heartbeat_record(hostname=hostname)
    return {
        "hostname": heartbeat.hostname,
        "last_seen": heartbeat.last_seen.isoformat(),
        "beats": heartbeat.beats,
    }


@shared_task(bind=True, name=queue.TABLE_RUN, acks_late=True, reject_on_worker_lost=True)
def table_run(self: Task, table_id: int) -> dict[str, Any]:
    """Claim, play and record one table."""
    token = str(self.request.id or f"local-{table_id}")
    worker = str(self.request.hostname or "unknown")
    reason = worker_process.out_of_rotation_reason()
    if reason:
        # This process cannot play: leave the table for the sweep to send elsewhere.
        Table.objects.filter(pk=table_id, status=Table.Status.PENDING).update(queued_at=None)
        return {"table": table_id, "outcome": "released", "detail": reason}
    try:
        return services.table_run(table_id=table_id, worker=worker, token=token).as_json()
    except DATABASE_ERRORS as exc:
        # The claim found the database away: the message goes back to the broker (not into
        # this worker's memory as a countdown), after a pause that keeps it from spinning.
        time.sleep(REQUEUE_PAUSE_SECONDS)
        message = "the database is away: the table's message goes back to the queue"
        raise Reject(message, requeue=True) from exc
    except WorkerOutOfRotation as exc:
        worker_process.out_of_rotation(hostname=worker, reason=exc.reason)
        return {"table": table_id, "outcome": "released", "detail": exc.reason}
    except SoftTimeLimitExceeded:
        services.table_fail(
            table_id=table_id, token=token, error="the table went over its time limit"
        )
        return {"table": table_id, "outcome": "failed", "detail": "time limit"}


@shared_task(bind=True, name=queue.MATCH_BATCH_RUN, acks_late=True, reject_on_worker_lost=True)
def match_batch_run(self: Task, batch_id: int) -> dict[str, Any]:
    """Claim, play and record one batch of a match."""
    token = str(self.request.id or f"local-batch-{batch_id}")
    try:
        return matches.match_batch_run(
            batch_id=batch_id, worker=str(self.request.hostname or "unknown"), token=token
        )
    except SoftTimeLimitExceeded:
        matches.match_batch_fail(batch_id=batch_id, token=token, error="over its time limit")
        return {"batch": batch_id, "outcome": "failed", "detail": "time limit"}


@shared_task(bind=True, name=queue.TABLE_SWEEP, ignore_result=False)
def table_sweep(self: Task) -> dict[str, Any] | None:
    """Run the sweep if no worker ran it this period."""
    report = services.sweep_if_due(by=str(self.request.hostname or "task"))
    return None if report is None else report.as_json()


@shared_task(bind=True, name=queue.BOT_VERSION_VALIDATE, acks_late=True, reject_on_worker_lost=True)
def bot_version_validate(self: Task, version_id: int) -> dict[str, Any]:
    """Validate a new bot version at a short sandboxed table against built-in bots. If the
    infrastructure is away, the version is pending again (the service) and the message goes
    back to the queue, as a table's does."""
    try:
        version = services.bot_version_validate(version_id=version_id)
    except INFRASTRUCTURE_ERRORS as exc:
        time.sleep(REQUEUE_PAUSE_SECONDS)
        message = "the infrastructure is away: the validation goes back to the queue"
        raise Reject(message, requeue=True) from exc
    return {"version": version.pk, "status": version.status}


@shared_task(
    bind=True, name=queue.TOURNAMENT_AUDIT_STORE, acks_late=True, reject_on_worker_lost=True
)
def tournament_audit_store(self: Task, tournament_id: int) -> dict[str, Any]:
    """Audit a finished tournament and store the report (services.tournament_audit_store)."""
    audit = services.tournament_audit_store(tournament_id=tournament_id)
    return {
        "tournament": tournament_id,
        "stored": audit is not None,
        "ok": audit.ok if audit is not None else None,
    }
