"""The members' stories on ``make run``'s stack (``python -m config.run``: SQLite, the embedded
broker, a real Celery worker with the bots in the sandbox), in Chromium: a new author signs
up, uploads a bot that the worker validates, enters it in the demo's open tournament; the
demo administrator (its password as ``make run`` keeps it) changes that tournament's settings
and starts it from its organiser page; the worker plays it; the author reads their bot's log
at a table. What a newcomer does first, checked where they do it (docs/members.md)."""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.pages.conftest import axe_violations
from tests.pages.test_members_browser import CHATTY_BOT, WORKER_TIMEOUT, log_in
from tests.test_run_demo import start_demo, stop_demo

pytestmark = pytest.mark.slow

OPEN_DEMO = "Demo: open for registration"


def _tail(path: Path, lines: int = 80) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_both_stories_on_make_runs_stack(browser: Any, tmp_path: Path) -> None:
    run, base, log_path = start_demo(tmp_path)
    author_context = browser.new_context(base_url=base)
    organiser_context = browser.new_context(base_url=base)
    try:
        author = author_context.new_page()
        # Sign-up is open in the demo.
        author.goto("/accounts/signup/")
        author.fill("#id_username", "ada")
        author.fill("#id_password", "a-long-Passw0rd!")
        author.click("button[type=submit]")
        expect(author.locator("h1")).to_have_text("Welcome, ada")
        author.get_by_role("link", name="Go to my account").click()
        author.get_by_role("link", name="Create a bot").click()
        author.fill("#id_name", "chatty")
        author.select_option("#id_game", "hearts")
        author.click("button[type=submit]")
        bot_file = tmp_path / "chatty.py"
        bot_file.write_text(CHATTY_BOT)
        author.set_input_files("#id_file", str(bot_file))
        author.get_by_role("button", name="Upload").click()
        expect(author.locator("#version-status .status")).to_have_text(
            "ready", timeout=WORKER_TIMEOUT
        )
        author.goto("/account/")
        author.get_by_role("link", name="chatty", exact=True).click()
        author.get_by_role("link", name="enter a version").click()
        author.get_by_role("button", name="Enter").click()
        expect(author.locator("h1")).to_have_text(OPEN_DEMO)
        public = author.url

        # The demo administrator organises it.
        password = (tmp_path / "var" / "demo_admin_password").read_text().strip()
        organiser = organiser_context.new_page()
        log_in(organiser, "admin", password)
        organiser.get_by_role("link", name=OPEN_DEMO).click()
        expect(organiser.locator("h1")).to_have_text(f"Organise {OPEN_DEMO}")
        organiser.get_by_role("link", name="Change its settings").click()
        assert not axe_violations(organiser)
        organiser.fill("#id_rounds", "1")
        organiser.fill("#id_deals_per_table", "2")
        organiser.get_by_role("button", name="Save the settings").click()
        expect(organiser.locator("#messages")).to_have_text("The settings are saved.")
        expect(organiser.locator(".lead")).to_contain_text("1 round of 2 deals")
        organiser.get_by_role("button", name="Start the tournament").click()
        expect(organiser.locator("#messages")).to_contain_text("The tournament is started")
        try:
            expect(organiser.locator("#organise-status")).to_contain_text(
                re.compile("finished", re.I), timeout=WORKER_TIMEOUT
            )
        except AssertionError as exc:  # say what the worker and the page said
            body = organiser.locator("main").inner_text()
            raise AssertionError(f"{exc}\n--- page\n{body}\n--- log\n{_tail(log_path)}") from None

        # The demo's practice run (a version's "try it") and a replay of it: the demo
        # administrator sees it, as staff do once a run is over.
        practice = re.search(r"Demo practice run: (/practice/\d+/)", log_path.read_text())
        assert practice is not None, log_path.read_text()[-3000:]
        organiser.goto(practice.group(1))
        expect(organiser.locator("#practice-state")).to_contain_text("finished")
        organiser.get_by_role("link", name="Deal 1", exact=True).click()
        expect(organiser.locator("h1")).to_have_text(re.compile(r"^Deal 1\s+of 2$"))

        # The author follows it and reads their bot's log.
        author.goto(public)
        expect(author.locator("#live-status")).to_have_text(re.compile("Finished"))
        author.goto("/account/")
        author.get_by_role("link", name="chatty", exact=True).click()
        author.click("text=/seat \\d's log/")
        expect(author.locator("#seat-log")).to_contain_text("choosing among")

        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=30) == 0, log_path.read_text()[-3000:]
    finally:
        author_context.close()
        organiser_context.close()
        stop_demo(run)
    assert "Traceback" not in log_path.read_text()
