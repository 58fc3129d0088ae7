"""A real Celery worker runs a real task against the real broker and database."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone

from config.celery import app as celery_app
from config.celery import route_task
from tests.tournaments.factories import BotFactory, enter, file_version, make_tournament
from tournaments import queue, services
from tournaments.models import Housekeeping, Table, Tournament, WorkerHeartbeat
from tournaments.tasks import table_sweep, worker_heartbeat_record

if TYPE_CHECKING:
    from tests.conftest import LiveWorker


def test_celery_is_configured_for_long_tasks_and_json_only() -> None:
    conf = celery_app.conf
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.task_serializer == "json"
    assert conf.result_serializer == "json"
    assert list(conf.accept_content) == ["json"]
    assert list(conf.result_accept_content) == ["json"]


def test_tasks_are_autodiscovered() -> None:
    celery_app.loader.import_default_modules()
    assert "tournaments.tasks.worker_heartbeat_record" in celery_app.tasks


@pytest.mark.slow
def test_worker_runs_a_task_that_writes_the_database(live_worker: LiveWorker) -> None:
    result = worker_heartbeat_record.delay().get(timeout=30)

    heartbeat = WorkerHeartbeat.objects.get(hostname=result["hostname"])
    assert heartbeat.hostname.startswith("tapis-test-")
    assert heartbeat.beats == result["beats"] >= 1
    assert timezone.now() - heartbeat.last_seen < timedelta(minutes=1)


@pytest.mark.slow
def test_worker_sees_what_the_test_committed(live_worker: LiveWorker) -> None:
    first = worker_heartbeat_record.delay().get(timeout=30)
    WorkerHeartbeat.objects.filter(hostname=first["hostname"]).update(beats=1000)

    second = worker_heartbeat_record.delay().get(timeout=30)

    assert second["beats"] >= 1001
    assert WorkerHeartbeat.objects.get(hostname=first["hostname"]).beats >= 1001


@pytest.mark.slow
def test_worker_restarts_after_a_kill(live_worker: LiveWorker) -> None:
    live_worker.kill()
    assert not live_worker.alive
    assert not live_worker.ping()
    killed_at = timezone.now()

    live_worker.start()

    assert worker_heartbeat_record.delay().get(timeout=30)["beats"] >= 1
    wait_until(
        lambda: WorkerHeartbeat.objects.filter(started_at__gt=killed_at).exists(),
        "the restarted worker's heartbeat",
        live_worker,
    )


def wait_until(condition: Callable[[], bool], what: str, worker: LiveWorker, timeout=60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{worker.log()}")


@pytest.mark.slow
def test_each_worker_records_its_own_heartbeat_with_what_it_plays(live_worker: LiveWorker) -> None:
    tournament = make_tournament(rounds=1, deals_per_table=6)
    for _ in range(8):
        enter(tournament, file_version(BotFactory.create(), "slow"))
    services.tournament_start(tournament=tournament)
    tables = set(Table.objects.filter(tournament=tournament).values_list("pk", flat=True))

    # Without any task of its own: the worker's timer reports what its processes play.
    def playing() -> bool:
        return any(set(h.playing) & tables for h in WorkerHeartbeat.objects.all())

    wait_until(playing, "a heartbeat listing a table in play", live_worker)
    heartbeat = next(h for h in WorkerHeartbeat.objects.all() if set(h.playing) & tables)
    assert heartbeat.hostname.startswith("tapis-test-")
    assert heartbeat.host == socket.gethostname()
    assert live_worker.process is not None
    assert heartbeat.pid == live_worker.process.pid
    assert heartbeat.started_at is not None
    assert heartbeat.problem == ""
    tournament.refresh_from_db()
    wait_until(
        lambda: Tournament.objects.get(pk=tournament.pk).status == Tournament.Status.FINISHED,
        "the tournament to finish",
        live_worker,
        timeout=120,
    )


@pytest.mark.slow
def test_housekeeping_has_its_own_queue_that_every_worker_consumes(
    live_worker: LiveWorker,
) -> None:
    queues = celery_app.control.inspect(timeout=2).active_queues() or {}
    names = {q["name"] for worker_queues in queues.values() for q in worker_queues}
    default = str(celery_app.conf.task_default_queue)
    assert names == {default, default + ".housekeeping"}
    assert route_task(queue.TABLE_SWEEP, (), {}, {}) == {"queue": default + ".housekeeping"}
    assert route_task(queue.TABLE_RUN, (), {}, {}) is None
    # A sweep sent by hand (or beat) runs on it, if due.
    Housekeeping.objects.all().delete()
    assert table_sweep.delay().get(timeout=30) is not None
    assert Housekeeping.objects.get(name="sweep").runs >= 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_no_worker_outlives_the_tests_that_use_it(request: pytest.FixtureRequest) -> None:
    # The test before this one (in file order) used the worker: it no longer beats nor sweeps
    # in this test's database (it claimed the sweep between two calls of a test of the sweep's
    # period, 1 run in 30 after a worker test in the same process).
    session_worker: LiveWorker = request.getfixturevalue("_live_worker_session")
    assert not session_worker.alive
    assert services.sweep_if_due(by="w1") is not None
    assert services.sweep_if_due(by="w2") is None
