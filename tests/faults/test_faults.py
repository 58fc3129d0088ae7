"""Faults injected into a running service (issue 13): private PostgreSQL and Redis, two real
Celery workers, tiny tournaments of sandboxed slow bots (a table takes a few seconds). After
each fault: the tournament finished, every table's deals recorded exactly once, the audit
passes, the ratings changed once per seat; the time from the fault to the recovery of the
table it hit is printed (no timed assertion)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from tests.faults.harness import (
    BASE_DIR,
    LEASE_SECONDS,
    Cluster,
    Worker,
    new_dir,
    note_recovery,
    wait_for,
)

pytestmark = pytest.mark.slow

TIMEOUT = 240.0


def running_table(cluster: Cluster, tournament: int) -> tuple[int, str, str]:
    """(id, worker, claim token) of a table of ``tournament`` being played."""
    rows = cluster.query(
        "SELECT id, claimed_by, claim_token FROM tournaments_table "
        "WHERE tournament_id = %s AND status = 'running' ORDER BY id LIMIT 1",
        tournament,
    )
    return rows[0] if rows else (0, "", "")


def wait_running(cluster: Cluster, tournament: int, *workers: Worker) -> tuple[int, str, str]:
    found: list[tuple[int, str, str]] = []

    def started() -> bool:
        row = running_table(cluster, tournament)
        # Half a second in, so that the fault lands in the middle of the table.
        if row[0]:
            time.sleep(0.5)
            found.append(row)
        return bool(row[0])

    wait_for(started, 120, "a table to start", *workers)
    return found[-1]


def table_done(cluster: Cluster, table: int) -> Callable[[], bool]:
    return lambda: bool(
        cluster.query("SELECT 1 FROM tournaments_table WHERE id = %s AND status = 'done'", table)
    )


def tournament_over(cluster: Cluster, tournament: int) -> Callable[[], bool]:
    def check() -> bool:
        rows = cluster.query(
            "SELECT status, EXISTS (SELECT 1 FROM tournaments_table t WHERE t.tournament_id = "
            "tournaments_tournament.id AND t.status = 'failed') FROM tournaments_tournament "
            "WHERE id = %s",
            tournament,
        )
        return bool(rows) and (rows[0][0] != "running" or rows[0][1])

    return check


def assert_recorded_once(cluster: Cluster, tournament: int) -> dict[str, Any]:
    report = cluster.check(tournament)
    assert report["status"] == "finished", report
    assert {t["status"] for t in report["tables"]} == {"done"}, report
    assert [t["deals"] for t in report["tables"]] == [report["deals_per_table"]] * len(
        report["tables"]
    )
    assert report["audit_ok"] is True
    assert (
        report["rating_changes"]
        == report["rating_changes_distinct"]
        == report["seats_with_entries"]
    )
    return report


def recover(
    fault: str,
    cluster: Cluster,
    tournament: int,
    table: int,
    injected_at: float,
    *workers: Worker,
) -> dict[str, Any]:
    """Wait for the table hit and the tournament; record the recovery time; check it all."""
    wait_for(table_done(cluster, table), TIMEOUT, f"table {table} to be recorded", *workers)
    seconds = time.monotonic() - injected_at
    wait_for(tournament_over(cluster, tournament), TIMEOUT, "the tournament to end", *workers)
    report = assert_recorded_once(cluster, tournament)
    hit = next(t for t in report["tables"] if t["id"] == table)
    outcome = f"finished; table hit: {hit['claims']} claims, {hit['attempts']} attempt(s)"
    note_recovery(fault, outcome, seconds)
    return report


def test_sigkill_of_a_pool_process(cluster: Cluster, workers: Callable[..., Worker]) -> None:
    a, b = workers("pool-a"), workers("pool-b")
    tournament = cluster.create()
    table, holder, _ = wait_running(cluster, tournament, a, b)
    victim = a if holder == a.hostname else b
    pools = victim.pool_pids()
    assert pools, victim.log()
    for pid in pools:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    recover(
        "SIGKILL of a worker's pool process", cluster, tournament, table, time.monotonic(), a, b
    )


def test_sigkill_of_a_whole_worker_and_its_folders(
    cluster: Cluster, workers: Callable[..., Worker]
) -> None:
    a, b = workers("kill-a"), workers("kill-b")
    tournament = cluster.create()
    table, holder, _ = wait_running(cluster, tournament, a, b)
    victim = a if holder == a.hostname else b
    victim.kill()
    injected = time.monotonic()
    # Its pool process's temporary folder is left behind...
    left = list(victim.tmpdir.glob("tapis-worker-*"))
    assert left, "the killed worker's pool process had no folder of its own"
    report = recover("SIGKILL of a whole worker", cluster, tournament, table, injected, a, b)
    hit = next(t for t in report["tables"] if t["id"] == table)
    assert hit["claims"] == 2
    assert hit["attempts"] == 1  # the worker gone: its attempt given back
    # ...and removed when a worker starts on the host (same $TMPDIR) again.
    victim.start()
    assert not any(path.exists() for path in left)
    # A warm shutdown removes the folders of its own processes.
    victim.stop()
    assert not list(victim.tmpdir.glob("tapis-worker-*"))


def test_sigstop_beyond_the_lease_then_sigcont(
    cluster: Cluster, workers: Callable[..., Worker]
) -> None:
    a, b = workers("stop-a"), workers("stop-b")
    tournament = cluster.create(entries=4, rounds=2)
    table, holder, _ = wait_running(cluster, tournament, a, b)
    paused = a if holder == a.hostname else b
    paused.signal(signal.SIGSTOP)
    injected = time.monotonic()
    # The other worker takes the table over once the lease expired.
    wait_for(
        lambda: bool(
            cluster.query(
                "SELECT 1 FROM tournaments_table WHERE id = %s AND claimed_by <> %s",
                table,
                paused.hostname,
            )
        ),
        TIMEOUT,
        "another worker to take the paused worker's table",
        a,
        b,
    )
    time.sleep(LEASE_SECONDS)
    paused.signal(signal.SIGCONT)
    report = recover("SIGSTOP beyond the lease, then SIGCONT", cluster, tournament, table, injected)
    hit = next(t for t in report["tables"] if t["id"] == table)
    assert hit["worker"] != paused.hostname
    wait_for(
        lambda: "lease lost" in paused.log() or "result refused" in paused.log(),
        60,
        "the paused worker to learn it lost the table",
        paused,
    )


def test_redis_killed_and_restarted_empty(cluster: Cluster, workers: Callable[..., Worker]) -> None:
    a, b = workers("redis-a"), workers("redis-b")
    # Three tables a round for two worker processes: one waits in the queue.
    tournament = cluster.create(entries=12, rounds=2)
    wait_running(cluster, tournament, a, b)
    waiting = cluster.query(
        "SELECT id FROM tournaments_table WHERE tournament_id = %s AND status = 'pending'",
        tournament,
    )
    cluster.redis.kill()
    injected = time.monotonic()
    time.sleep(2)
    cluster.redis.start()
    table = waiting[0][0] if waiting else running_table(cluster, tournament)[0]
    recover("Redis killed, restarted empty", cluster, tournament, table, injected, a, b)


def test_postgresql_stopped_immediately_and_restarted(
    cluster: Cluster, workers: Callable[..., Worker]
) -> None:
    a, b = workers("pg-a"), workers("pg-b")
    tournament = cluster.create()
    table, _, _ = wait_running(cluster, tournament, a, b)
    cluster.postgres.stop("immediate")
    injected = time.monotonic()
    time.sleep(3)
    cluster.postgres.start()
    recover(
        "PostgreSQL stopped -m immediate, restarted", cluster, tournament, table, injected, a, b
    )


def test_beat_killed_and_a_worker_lost(cluster: Cluster, workers: Callable[..., Worker]) -> None:
    a, b = workers("beat-a"), workers("beat-b")
    folder = new_dir("tapis-faults-beat-")
    beat = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(folder / "schedule"),
        ],
        cwd=BASE_DIR,
        env=cluster.environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        tournament = cluster.create()
        table, holder, _ = wait_running(cluster, tournament, a, b)
        beat.kill()
        beat.wait()
        # Without beat, a dead worker's table is still re-queued: the workers sweep.
        (a if holder == a.hostname else b).kill()
        injected = time.monotonic()
        recover("beat killed (and a worker)", cluster, tournament, table, injected, a, b)
    finally:
        with contextlib.suppress(ProcessLookupError):
            beat.kill()
        beat.wait()
        shutil.rmtree(folder, ignore_errors=True)


def test_sigkill_of_the_worker_validating_a_version(
    cluster: Cluster, workers: Callable[..., Worker]
) -> None:
    a = workers("validate-a")
    version = int(cluster.probe("upload", "--think", "0.3"))  # ~26 decisions: ~8 s

    def status() -> tuple[str, int]:
        rows = cluster.query(
            "SELECT status, validation_attempts FROM tournaments_botversion WHERE id = %s",
            version,
        )
        return (str(rows[0][0]), int(rows[0][1])) if rows else ("", 0)

    wait_for(lambda: status()[0] == "validating", TIMEOUT, "the validation to start", a)
    a.kill()
    injected = time.monotonic()
    assert status() == ("validating", 1)  # the dead worker's claim stays until its lease ends
    b = workers("validate-b")
    wait_for(lambda: status()[0] not in ("pending", "validating"), TIMEOUT, "a verdict", b)
    note_recovery(
        "SIGKILL of the worker validating a version", "ready", time.monotonic() - injected
    )
    assert status() == ("ready", 2), b.log()


@contextlib.contextmanager
def full_tmpfs(path: Path) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "faults-full", str(path)], check=True)
    try:
        with contextlib.suppress(OSError), (path / "filler").open("wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def test_full_disk_for_the_bot_cache(cluster: Cluster, workers: Callable[..., Worker]) -> None:
    folder = new_dir("tapis-faults-full-")
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, folder, ignore_errors=True)
        cache = stack.enter_context(full_tmpfs(folder / "cache"))
        broken = workers("full-a", start=False)
        broken.bot_cache = cache
        broken.start()
        tournament = cluster.create(entries=4, rounds=2)
        injected = time.monotonic()
        wait_for(
            lambda: bool(
                cluster.query(
                    "SELECT 1 FROM tournaments_workerheartbeat WHERE hostname = %s "
                    "AND problem LIKE 'ENOSPC%%'",
                    broken.hostname,
                )
            ),
            120,
            "the worker with a full disk to leave the rotation",
            broken,
        )
        # No table failed: the one it took is pending again, for another worker.
        assert not cluster.query(
            "SELECT 1 FROM tournaments_table WHERE tournament_id = %s AND status = 'failed'",
            tournament,
        )
        healthy = workers("full-b")
        table = cluster.query(
            "SELECT id FROM tournaments_table WHERE tournament_id = %s ORDER BY id LIMIT 1",
            tournament,
        )[0][0]
        report = recover(
            "full disk for the bot cache", cluster, tournament, table, injected, broken, healthy
        )
        assert {t["worker"] for t in report["tables"]} == {healthy.hostname}


def test_a_redelivered_message(cluster: Cluster, workers: Callable[..., Worker]) -> None:
    a, b = workers("again-a"), workers("again-b")
    tournament = cluster.create(entries=4, rounds=1, deals=4)
    table, _, token = wait_running(cluster, tournament, a, b)
    # The broker delivers the same message (same task id) again while the table plays.
    app = Celery(broker=cluster.redis.url(0))
    app.conf.task_default_queue = "faults"
    try:
        app.send_task("tournaments.tasks.table_run", args=(table,), task_id=token)
    finally:
        app.close()
    injected = time.monotonic()
    report = recover("a redelivered message", cluster, tournament, table, injected, a, b)
    hit = next(t for t in report["tables"] if t["id"] == table)
    assert hit["claims"] == 1
