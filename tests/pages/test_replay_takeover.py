"""The replay names who played each step: after a bot crashes, the built-in bot that took its
seat over plays the rest of the table, and the replay credits it, not the crashed bot, and
says so in the seat's panel (Chromium on the live server; the bot runs in its sandbox)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.pages.test_replay_page import _play
from tests.tournaments.factories import BotFactory, file_version
from tournaments import services
from tournaments.models import Deal, Seat, Tournament
from tournaments.tournament_settings import TournamentSettings

pytestmark = pytest.mark.slow


def _crash_cup() -> tuple[Tournament, Seat]:
    """A table where late_crash.py dies at its 21st decision (deal 2), and three built-ins."""
    organiser = User.objects.create_user(username="organiser")
    tournament = services.tournament_create(
        organiser=organiser,
        settings=TournamentSettings(
            name="Crash cup", game="hearts", rounds=1, deals_per_table=3, startup_seconds=10.0
        ),
    )
    services.tournament_open(tournament=tournament)
    crash = file_version(BotFactory.create(game="hearts", name="Newbie"), "late_crash")
    services.entry_register(tournament=tournament, version=crash, user=crash.bot.owner)
    for i in range(3):
        owner = User.objects.create_user(username=f"builtin{i}")
        bot = services.bot_create(owner=owner, name=f"builtin{i}", game="hearts")
        version = services.bot_version_create(bot=bot, builtin="heuristic")
        services.entry_register(tournament=tournament, version=version, user=owner)
    services.tournament_start(tournament=tournament)
    _play(tournament)
    seat = Seat.objects.get(table__tournament=tournament, entry__version=crash)
    assert seat.replaced
    return tournament, seat


def _steps_of(deal: Deal, position: int) -> list[int]:
    """The viewer's steps (from 1) at which ``position`` acted."""
    return [k + 1 for k, (seat, _) in enumerate(deal.log["actions"]) if seat == position]


def _open(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#viewer[data-ready]")


def test_the_replay_credits_the_built_in_bot_after_a_crash(
    page: Any, console_errors: list[str]
) -> None:
    tournament, seat = _crash_cup()
    crashed = Deal.objects.get(table__tournament=tournament, index=1)
    fault = next(f for f in crashed.log["faults"] if f["seat"] == seat.position)
    crash_step = fault["step"] + 1
    before = [k for k in _steps_of(crashed, seat.position) if k < crash_step]
    after = [k for k in _steps_of(crashed, seat.position) if k > crash_step]
    builtin = "built-in heuristic (for Newbie v1)"

    _open(page, f"/deals/{crashed.pk}/?step={after[0]}")
    text = page.locator("[data-step-text]").inner_text()
    assert f"{builtin} plays" in text, text
    assert "Newbie v1 plays" not in text
    panel = page.locator(f'[data-felt] [data-seat="{seat.position}"] [data-takeover]')
    assert builtin in panel.inner_text()
    assert f"from step {crash_step + 1}" in panel.inner_text()

    _open(page, f"/deals/{crashed.pk}/?step={before[-1]}")
    assert "Newbie v1 plays" in page.locator("[data-step-text]").inner_text()
    assert page.locator("[data-felt] [data-takeover]").count() == 0

    # The next deal: the built-in bot from its first step; the first deal: Newbie throughout.
    later = Deal.objects.get(table__tournament=tournament, index=2)
    _open(page, f"/deals/{later.pk}/?step={_steps_of(later, seat.position)[0]}")
    assert f"{builtin} passes" in page.locator("[data-step-text]").inner_text()
    assert "from step 1" in page.locator("[data-felt] [data-takeover]").inner_text()
    first = Deal.objects.get(table__tournament=tournament, index=0)
    _open(page, f"/deals/{first.pk}/?step={_steps_of(first, seat.position)[-1]}")
    assert "Newbie v1 plays" in page.locator("[data-step-text]").inner_text()
    assert not console_errors

    # Without JavaScript: the table of decisions names who played, the seats table the takeover.
    html = Client().get(f"/deals/{crashed.pk}/").content.decode()
    row = html.split(f'<tr id="step-{after[0]}"', 1)[1].split("</tr>", 1)[0]
    assert f"<td>{builtin}</td>" in row
    assert f"Played by the {builtin} from step {crash_step + 1}" in html
