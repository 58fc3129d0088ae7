"""A worker's pool process keeps its database connection from one task to the next (a new
PostgreSQL backend for every table cost the table its connection and the server its caches),
and still drops one that is broken, as Django does after a request."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from celery.fixups.django import DjangoWorkerFixup
from django.db import connection

from config.celery import app
from tournaments import worker_process

pytestmark = pytest.mark.django_db(transaction=True)


def task(*, eager: bool = False) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_celery_is_told_to_reuse_the_connection() -> None:
    # Without it, Celery's Django fixup closes every connection before and after each task.
    assert DjangoWorkerFixup(app).db_reuse_max


def test_a_sound_connection_outlives_the_task() -> None:
    connection.ensure_connection()
    before = connection.connection
    worker_process._close_old_connections(sender=task())
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    assert connection.connection is before


def test_a_broken_connection_is_closed_after_the_task() -> None:
    connection.ensure_connection()
    assert connection.connection is not None
    connection.connection.close()  # as when PostgreSQL restarted under it
    connection.errors_occurred = True  # as Django marks it when a query failed
    worker_process._close_old_connections(sender=task())
    assert connection.connection is None
    with connection.cursor() as cursor:  # the next task connects anew
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_an_eager_task_leaves_its_callers_connection_alone() -> None:
    connection.ensure_connection()
    before = connection.connection
    connection.errors_occurred = True
    before.close()
    worker_process._close_old_connections(sender=task(eager=True))
    assert connection.connection is before
    connection.close()


@pytest.mark.parametrize("sweeps", [True, False])
def test_the_timer_sweeps_unless_told_not_to(
    sweeps: bool, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker's timer beats and runs the sweep when it is due; TAPIS_WORKER_SWEEP off, it
    only beats (the tests' session worker runs so: its sweep claimed other tests' tables)."""
    settings.TAPIS_WORKER_SWEEP = sweeps
    calls: list[str] = []
    monkeypatch.setattr(worker_process, "beat", lambda **_: calls.append("beat"))
    monkeypatch.setattr(worker_process, "sweep", lambda: calls.append("sweep"))
    stop = worker_process._stop
    monkeypatch.setattr(stop, "wait", lambda _: len(calls) >= 4)  # two rounds of the timer
    worker_process._timer_loop()
    assert calls == (["beat", "sweep"] * 2 if sweeps else ["beat"] * 4)
