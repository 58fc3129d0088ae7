"""A match in Chromium, against PostgreSQL and a real Celery worker: a bot author starts "is my
heuristic version better than the random bot?" from the matches page, and watches the match's
page follow the worker (htmx polling) to its verdict. Screenshots: /tmp/shots/match-*.png."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_user
from tests.conftest import LiveWorker
from tests.pages.conftest import axe_violations
from tournaments import services
from tournaments.models import Match

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
WORKER_TIMEOUT = 240_000  # milliseconds: each wait ends as soon as the page shows it


def test_an_author_follows_a_match_to_its_verdict(
    live_worker: LiveWorker, page: Any, console_errors: list[str]
) -> None:
    author = make_user("ada")
    bot = services.bot_create(owner=author, name="careful", game="hearts")
    version = services.bot_version_create(bot=bot, builtin="heuristic")

    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "ada-secret-pw")
    page.click("button[type=submit]")
    page.goto("/matches/")
    expect(page.locator("h1")).to_have_text("Matches: is v2 better than v1?")
    page.select_option("#id_candidate", str(version.pk))
    page.select_option("#id_baseline", "brandom")
    page.fill("#id_d1", "2")
    page.fill("#id_max_deals", "256")
    page.get_by_role("button", name="Start the match").click()

    expect(page.locator("h1")).to_have_text("careful v1 against built-in random")
    progress = page.locator("#match-progress")
    expect(progress).to_contain_text(re.compile(r"Status: .*decided"), timeout=WORKER_TIMEOUT)
    expect(progress.locator("strong")).to_have_text("better")
    match = Match.objects.get()
    assert (match.status, match.verdict) == (Match.Status.DECIDED, "accept_h1")
    expect(progress.locator("[data-deals]")).to_have_text(str(match.deals))
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "match-decided.png"), full_page=True)
    assert not axe_violations(page)

    page.goto("/matches/")
    expect(page.get_by_role("link", name="careful v1 against built-in random")).to_be_visible()
    assert console_errors == []
