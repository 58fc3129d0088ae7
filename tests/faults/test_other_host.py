"""A worker on another host (issue 13): a second "host" is a network namespace of this machine
(``ip netns``, a veth pair in a private /30 that exists only here) whose worker reaches
PostgreSQL and Redis over that link, not over loopback, with its own $TMPDIR and bot cache. It
plays and records tables beside a local worker; then its link is cut mid-table: the table is
played again by the local worker, and the far worker's late result is refused when the link
returns. Nothing is recorded twice."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.faults.harness import (
    Cluster,
    Worker,
    new_dir,
    note_recovery,
    private_cluster,
    wait_for,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("ip") is None,
        reason="network namespaces need root and iproute2 (CI runs as root)",
    ),
]


def ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True, timeout=30)


@dataclass
class Link:
    """A network namespace joined to this host by a veth pair: ``host`` (this side) and
    ``far`` (inside) addresses of a /30."""

    namespace: str
    host_end: str
    host: str
    far: str

    def cut(self) -> None:
        ip("link", "set", self.host_end, "down")

    def restore(self) -> None:
        ip("link", "set", self.host_end, "up")


@pytest.fixture
def link() -> Iterator[Link]:
    tag = f"{os.getpid() % 100000}"
    namespace, host_end, far_end = f"tapis-f{tag}", f"tfh{tag}", f"tff{tag}"
    net = random.Random(os.getpid()).randrange(0, 256)
    host, far = f"10.254.{net}.1", f"10.254.{net}.2"
    ip("netns", "add", namespace)
    try:
        ip("link", "add", host_end, "type", "veth", "peer", "name", far_end)
        ip("link", "set", far_end, "netns", namespace)
        ip("addr", "add", f"{host}/30", "dev", host_end)
        ip("link", "set", host_end, "up")
        ip("netns", "exec", namespace, "ip", "addr", "add", f"{far}/30", "dev", far_end)
        ip("netns", "exec", namespace, "ip", "link", "set", far_end, "up")
        ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up")
        yield Link(namespace, host_end, host, far)
    finally:
        ip("link", "del", host_end, check=False)
        ip("netns", "del", namespace, check=False)


@pytest.fixture
def linked_cluster(link: Link) -> Iterator[Cluster]:
    """Private PostgreSQL and Redis listening on loopback and on this side of the link."""
    with private_cluster(("127.0.0.1", link.host)) as cluster:
        yield cluster


def new_worker(cluster: Cluster, name: str, **kwargs: Any) -> Worker:
    folder = new_dir(f"tapis-faults-{name}-")
    (folder / "tmp").mkdir(mode=0o711)
    (folder / "tmp").chmod(0o711)
    return Worker(cluster, name, folder / "tmp", folder / "bot-cache", **kwargs)


def far_worker(cluster: Cluster, link: Link) -> Worker:
    """A worker inside the namespace, reaching the services at ``link.host`` over the link,
    with its own $TMPDIR and bot cache."""
    return new_worker(
        cluster,
        "far",
        extra_env={
            "DATABASE_URL": cluster.postgres.url(link.host),
            "CELERY_BROKER_URL": cluster.redis.url(0, link.host),
            "CELERY_RESULT_BACKEND": cluster.redis.url(1, link.host),
        },
        prefix=["ip", "netns", "exec", link.namespace],
    )


def by(cluster: Cluster, tournament: int, worker: Worker, status: str) -> list[int]:
    return [
        row[0]
        for row in cluster.query(
            "SELECT id FROM tournaments_table WHERE tournament_id = %s AND claimed_by = %s "
            "AND status = %s ORDER BY id",
            tournament,
            worker.hostname,
            status,
        )
    ]


def test_a_worker_on_another_host_plays_and_its_cut_off_table_is_played_once(
    linked_cluster: Cluster, link: Link
) -> None:
    cluster = linked_cluster
    far = far_worker(cluster, link)
    near = new_worker(cluster, "near")
    try:
        far.start()
        near.start()
        tournament = cluster.create(entries=8, rounds=3, deals=3)
        # It plays and records tables like the local worker.
        wait_for(lambda: bool(by(cluster, tournament, far, "done")), 180, "a far table", far)
        wait_for(lambda: bool(by(cluster, tournament, far, "running")), 180, "a far table", far)
        time.sleep(1.0)
        (table,) = by(cluster, tournament, far, "running")[:1]
        link.cut()
        cut_at = time.monotonic()
        wait_for(
            lambda: bool(
                cluster.query(
                    "SELECT 1 FROM tournaments_table WHERE id = %s AND status = 'done' "
                    "AND claimed_by = %s",
                    table,
                    near.hostname,
                )
            ),
            180,
            "the cut-off table to be played by the local worker",
            near,
        )
        recovered = time.monotonic() - cut_at
        link.restore()
        wait_for(
            lambda: (
                f"'table': {table}, 'outcome': 'duplicate'" in far.log()
                or f"'table': {table}, 'outcome': 'lost'" in far.log()
            ),
            180,
            "the far worker to learn its table was taken",
            far,
        )
        wait_for(
            lambda: bool(
                cluster.query(
                    "SELECT 1 FROM tournaments_tournament WHERE id = %s AND status = 'finished'",
                    tournament,
                )
            ),
            240,
            "the tournament to finish",
            near,
            far,
        )
        report = cluster.check(tournament)
        assert {t["status"] for t in report["tables"]} == {"done"}
        assert [t["deals"] for t in report["tables"]] == [3] * len(report["tables"])
        assert report["audit_ok"] is True
        assert report["rating_changes"] == report["rating_changes_distinct"]
        assert far.hostname in {t["worker"] for t in report["tables"]}
        note_recovery("a worker on another host cut off mid-table", "finished", recovered)
    finally:
        for worker in (far, near):
            worker.kill()
            shutil.rmtree(worker.tmpdir.parent, ignore_errors=True)
