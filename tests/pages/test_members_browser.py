"""The members' two stories in Chromium, against PostgreSQL and a real Celery worker (bots in
the sandbox): a bot author from sign-up through a practice run ("Try it") and its replay to
their bot's log at a tournament table, and an organiser from a refused option to a re-run
table. Screenshots go to /tmp/shots/members-*.png."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.api.conftest import make_user
from tests.conftest import IDLE_QUEUE, LiveWorker
from tests.pages.conftest import axe_violations
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import services
from tournaments.models import Table, Tournament

pytestmark = pytest.mark.slow

SHOTS = Path("/tmp/shots")
# Milliseconds: generous, for a loaded machine; each wait ends as soon as the page shows it.
WORKER_TIMEOUT = 240_000

CHATTY_BOT = '''"""A bot that says what it does on stderr."""

import sys

from tapis_bot import Bot, run


class Chatty(Bot):
    name = "chatty"

    def act(self, observation, legal_actions):
        print(f"choosing among {len(legal_actions)} actions", file=sys.stderr)
        return legal_actions[0]


if __name__ == "__main__":
    run(Chatty())
'''


def unexpected(console_errors: list[str]) -> list[str]:
    """The console's errors but the one Chromium logs for a refused form: it answers 400 on
    purpose (the refusal is the page, shown next to the field)."""
    return [e for e in console_errors if "status of 400 (Bad Request)" not in e]


def log_in(page: Any, username: str, password: str | None = None) -> None:
    """Log in by the login form (``make_user``'s password unless another is given): the
    account's page follows."""
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password or f"{username}-secret-pw")
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text(f"My account: {username}")


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"members-{name}.png"), full_page=True)


def test_a_bot_authors_whole_story(
    live_worker: LiveWorker,
    page: Any,
    console_errors: list[str],
    settings: Any,
    tmp_path: Path,
) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    organiser = make_user("host", organiser=True)
    tournament = make_tournament(
        organiser=organiser, name="Author cup", rounds=1, deals_per_table=2
    )
    enter_builtins(tournament, ["heuristic", "lowest", "random"])

    # Sign up: logged in, the token shown once.
    page.goto("/accounts/signup/")
    page.fill("#id_username", "ada")
    page.fill("#id_email", "ada@example.org")
    page.fill("#id_password", "a-long-Passw0rd!")
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Welcome, ada")
    expect(page.locator("#api-token")).to_have_text(re.compile(r"^\S{40,}$"))
    page.get_by_role("link", name="Go to my account").click()

    # A bot, then a refused upload (said next to the field), then a real one.
    page.get_by_role("link", name="Create a bot").click()
    page.fill("#id_name", "chatty")
    page.select_option("#id_game", "hearts")
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("chatty")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a bot")
    page.set_input_files("#id_file", str(notes))
    page.get_by_role("button", name="Upload").click()
    expect(page.locator("#id_file_error")).to_have_text(
        re.compile(r"a bot is a .* or a \.zip package")
    )
    shot(page, "upload-refused")
    assert not axe_violations(page)
    bot_file = tmp_path / "chatty.py"
    bot_file.write_text(CHATTY_BOT)
    page.set_input_files("#id_file", str(bot_file))
    page.get_by_role("button", name="Upload").click()

    # The version's page follows the validation on the worker, without a reload.
    expect(page.locator("h1")).to_have_text("chatty v1")
    page.evaluate("window.tapisMark = 'kept'")
    expect(page.locator("#version-status .status")).to_have_text("ready", timeout=WORKER_TIMEOUT)
    assert page.evaluate("window.tapisMark") == "kept"
    expect(page.locator("#version-status")).to_contain_text("decisions cleanly")
    expect(page.locator("#version-status pre.log")).to_contain_text("choosing among")
    shot(page, "version-ready")
    assert not axe_violations(page)

    # Try it: the form appeared with the verdict (no reload); a practice run of 2 deals against
    # built-in bots, played by the worker, followed live, then one of its deals replayed.
    expect(page.locator("#version-try h2")).to_have_text("Try it")
    assert page.evaluate("window.tapisMark") == "kept"
    page.fill("#id_deals", "2")
    page.select_option("#id_opponent", "random")
    page.get_by_role("button", name="Try it").click()
    expect(page.locator("h1")).to_have_text(re.compile(r"^Practice \d+: chatty v1$"))
    page.evaluate("window.tapisMark = 'kept'")
    expect(page.locator("#practice-state")).to_contain_text("finished", timeout=WORKER_TIMEOUT)
    assert page.evaluate("window.tapisMark") == "kept"
    expect(page.locator("#score-sheet tbody tr")).to_have_count(2)
    shot(page, "practice")
    assert not axe_violations(page)
    page.get_by_role("link", name="Deal 2", exact=True).click()
    expect(page.locator("h1")).to_have_text(re.compile(r"^Deal 2\s+of 2$"))
    expect(page.locator(".breadcrumbs")).to_contain_text("Practice")
    shot(page, "practice-replay")

    # Enter it: the form offers the ready version.
    page.goto("/account/")
    page.get_by_role("link", name="chatty", exact=True).click()
    page.get_by_role("link", name="enter a version").click()
    expect(page.locator("#id_version option")).to_have_text(["chatty v1"])
    page.get_by_role("button", name="Enter").click()
    expect(page.locator("h1")).to_have_text("Author cup")

    # The tournament is played by the worker; its page follows it.
    services.tournament_start(tournament=tournament)
    page.reload()
    expect(page.locator("#live-status")).to_have_text(
        re.compile("Finished"), timeout=WORKER_TIMEOUT
    )

    # The bot's page links its own log at the table it played.
    page.goto("/account/")
    page.get_by_role("link", name="chatty", exact=True).click()
    page.click("text=/seat \\d's log/")
    expect(page.locator("h1")).to_have_text(re.compile(r"chatty v1 at seat \d"))
    expect(page.locator("#seat-log")).to_contain_text("choosing among")
    shot(page, "seat-log")
    assert not axe_violations(page)
    assert not unexpected(console_errors)


def test_an_organisers_whole_story(
    live_worker: LiveWorker, page: Any, console_errors: list[str], settings: Any
) -> None:
    from config.celery import app as celery_app

    make_user("olga", organiser=True)
    log_in(page, "olga")

    # Create: the Roi's deals refused next to the field in the engine's words, then accepted.
    page.get_by_role("link", name="Create a tournament").click()
    page.select_option("#id_game", "roi")
    page.get_by_role("button", name="Next: its rules").click()
    page.fill("#id_name", "Roi night")
    page.fill("#id_rounds", "1")
    page.fill("#id_deals_per_table", "7")
    page.fill("#id_option_queen_penalty", "12")
    page.get_by_role("button", name="Create the tournament").click()
    expect(page.locator("#id_deals_per_table_error")).to_contain_text("10")
    expect(page.locator("#id_name")).to_have_value("Roi night")
    expect(page.locator("#id_option_queen_penalty")).to_have_value("12")
    shot(page, "create-refused")
    assert not axe_violations(page)
    page.fill("#id_deals_per_table", "10")
    page.get_by_role("button", name="Create the tournament").click()
    expect(page.locator("h1")).to_have_text("Organise Roi night")
    roi = Tournament.objects.get(name="Roi night")
    assert roi.options == {"queen_penalty": 12}

    # Open; four bots enter; start, and a second start from a stale tab is refused.
    page.get_by_role("button", name="Open registration").click()
    expect(page.locator(".messages")).to_contain_text("Registration is open.")
    enter_builtins(roi, ["heuristic", "heuristic", "lowest", "random"])
    stale = page.context.new_page()
    stale.goto(f"/organise/{roi.pk}/")
    page.reload()
    page.get_by_role("button", name="Start the tournament").click()
    expect(page.locator(".messages")).to_contain_text("The tournament is started")
    stale.get_by_role("button", name="Start the tournament").click()
    # (running, or already finished if the worker was that quick)
    expect(stale.locator(".messages")).to_contain_text(
        re.compile(r"Not done: the tournament is (running|finished); only an open one can start\.")
    )
    stale.close()
    assert Table.objects.filter(tournament=roi).count() == 1
    # The page follows the play on the worker without a reload; once it is over, its buttons go.
    expect(page.locator("#organise-status")).to_contain_text("finished", timeout=WORKER_TIMEOUT)
    expect(page.get_by_role("button", name="Cancel the tournament")).to_have_count(0)
    shot(page, "organise-finished")

    # Cancel another.
    other = make_tournament(organiser=roi.organiser, name="Spare cup")
    page.goto(f"/organise/{other.pk}/")
    page.get_by_role("button", name="Cancel the tournament").click()
    expect(page.locator(".messages")).to_contain_text("The tournament is cancelled.")
    other.refresh_from_db()
    assert other.status == Tournament.Status.CANCELLED

    # A table that failed (claimed and failed by another worker, through the services, its
    # task sent where no worker listens) is shown with its reason, then re-run on the worker.
    broken = make_tournament(
        organiser=roi.organiser, name="Broken cup", rounds=1, deals_per_table=2
    )
    enter_builtins(broken, ["random", "random", "lowest", "heuristic"])
    worker_queue = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = IDLE_QUEUE
    try:
        services.tournament_start(tournament=broken)
    finally:
        celery_app.conf.task_default_queue = worker_queue
    table = Table.objects.get(tournament=broken)
    assert services.table_claim(table_id=table.pk, worker="elsewhere", token="t-1") is not None
    assert services.table_fail(table_id=table.pk, token="t-1", error="MemoryError: out of luck")
    page.goto(f"/organise/{broken.pk}/")
    expect(page.locator("#organise-progress")).to_contain_text("MemoryError: out of luck")
    shot(page, "failed-table")
    assert not axe_violations(page)
    page.get_by_role("button", name="Re-run table 1").click()
    expect(page.locator(".messages")).to_contain_text("is queued again")
    expect(page.locator("#organise-status")).to_contain_text("finished", timeout=WORKER_TIMEOUT)
    table.refresh_from_db()
    assert table.status == Table.Status.DONE, live_worker.log()
    assert not unexpected(console_errors)


def test_a_form_is_sent_once(page: Any, live_server: Any, settings: Any) -> None:
    """A second click sends nothing: the form's buttons are disabled once it is sent."""
    settings.TAPIS_ALLOW_SIGNUP = True
    page.goto("/accounts/signup/")
    # Keep the page (no navigation) to look at the button after the submission.
    page.evaluate("window.addEventListener('submit', (e) => e.preventDefault(), true)")
    page.fill("#id_username", "twice")
    page.fill("#id_password", "a-long-Passw0rd!")
    button = page.get_by_role("button", name="Create my account")
    expect(button).to_be_enabled()
    button.click()
    expect(button).to_be_disabled()


def test_the_organiser_page_acts_without_a_reload(
    page: Any, console_errors: list[str], live_server: Any
) -> None:
    """Open, start (the button disabled while its request is in flight: a second click sends
    nothing), remove an entry and cancel, each answered in place by htmx: the page is never
    reloaded, the result is said in the live region. (No worker: the tables wait.)"""
    organiser = make_user("otto", organiser=True)
    tournament = make_tournament(
        organiser=organiser, name="Swift cup", rounds=1, deals_per_table=2, open_it=False
    )
    log_in(page, "otto")
    page.goto(f"/organise/{tournament.pk}/")
    page.evaluate("window.tapisMark = 'kept'")
    loads: list[str] = []
    page.on("load", lambda _: loads.append(page.url))
    messages = page.locator("#messages")
    expect(messages).to_have_attribute("aria-live", "polite")

    page.get_by_role("button", name="Open registration").click()
    expect(messages).to_have_text("Registration is open.")
    expect(page.locator("#organise-state")).to_have_text(re.compile("open", re.I))
    entries = enter_builtins(tournament, ["random", "lowest", "heuristic"])

    # Start: its request held until the button is seen disabled and clicked again.
    held: list[Any] = []
    start_url = f"**/organise/{tournament.pk}/start/"
    page.route(start_url, lambda route: held.append(route))
    start = page.get_by_role("button", name="Start the tournament")
    start.click()
    expect(start).to_be_disabled()
    start.evaluate("button => button.click()")
    start.press("Enter")
    assert len(held) == 1
    held[0].continue_()
    expect(messages).to_have_text("The tournament is started: round 1 is seated.")
    page.unroute(start_url)
    assert len(held) == 1
    expect(page.locator("#organise-status")).to_contain_text(re.compile("running", re.I))
    assert Table.objects.filter(tournament=tournament).count() == 1
    assert not axe_violations(page)

    # Remove an entry (the body now lists the entries), then cancel.
    label = entries[0].version.label
    row = page.locator("tr").filter(has=page.get_by_role("rowheader", name=label, exact=True))
    row.locator("select").select_option("disqualify")
    row.locator("input[name=reason]").fill("asleep at the table")
    row.get_by_role("button", name="Remove").click()
    expect(messages).to_contain_text("disqualify done")
    expect(row).to_contain_text("disqualified: asleep at the table")
    page.get_by_role("button", name="Cancel the tournament").click()
    expect(messages).to_have_text("The tournament is cancelled.")
    expect(page.locator("#organise-status")).to_contain_text(re.compile("cancelled", re.I))
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.CANCELLED

    assert loads == []  # no page was loaded again
    assert page.evaluate("window.tapisMark") == "kept"
    shot(page, "organise-in-place")
    assert not axe_violations(page)
    assert not console_errors


def test_an_action_the_server_fails_is_said_and_may_be_tried_again(
    page: Any, console_errors: list[str], live_server: Any
) -> None:
    """An htmx answer that is an error swaps nothing: the live region says it was not done,
    and the button is enabled again for another try."""
    organiser = make_user("ugo", organiser=True)
    tournament = make_tournament(organiser=organiser, name="Flaky cup", open_it=False)
    log_in(page, "ugo")
    page.goto(f"/organise/{tournament.pk}/")
    action = f"**/organise/{tournament.pk}/open/"
    page.route(action, lambda route: route.fulfill(status=503, body="down"))
    button = page.get_by_role("button", name="Open registration")
    button.click()
    expect(page.locator("#messages")).to_have_text(
        "Not done: the server answered 503. Reload the page and try again."
    )
    expect(button).to_be_enabled()
    page.unroute(action)
    page.route(action, lambda route: route.abort())
    button.click()
    expect(page.locator("#messages")).to_have_text(
        "Not done: the server could not be reached. Try again in a moment."
    )
    page.unroute(action)
    button.click()
    expect(page.locator("#messages")).to_have_text("Registration is open.")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.OPEN
    # Chromium and htmx log the two failures themselves; nothing else went wrong.
    expected = ("503", "ERR_FAILED", "htmx:afterRequest", "htmx:sendError")
    assert [e for e in console_errors if not any(x in e for x in expected)] == []


def test_the_organiser_page_works_without_javascript(
    browser: Any, live_server: Any, base_url: str
) -> None:
    """Without JavaScript the buttons are plain forms: post, then the page again with the
    message."""
    organiser = make_user("nojs", organiser=True)
    tournament = make_tournament(organiser=organiser, name="Plain cup", open_it=False)
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    try:
        page = context.new_page()
        log_in(page, "nojs")
        page.goto(f"/organise/{tournament.pk}/")
        page.get_by_role("button", name="Open registration").click()
        expect(page.locator("#messages")).to_have_text("Registration is open.")
        expect(page).to_have_url(re.compile(rf"/organise/{tournament.pk}/$"))
        expect(page.get_by_role("button", name="Start the tournament")).to_be_visible()
    finally:
        context.close()
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.OPEN
