"""Sending work to the workers: the one module the services queue Celery tasks through.

Tasks are sent by name, once the transaction that made their work commits, so the services
never import the task module (the tasks import the services). The names are the services the
tasks call.

A send never raises into the code that committed: the work is in the database already. A table
whose message could not be sent (the broker away) is marked for the next sweep to send
(``queued_at`` NULL), and every other callback of the transaction still runs (``robust``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Final

from celery import current_app
from django.db import transaction

from tournaments import judging
from tournaments.models import Table, Tournament

log = logging.getLogger(__name__)

TABLE_RUN: Final = "tournaments.tasks.table_run"
TABLE_SWEEP: Final = "tournaments.tasks.table_sweep"
BOT_VERSION_VALIDATE: Final = "tournaments.tasks.bot_version_validate"
WORKER_HEARTBEAT_RECORD: Final = "tournaments.tasks.worker_heartbeat_record"
MATCH_BATCH_RUN: Final = "tournaments.tasks.match_batch_run"
TOURNAMENT_AUDIT_STORE: Final = "tournaments.tasks.tournament_audit_store"

# Tasks that keep the service going: on a queue of their own, so that a backlog of tables never
# delays them (config.celery routes them; every worker consumes both queues).
HOUSEKEEPING_TASKS: Final = frozenset({TABLE_SWEEP, WORKER_HEARTBEAT_RECORD})
HOUSEKEEPING_SUFFIX: Final = ".housekeeping"

# After a failed send, the sends of the next few seconds do not wait for the broker's timeouts
# again: they go straight to the sweep (a round of 50 tables would otherwise cost minutes).
_BROKER_BACKOFF_SECONDS = 5.0
_broker_failed_at = 0.0
_broker_lock = threading.Lock()


def housekeeping_queue() -> str:
    return f"{current_app.conf.task_default_queue}{HOUSEKEEPING_SUFFIX}"


def tables_queue() -> str:
    return str(current_app.conf.task_default_queue)


def _broker_recently_failed() -> bool:
    return time.monotonic() - _broker_failed_at < _BROKER_BACKOFF_SECONDS


def _note_broker_failure() -> None:
    global _broker_failed_at
    with _broker_lock:
        _broker_failed_at = time.monotonic()


def send(name: str, args: tuple[object, ...], **options: Any) -> bool:
    """Send a task now; False (logged) if the broker refused or was away."""
    if _broker_recently_failed():
        log.warning("%s%r not sent: the broker failed moments ago", name, args)
        return False
    try:
        current_app.send_task(name, args=args, **options)
    except Exception:
        _note_broker_failure()
        log.exception("%s%r could not be sent", name, args)
        return False
    return True


def _send_on_commit(name: str, args: tuple[object, ...], **options: Any) -> None:
    transaction.on_commit(lambda: send(name, args, **options), robust=True)


def table_options(*, tournament: Tournament) -> dict[str, Any]:
    """A table task's time limits: above the table's time budget."""
    budget = judging.table_time_budget(tournament=tournament)
    return {"soft_time_limit": budget + 60, "time_limit": budget + 120}


def table_send(*, table_id: int, options: dict[str, Any]) -> bool:
    """Send a table's task now. If it cannot be sent, the table is left for the next sweep
    (``queued_at`` NULL), which sends it again."""
    if send(TABLE_RUN, (table_id,), **options):
        return True
    try:
        Table.objects.filter(pk=table_id, status=Table.Status.PENDING).update(queued_at=None)
    except Exception:  # the database too: the sweep's pending re-queue will find it
        log.exception("table %s: could not mark it for the sweep to send", table_id)
    return False


def table_enqueue(*, table: Table, tournament: Tournament) -> None:
    """Queue a table's task once the current transaction commits, with time limits above the
    table's time budget."""
    options = table_options(tournament=tournament)
    table_id = table.pk
    transaction.on_commit(lambda: table_send(table_id=table_id, options=options), robust=True)


def match_batch_enqueue(*, batch_id: int, options: dict[str, Any]) -> None:
    """Queue a match's batch on the tables' queue once the current transaction commits (a
    failed send leaves it for the match sweep: ``queued_at`` is then stale)."""
    _send_on_commit(MATCH_BATCH_RUN, (batch_id,), **options)


def tournament_audit_store(*, tournament_id: int) -> None:
    """Queue the audit of a tournament that finishes, once the transaction commits (a failed
    send leaves its audit to be made on its page's first visit, as before summaries)."""
    _send_on_commit(TOURNAMENT_AUDIT_STORE, (tournament_id,))


def bot_version_validate(*, version_id: int) -> None:
    """Queue the validation of a new upload once the current transaction commits."""
    _send_on_commit(BOT_VERSION_VALIDATE, (version_id,))


BROKER_MARKER_PREFIX: Final = "tapis:broker-marker:"


def broker_lost_its_queue() -> bool | None:
    """Whether the broker lost its data since the last call (a Redis restarted without its
    append-only file): a marker key set here is gone. True the first time too (nothing was
    marked yet), None for brokers without keys (the demo's file system) or when the broker is
    away. The caller then re-sends every pending table."""
    url = str(current_app.conf.broker_url or "")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    try:
        with current_app.connection_for_write() as conn:
            client = conn.default_channel.client
            created = client.set(BROKER_MARKER_PREFIX + tables_queue(), "1", nx=True)
    except Exception:
        log.exception("could not check the broker's marker")
        return None
    return bool(created)
