"""Tables under faults (issue 13): only the current claim records, a worker that lost its lease
stops, a broker error after the commit strands nothing, a redelivered message takes over no
live claim, a local disk error gives the table back, and the sweep runs once per period."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from celery import current_app
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import app as celery_app
from tests.tournaments.factories import (
    BotFactory,
    enter,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import conf, queue, services
from tournaments.errors import ApplicationError
from tournaments.models import Deal, Housekeeping, Round, Table, Tournament, WorkerHeartbeat

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_worker_takes_the_tables(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Tasks are recorded, not sent: a session's live worker must not play these tables."""
    sent: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=(), **_: sent.append((name, tuple(args)))
    )
    return sent


EIGHT = ["heuristic", "lowest", "random", "random", "heuristic", "lowest", "random", "random"]


def _started(**kwargs: Any) -> Tournament:
    tournament = make_tournament(**kwargs)
    enter_builtins(tournament, EIGHT)
    services.tournament_start(tournament=tournament)
    return tournament


def _first_table(tournament: Tournament) -> Table:
    table = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert table is not None
    return table


# --- bug 1: only the current claim records; a worker that lost its lease stops ---------------


def test_a_late_result_of_an_expired_claim_is_refused() -> None:
    tournament = _started(rounds=1, deals_per_table=2)
    table = _first_table(tournament)
    paused = services.table_claim(table_id=table.pk, worker="paused", token="old")
    assert paused is not None
    late_result = services.table_play(table=paused)
    # The paused worker's lease ran out: the sweep gave the table to another worker.
    later = timezone.now() + timedelta(seconds=conf.lease_seconds() + 1)
    assert services.table_sweep(now=later).requeued == [table.pk]
    live = services.table_claim(table_id=table.pk, worker="live", token="new")
    assert live is not None

    # The paused worker wakes up and tries to record: refused, nothing written.
    assert services.table_record_result(table_id=table.pk, result=late_result, token="old") is False
    assert not Deal.objects.filter(table=table).exists()
    # The live re-run records.
    result = services.table_play(table=live)
    assert services.table_record_result(table_id=table.pk, result=result, token="new") is True
    assert Deal.objects.filter(table=table).count() == 2
    table.refresh_from_db()
    assert (table.status, table.claimed_by) == (Table.Status.DONE, "live")


def test_a_worker_that_learns_its_lease_is_lost_stops_playing(settings: Any) -> None:
    settings.TAPIS_TABLE_LEASE_SECONDS = 1.5  # renewed every 0.5 s
    tournament = make_tournament(rounds=1, deals_per_table=30, decision_seconds=1.0)
    for _ in range(4):
        enter(tournament, file_version(BotFactory.create(), "slow"))
    services.tournament_start(tournament=tournament)
    table = _first_table(tournament)
    outcome: list[services.TableRun] = []

    def work() -> None:
        try:
            outcome.append(services.table_run(table_id=table.pk, worker="w1", token="first"))
        finally:
            connection.close()

    thread = threading.Thread(target=work)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not Table.objects.filter(pk=table.pk, status=Table.Status.RUNNING).exists():
            assert time.monotonic() < deadline, "the table never started"
            time.sleep(0.05)
        # Another worker takes the table over (as after an expired lease).
        Table.objects.filter(pk=table.pk).update(claimed_by="w2", claim_token="second")
    finally:
        thread.join(timeout=120)
    assert not thread.is_alive()
    assert [o.outcome for o in outcome] == ["lost"]
    assert not Deal.objects.filter(table=table).exists()
    table.refresh_from_db()
    assert (table.status, table.claim_token) == (Table.Status.RUNNING, "second")


# --- bug 2: a broker error after the commit strands nothing ------------------------------------


def test_a_broker_error_after_the_commit_leaves_the_next_round_to_the_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tournament = _started(rounds=2, deals_per_table=1)
    first, last = Table.objects.filter(tournament=tournament).order_by("number")
    assert services.table_run(table_id=first.pk, worker="w", token="a").outcome == "recorded"
    sent: list[tuple[str, tuple[Any, ...]]] = []

    def broker_down(name: str, args: tuple[Any, ...] = (), **_: Any) -> None:
        raise BrokerError("Error 111 connecting to redis: Connection refused.")

    monkeypatch.setattr(current_app, "send_task", broker_down)
    run = services.table_run(table_id=last.pk, worker="w", token="b")

    # The table is recorded and reported so; the next round is seated, its tables left for
    # the sweep (not sent, marked so).
    assert run.outcome == "recorded"
    last.refresh_from_db()
    assert last.status == Table.Status.DONE
    second = Table.objects.filter(round__number=2, tournament=tournament)
    assert second.count() == 2
    assert list(second.values_list("queued_at", flat=True)) == [None, None]

    # The broker is back: the next sweep sends every one of them at once.
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=(), **_: sent.append((name, tuple(args)))
    )
    monkeypatch.setattr(queue, "_broker_failed_at", 0.0)
    report = services.table_sweep()
    assert sorted(report.resent) == sorted(second.values_list("pk", flat=True))
    assert sorted(sent) == sorted((queue.TABLE_RUN, (pk,)) for pk in report.resent)
    assert all(q is not None for q in second.values_list("queued_at", flat=True))


# --- bug 3: a redelivered message takes over no live claim; budgets below the broker's ---------


def test_a_redelivered_message_does_not_take_over_a_live_claim() -> None:
    table = _first_table(_started(rounds=1))
    assert services.table_claim(table_id=table.pk, worker="w1", token="task-1") is not None
    # Redis delivers the same message (same task id) to another worker while w1 plays.
    assert services.table_claim(table_id=table.pk, worker="w2", token="task-1") is None
    assert Table.objects.get(pk=table.pk).claimed_by == "w1"
    # After the lease expired (w1 died), the same task id may claim again.
    later = timezone.now() + timedelta(seconds=conf.lease_seconds() + 1)
    again = services.table_claim(table_id=table.pk, worker="w2", token="task-1", now=later)
    assert again is not None
    assert again.claimed_by == "w2"


def test_the_broker_redelivers_only_after_the_longest_table_budget() -> None:
    options = celery_app.conf.broker_transport_options
    assert options["visibility_timeout"] == conf.broker_visibility_timeout()
    # The hard time limit of the longest allowed table, and a sweep, fit below it.
    assert conf.max_table_budget() + 120 + conf.sweep_seconds() < options["visibility_timeout"]


def test_a_tournament_whose_tables_may_outlast_the_broker_is_refused() -> None:
    with pytest.raises(ApplicationError) as refused:
        make_tournament(rounds=1, deals_per_table=500, decision_seconds=30.0)
    assert refused.value.code == "time_budget"
    assert refused.value.extra["max_seconds"] == round(conf.max_table_budget())
    make_tournament(rounds=1, deals_per_table=100, decision_seconds=1.0)  # 5,690 s: fine


# --- bug 4: a local error of the worker gives the table back -----------------------------------


@contextlib.contextmanager
def full_filesystem(path: Path) -> Iterator[Path]:
    """A tiny tmpfs at ``path``, filled up: every write there fails with ENOSPC."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tapis-full", str(path)], check=True)
    try:
        with contextlib.suppress(OSError), (path / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root (CI runs as root)")
def test_a_full_bot_cache_gives_the_table_back_without_an_attempt(
    settings: Any, tmp_path: Path
) -> None:
    tournament = make_tournament(rounds=1, deals_per_table=1)
    for _ in range(4):
        enter(tournament, file_version(BotFactory.create(), "first_legal"))
    services.tournament_start(tournament=tournament)
    table = _first_table(tournament)
    with full_filesystem(tmp_path / "cache") as cache:
        settings.TAPIS_BOT_CACHE_DIR = cache
        with pytest.raises(services.WorkerOutOfRotation) as raised:
            services.table_run(table_id=table.pk, worker="broken", token="t")
    assert raised.value.reason.startswith("ENOSPC")
    table.refresh_from_db()
    # Pending again, its attempt given back, left for the sweep to send elsewhere; not failed.
    assert (table.status, table.attempts, table.claims, table.queued_at) == (
        Table.Status.PENDING,
        0,
        1,
        None,
    )
    assert "ENOSPC" in table.error
    settings.TAPIS_BOT_CACHE_DIR = tmp_path / "good-cache"
    assert table.pk in services.table_sweep().resent
    assert services.table_run(table_id=table.pk, worker="good", token="u").outcome == "recorded"


def test_local_errors_are_told_from_the_tables_own() -> None:
    assert services.local_worker_error(OSError(errno.ENOSPC, "No space left on device", "/c"))
    assert services.local_worker_error(OSError(errno.EROFS, "Read-only file system"))
    assert services.local_worker_error(FileNotFoundError(2, "No such file", "/usr/bin/bwrap"))
    assert services.local_worker_error(ValueError("a bad setting")) is None
    assert services.local_worker_error(FileNotFoundError(2, "No such file", "/bot/x.py")) is None


# --- attempts: only the table's own play counts ------------------------------------------------


def test_an_expired_lease_of_a_worker_gone_gives_its_attempt_back() -> None:
    table = _first_table(_started(rounds=1))
    services.table_claim(table_id=table.pk, worker="gone", token="a")
    WorkerHeartbeat.objects.create(hostname="gone", last_seen=timezone.now())
    later = timezone.now() + timedelta(seconds=conf.lease_seconds() + 1)
    for n in range(conf.max_attempts() + 2):  # killed again and again: never failed for it
        assert services.table_sweep(now=later + timedelta(hours=n)).requeued == [table.pk]
        assert services.table_claim(
            table_id=table.pk, worker="gone", token=f"t{n}", now=later + timedelta(hours=n)
        )
    table.refresh_from_db()
    assert (table.status, table.attempts, table.claims) == (Table.Status.RUNNING, 1, 6)


def test_a_table_that_keeps_killing_its_worker_fails_after_its_attempts(settings: Any) -> None:
    table = _first_table(_started(rounds=1))
    now = timezone.now()
    for n in range(conf.max_attempts()):
        at = now + timedelta(hours=n)
        assert services.table_claim(table_id=table.pk, worker="alive", token=f"t{n}", now=at)
        # Its worker is seen alive after the lease ran out: its process died under the table.
        seen = at + timedelta(seconds=conf.lease_seconds() + 5)
        WorkerHeartbeat.objects.update_or_create(hostname="alive", defaults={"last_seen": seen})
        report = services.table_sweep(now=seen)
    assert report.failed == [table.pk]
    table.refresh_from_db()
    assert (table.status, table.attempts) == (Table.Status.FAILED, conf.max_attempts())


# --- the sweep: every worker may run it, once per period overall ------------------------------


def test_the_sweep_runs_once_per_period_whoever_asks(settings: Any) -> None:
    settings.TAPIS_SWEEP_SECONDS = 3600
    assert services.sweep_if_due(by="w1") is not None
    assert services.sweep_if_due(by="w2") is None
    sweep = Housekeeping.objects.get(name="sweep")
    assert (sweep.runs, sweep.last_by) == (1, "w1")
    assert sweep.last_done_at is not None
    Housekeeping.objects.update(last_run_at=timezone.now() - timedelta(hours=2))
    assert services.sweep_if_due(by="w2") is not None
    assert Housekeeping.objects.get(name="sweep").last_by == "w2"


def test_a_round_is_seated_once_whatever_order_the_tables_end() -> None:
    tournament = _started(rounds=2, deals_per_table=1)
    for table in Table.objects.filter(tournament=tournament).order_by("-number"):
        assert services.table_run(table_id=table.pk, worker="w", token=f"t{table.pk}").outcome == (
            "recorded"
        )
    assert Round.objects.filter(tournament=tournament).count() == 2


def test_a_table_message_goes_back_to_the_queue_when_the_database_is_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from celery.exceptions import Reject
    from django.db import OperationalError

    from tournaments import tasks

    def database_away(**_: Any) -> None:
        raise OperationalError("connection to server failed: Connection refused")

    monkeypatch.setattr(services, "table_run", database_away)
    monkeypatch.setattr(tasks, "REQUEUE_PAUSE_SECONDS", 0.0)
    with pytest.raises(Reject) as rejected:
        tasks.table_run.run(12345)
    assert rejected.value.requeue is True


def test_a_validation_goes_back_to_the_queue_when_the_database_is_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from celery.exceptions import Reject
    from django.db import OperationalError

    from tournaments import tasks

    def database_away(**_: Any) -> None:
        raise OperationalError("connection to server failed: Connection refused")

    monkeypatch.setattr(services, "bot_version_validate", database_away)
    monkeypatch.setattr(tasks, "REQUEUE_PAUSE_SECONDS", 0.0)
    with pytest.raises(Reject) as rejected:
        tasks.bot_version_validate.run(12345)
    assert rejected.value.requeue is True
