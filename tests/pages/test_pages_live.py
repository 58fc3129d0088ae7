"""The site while a real Celery worker plays (a subprocess on the real Redis and PostgreSQL,
bots sandboxed): the standings update without a reload, and nothing of a running table shows."""

from __future__ import annotations

import os
import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import LiveWorker
from tests.pages.conftest import axe_violations
from tests.tournaments.factories import BotFactory, enter, file_version, make_tournament
from tournaments import services
from tournaments.models import Table, Tournament

pytestmark = pytest.mark.slow

# Seconds: generous, for a loaded machine; the waits end as soon as the page shows the news.
FINISH_TIMEOUT = 240


def wait_for_running_table(tournament: Tournament, worker: LiveWorker) -> Table:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        table = Table.objects.filter(tournament=tournament, status=Table.Status.RUNNING).first()
        if table is not None:
            return table
        time.sleep(0.2)
    pytest.fail(f"no table started in 120 s\n{worker.log()}")


def test_standings_update_live_while_a_worker_plays(
    live_worker: LiveWorker, page: Any, console_errors: list[str]
) -> None:
    tournament = make_tournament(name="Live cup", rounds=2, deals_per_table=2)
    for _ in range(4):
        enter(tournament, file_version(BotFactory.create(), "slow"))
    page.goto(f"/tournaments/{tournament.pk}/")
    expect(page.locator("#live-status")).to_have_text(re.compile("Open for registration"))
    assert page.locator("#standings tbody tr").count() == 4
    rounds = page.locator("#tournament-rounds")
    expect(rounds).to_contain_text("No round is seated yet")
    # A mark in the page's JavaScript world: it survives only if the page is never reloaded.
    page.evaluate("window.tapisMark = 'kept'")

    services.tournament_start(tournament=tournament)
    # Polling (every 5 s) brings the running tournament, then the finished one.
    expect(page.locator("#live-status")).to_have_text(
        re.compile(r"Round \d of 2"), timeout=FINISH_TIMEOUT * 1000
    )
    expect(page.locator("#live-status")).to_have_text(
        re.compile("Finished: 2 tables played"), timeout=FINISH_TIMEOUT * 1000
    )
    expect(page.locator("[data-testid=tables-done]")).to_have_text("2 of 2")
    # The rounds came with the same polling: both rounds, done, one table each.
    expect(rounds.locator("tbody tr")).to_have_count(2)
    expect(rounds.locator(".status-done")).to_have_count(2)
    # And the standings' intervals, drawn once the tables' results are shown.
    expect(page.locator("#standings svg.ci-bar")).to_have_count(4)
    assert page.evaluate("window.tapisMark") == "kept"
    shots = os.environ.get("TAPIS_SHOTS")
    if shots:  # for people to look at: TAPIS_SHOTS=/tmp/shots
        page.locator("#tournament-live").screenshot(path=f"{shots}/site2-live-standings.png")
        page.locator("#tournament-rounds").screenshot(path=f"{shots}/site2-live-rounds.png")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED, live_worker.log()
    # The standings the page shows are the final ones: points 4+2+1+0 per table, two tables.
    points = [
        float(cell)
        for cell in page.locator("#standings tbody tr td:nth-child(4)").all_inner_texts()
    ]
    assert sum(points) == 14
    assert page.locator("#tournament-live").get_attribute("hx-get") is None  # polling stopped
    # A round's page: its table with who sat where, their places.
    rounds.get_by_role("link", name="Round 2").click()
    expect(page.locator("h1")).to_have_text("Round 2")
    expect(page.locator("#round-tables [data-place]").first).to_have_text(re.compile(r"[1-4]"))
    assert page.locator("#round-tables").get_attribute("hx-get") is None  # nothing to refresh
    assert not console_errors


def test_a_running_table_shows_nothing_hidden(
    live_worker: LiveWorker, page: Any, console_errors: list[str]
) -> None:
    tournament = make_tournament(name="Hidden cup", rounds=1, deals_per_table=8)
    for _ in range(4):
        enter(tournament, file_version(BotFactory.create(), "slow"))
    services.tournament_start(tournament=tournament)
    table = wait_for_running_table(tournament, live_worker)

    page.goto(f"/tables/{table.pk}/")
    expect(page.locator("h1")).to_have_text("Round 1, table 1")
    assert "This table is running: its deals and results are shown once it is finished" in (
        page.inner_text("main")
    )
    assert page.locator("#score-sheet").count() == 0
    assert page.get_by_text("Download the table's log").count() == 0
    assert not axe_violations(page)

    page.goto(f"/tournaments/{tournament.pk}/")
    text = page.inner_text("main")
    assert "The seed itself stays secret until the tournament is finished" in text
    assert tournament.seed not in page.content()
    # The table's log is refused through the API as well while it plays.
    response = page.request.get(f"/api/v1/tables/{table.pk}/log/")
    assert response.status == 403

    table.refresh_from_db()
    assert table.status == Table.Status.RUNNING, "the table finished during the checks"
    assert not console_errors
