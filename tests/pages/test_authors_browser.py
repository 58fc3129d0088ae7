"""Issue 22, a bot author starting from the site alone, in Chromium: Sign up from the
navigation with the password's rules shown before a submit, an open tournament's page offering
Enter with its deadline and its rule on entries, the confirmation on the tournament's page, and
an enter form that no longer offers what it would refuse."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import expect

from tests.api.conftest import builtin_bot, make_user
from tests.pages.conftest import axe_violations
from tests.tournaments.factories import make_tournament


def test_an_author_signs_up_and_enters_from_the_tournaments_page(
    page: Any, console_errors: list[str], settings: Any
) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    closes = timezone.now() + timedelta(days=3)
    cup = make_tournament(
        organiser=make_user("host", organiser=True),
        name="Deadline cup",
        registration_closes_at=closes,
    )

    # Sign up is in the navigation; the password's rules are there before any submit.
    page.goto("/")
    expect(page.locator("main")).to_contain_text("Write a bot")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Sign up").click()
    expect(page.locator("h1")).to_have_text("Sign up")
    expect(page.locator(".field", has=page.locator("#id_password"))).to_contain_text(
        "at least 8 characters"
    )
    page.fill("#id_username", "ada")
    page.fill("#id_password", "a-long-Passw0rd!")
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Welcome, ada")
    ada = User.objects.get(username="ada")
    builtin_bot(ada, "first", "heuristic")
    builtin_bot(ada, "second", "lowest")

    # The open tournament's page offers Enter, with its deadline and its rule.
    page.goto(f"/tournaments/{cup.pk}/")
    block = page.locator("#tournament-enter")
    expect(block).to_contain_text("Registration is open until")
    expect(block).to_contain_text(f"{closes:%H:%M} UTC")
    expect(block).to_contain_text("one entry per author")
    assert not axe_violations(page)
    block.get_by_role("link", name="Enter a bot").click()

    # The form says the rule before offering; the confirmation shows where it lands.
    expect(page.locator("#entry-rule")).to_contain_text("one entry per author")
    expect(page.locator("#id_version option")).to_have_text(["first v1", "second v1"])
    page.select_option("#id_version", label="second v1")
    page.get_by_role("button", name="Enter").click()
    expect(page.locator("h1")).to_have_text("Deadline cup")
    expect(page.locator("#messages")).to_have_text(re.compile("second v1 is entered in"))
    expect(block).to_contain_text("You have entered second v1")
    expect(block.get_by_role("link", name="Enter a bot")).to_have_count(0)

    # Back on the form: nothing it would refuse is offered.
    page.goto(f"/tournaments/{cup.pk}/enter/")
    expect(page.locator("#id_version")).to_have_count(0)
    expect(page.locator("main")).to_contain_text("first withdraw it")
    assert not console_errors


def test_an_author_downloads_an_example_bot_and_the_sdk_from_the_site(
    page: Any, console_errors: list[str], tmp_path: Path
) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    page.goto("/docs/examples/")
    page.get_by_role("link", name="python/bot.py").click()
    expect(page.locator("h1")).to_have_text("Example bot: python3")
    expect(page.locator("main")).to_contain_text("tapis play --game hearts bot.py")
    assert not axe_violations(page)
    with page.expect_download() as example:
        page.get_by_role("link", name="Download bot.py").click()
    saved = tmp_path / "bot.py"
    example.value.save_as(saved)
    assert saved.read_bytes() == (docs / "examples" / "python" / "bot.py").read_bytes()
    with page.expect_download() as sdk:
        page.get_by_role("link", name="tapis_bot.py").click()
    sdk.value.save_as(tmp_path / "tapis_bot.py")
    assert (tmp_path / "tapis_bot.py").read_bytes() == (
        docs.parent / "judge" / "sdk" / "tapis_bot.py"
    ).read_bytes()
    assert not console_errors
