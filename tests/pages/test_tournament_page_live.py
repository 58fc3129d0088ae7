"""A tournament's page opened during registration follows it to the end without a reload:
the status in its heading's line, the Enter block, the settings and the seed change with the
status; so do a round's page and a table's page opened while it is played (Chromium on the
live server; the tables are played here by built-in bots)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_user
from tests.pages.test_members_browser import log_in
from tests.pages.test_replay_page import _play
from tests.tournaments.factories import BuiltinVersionFactory, enter_builtins, make_tournament
from tournaments import services
from tournaments.models import Table

pytestmark = pytest.mark.slow

WAIT = 60_000  # ms: the page asks every 5 s; generous for a loaded machine


def test_the_page_follows_the_tournament_from_registration_to_the_end(
    page: Any, console_errors: list[str]
) -> None:
    tournament = make_tournament(name="Followed cup", rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["heuristic", "random", "lowest", "heuristic"])
    author = make_user("watcher")
    BuiltinVersionFactory.create(builtin="heuristic", bot__owner=author, bot__game="hearts")
    log_in(page, "watcher")
    page.goto(f"/tournaments/{tournament.pk}/")
    status = page.locator("#tournament-status")
    settings = page.locator("#tournament-settings")
    expect(status).to_have_text("open for registration")
    expect(page.locator("#tournament-enter")).to_be_visible()
    expect(settings).to_contain_text("The seed itself stays secret")
    page.evaluate("window.tapisMark = 'kept'")

    services.tournament_start(tournament=tournament)
    expect(status).to_have_text("running", timeout=WAIT)
    expect(page.locator("#tournament-enter")).to_have_count(0)
    # The round's page and the table's page, opened while the table waits, follow it too.
    round_page = page.context.new_page()
    round_page.goto(f"/tournaments/{tournament.pk}/rounds/1/")
    expect(round_page.locator("#round-status")).to_have_text("running")
    table_page = page.context.new_page()
    table_page.goto(f"/tables/{Table.objects.get(tournament=tournament).pk}/")
    expect(table_page.locator("#table-page .status")).to_have_text("pending")
    expect(table_page.locator("#faults-title")).to_have_count(0)

    _play(tournament)
    expect(round_page.locator("#round-status")).to_have_text("done", timeout=WAIT)
    expect(round_page.locator("#round-tables .status")).to_have_text("done")
    expect(table_page.locator("#table-page .status")).to_have_text("done", timeout=WAIT)
    expect(table_page.locator("#faults-title")).to_be_visible()
    expect(status).to_have_text("finished", timeout=WAIT)
    expect(settings).to_contain_text("matches the commitment")
    expect(settings).not_to_contain_text("stays secret")
    expect(page.locator("#live-status")).to_have_text(re.compile("Finished"))
    assert page.evaluate("window.tapisMark") == "kept"  # all of it without a reload
    assert not console_errors
