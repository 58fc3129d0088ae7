"""Sending work to the workers: the one module the services queue Celery tasks through.

Tasks are sent by name, once the transaction that made their work commits, so the services
never import the task module (the tasks import the services). The names are the services the
tasks call.
"""

from __future__ import annotations

from typing import Any, Final

from celery import current_app
from django.db import transaction

from tournaments import judging
from tournaments.models import Table, Tournament

TABLE_RUN: Final = "tournaments.tasks.table_run"
TABLE_SWEEP: Final = "tournaments.tasks.table_sweep"
BOT_VERSION_VALIDATE: Final = "tournaments.tasks.bot_version_validate"
WORKER_HEARTBEAT_RECORD: Final = "tournaments.tasks.worker_heartbeat_record"


def _send_on_commit(name: str, args: tuple[object, ...], **options: Any) -> None:
    transaction.on_commit(lambda: current_app.send_task(name, args=args, **options))


def table_enqueue(*, table: Table, tournament: Tournament, countdown: float | None = None) -> None:
    """Queue a table's task once the current transaction commits, with time limits above the
    table's time budget."""
    budget = judging.table_time_budget(tournament=tournament)
    options: dict[str, Any] = {"soft_time_limit": budget + 60, "time_limit": budget + 120}
    if countdown:
        options["countdown"] = countdown
    _send_on_commit(TABLE_RUN, (table.pk,), **options)


def bot_version_validate(*, version_id: int) -> None:
    """Queue the validation of a new upload once the current transaction commits."""
    _send_on_commit(BOT_VERSION_VALIDATE, (version_id,))
