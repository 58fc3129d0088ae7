"""Two tables of one duplicate round never play at once on one kernel (issue 23): their bots
could meet a channel of the whole host that no sandbox closes (docs/sandbox.md, "Host-wide
channels"). A worker whose kernel plays another table of the round defers the table; the table
holding the kernel sends the deferred ones again when it ends, and the sweep catches the rest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from celery import current_app

from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import queue, services
from tournaments.models import Table, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

FOUR = ["lowest", "random", "heuristic", "lowest"]
BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """Tasks are recorded, not sent: a session's live worker must not play these tables."""
    messages: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        current_app, "send_task", lambda name, args=(), **_: messages.append((name, tuple(args)))
    )
    return messages


def _round_tables(duplicate: bool = True) -> tuple[Table, Table]:
    tournament = make_tournament(rounds=1, deals_per_table=1, duplicate=duplicate)
    enter_builtins(tournament, FOUR * 2)
    services.tournament_start(tournament=tournament)
    first, second = Table.objects.filter(tournament=tournament).order_by("number")
    return first, second


def test_a_table_waits_while_another_of_its_duplicate_round_plays_on_this_kernel() -> None:
    first, second = _round_tables()
    assert first.deal_seed == second.deal_seed  # the same cards at both tables
    assert services.table_claim(table_id=first.pk, worker="w1", token="t1") is not None
    assert Table.objects.get(pk=first.pk).host == services.kernel_id()

    outcome = services.table_run(table_id=second.pk, worker="w2", token="t2")

    assert outcome.outcome == "deferred", outcome
    second.refresh_from_db()
    assert (second.status, second.claims, second.queued_at) == (Table.Status.PENDING, 0, None)


def test_a_table_of_the_round_on_another_kernel_does_not_hold_this_one() -> None:
    first, second = _round_tables()
    assert services.table_claim(table_id=first.pk, worker="w1", token="t1") is not None
    Table.objects.filter(pk=first.pk).update(host="another-machine")
    assert services.table_run(table_id=second.pk, worker="w2", token="t2").outcome == "recorded"


def test_tables_without_duplicate_deals_play_side_by_side() -> None:
    first, second = _round_tables(duplicate=False)
    assert services.table_claim(table_id=first.pk, worker="w1", token="t1") is not None
    assert services.table_run(table_id=second.pk, worker="w2", token="t2").outcome == "recorded"


def test_the_table_holding_the_kernel_sends_the_deferred_ones_when_it_ends(
    sent: list[tuple[str, Any]],
) -> None:
    first, second = _round_tables()
    Table.objects.filter(pk=second.pk).update(queued_at=None)  # deferred meanwhile
    sent.clear()

    assert services.table_run(table_id=first.pk, worker="w1", token="t1").outcome == "recorded"

    second.refresh_from_db()
    assert second.status == Table.Status.PENDING
    assert second.queued_at is not None
    assert sent == [(queue.TABLE_RUN, (second.pk,))]


def test_the_sweep_sends_a_deferred_table_again() -> None:
    first, second = _round_tables()
    assert services.table_claim(table_id=first.pk, worker="w1", token="t1") is not None
    assert services.table_run(table_id=second.pk, worker="w2", token="t2").outcome == "deferred"
    assert services.table_sweep().resent == [second.pk]
    tournament = Tournament.objects.get(pk=first.tournament_id)
    assert tournament.status == Tournament.Status.RUNNING


# The demo's database: SQLite, which has no advisory lock (and runs one write at a time).
ON_SQLITE = """
import django
django.setup()
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import services
tournament = make_tournament(rounds=1, deals_per_table=1, duplicate=True)
enter_builtins(tournament, ["lowest", "random", "heuristic", "lowest"] * 2)
services.tournament_start(tournament=tournament)
print("played", services.tournament_run_here(tournament=tournament))
"""


def test_a_duplicate_round_plays_on_sqlite(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "CELERY_BROKER_URL": "memory://",
        "TAPIS_VAR_DIR": str(tmp_path / "var"),
        "TAPIS_ENV": "demo",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
    subprocess.run(migrate, cwd=BASE_DIR, env=env, check=True, timeout=300)
    run = subprocess.run(
        [sys.executable, "-c", ON_SQLITE],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "played 2" in run.stdout
