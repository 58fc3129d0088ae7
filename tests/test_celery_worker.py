"""A real Celery worker runs a real task against the real broker and database."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.utils import timezone

from config.celery import app as celery_app
from tournaments.models import WorkerHeartbeat
from tournaments.tasks import worker_heartbeat_record

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
    assert not WorkerHeartbeat.objects.exists()

    result = worker_heartbeat_record.delay().get(timeout=30)

    heartbeat = WorkerHeartbeat.objects.get()
    assert heartbeat.hostname == result["hostname"]
    assert heartbeat.hostname.startswith("tapis-test-")
    assert heartbeat.beats == 1
    assert timezone.now() - heartbeat.last_seen < timedelta(minutes=1)


@pytest.mark.slow
def test_worker_sees_what_the_test_committed(live_worker: LiveWorker) -> None:
    first = worker_heartbeat_record.delay().get(timeout=30)
    WorkerHeartbeat.objects.filter(hostname=first["hostname"]).update(beats=41)

    second = worker_heartbeat_record.delay().get(timeout=30)

    assert second["beats"] == 42
    assert WorkerHeartbeat.objects.get(hostname=first["hostname"]).beats == 42


@pytest.mark.slow
def test_worker_restarts_after_a_kill(live_worker: LiveWorker) -> None:
    live_worker.kill()
    assert not live_worker.alive
    assert not live_worker.ping()

    live_worker.start()

    assert worker_heartbeat_record.delay().get(timeout=30)["beats"] == 1
