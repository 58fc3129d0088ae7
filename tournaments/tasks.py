"""Celery tasks of the tournaments app: thin, they take ids and call the service they are
named after (services queue them by these names through :mod:`tournaments.queue`).

Task policy (docs/operations.md):

* ``table_run`` is long: acknowledged late and rejected (so re-delivered) when its worker is
  lost; soft and hard time limits are set per call above the table's time budget
  (``queue.table_enqueue``). It is safe to run twice: the claim is a compare-and-set and a
  recorded table is never recorded again. Only infrastructure errors (the database or the broker
  away) are retried, with exponential backoff; a table that cannot be played is marked failed for
  an operator to re-run.
* ``table_sweep`` runs every 30 s from beat: it re-queues tables whose worker died (expired
  lease) and tables whose message was lost.
* ``bot_version_validate`` plays a new upload at a short sandboxed table.
* ``worker_heartbeat_record`` records that the worker that ran it is alive.
"""

from __future__ import annotations

from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from tournaments import queue, services
from tournaments.errors import INFRASTRUCTURE_ERRORS

RETRY_POLICY: dict[str, Any] = {
    "autoretry_for": INFRASTRUCTURE_ERRORS,
    "retry_backoff": 2,
    "retry_backoff_max": 300,
    "retry_jitter": True,
    "max_retries": 8,
}


@shared_task(bind=True, name=queue.WORKER_HEARTBEAT_RECORD, ignore_result=False)
def worker_heartbeat_record(self: Task) -> dict[str, Any]:
    """Record that the worker running this task is alive (scheduled every minute by beat)."""
    hostname = self.request.hostname or "unknown"
    heartbeat = services.worker_heartbeat_record(hostname=hostname)
    return {
        "hostname": heartbeat.hostname,
        "last_seen": heartbeat.last_seen.isoformat(),
        "beats": heartbeat.beats,
    }


@shared_task(
    bind=True, name=queue.TABLE_RUN, acks_late=True, reject_on_worker_lost=True, **RETRY_POLICY
)
def table_run(self: Task, table_id: int) -> dict[str, Any]:
    """Claim, play and record one table."""
    token = str(self.request.id or f"local-{table_id}")
    worker = str(self.request.hostname or "unknown")
    try:
        return services.table_run(table_id=table_id, worker=worker, token=token).as_json()
    except SoftTimeLimitExceeded:
        services.table_fail(
            table_id=table_id, token=token, error="the table went over its time limit"
        )
        return {"table": table_id, "outcome": "failed", "detail": "time limit"}


@shared_task(name=queue.TABLE_SWEEP, ignore_result=False, **RETRY_POLICY)
def table_sweep() -> dict[str, Any]:
    """Re-queue tables whose lease expired and pending tables whose message was lost."""
    return services.table_sweep().as_json()


@shared_task(
    bind=True,
    name=queue.BOT_VERSION_VALIDATE,
    acks_late=True,
    reject_on_worker_lost=True,
    **RETRY_POLICY,
)
def bot_version_validate(self: Task, version_id: int) -> dict[str, Any]:
    """Validate a new bot version at a short sandboxed table against built-in bots."""
    version = services.bot_version_validate(version_id=version_id)
    return {"version": version.pk, "status": version.status}
