"""The "try it" pages (tournaments/pages/practice.py) through Django's test client: the form on
a version's page, the practice page before and after its table is played, who sees what, and
that a practice run shows in no list, page or API answer but its own.

The permission matrix of the routes: tests/pages/test_members_permissions.py; a run played by
a real worker: tests/tournaments/test_tournament_workers.py; in a browser:
tests/pages/test_members_browser.py."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.api.conftest import client_for
from tests.tournaments.factories import (
    BotFactory,
    BuiltinVersionFactory,
    UserFactory,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import services
from tournaments.models import BotVersion, Deal, Table, Tournament

pytestmark = pytest.mark.django_db


def _client(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def version() -> BotVersion:
    return BuiltinVersionFactory.create(builtin="heuristic", bot__name="tryme")


def _try(client: Client, version: BotVersion, **data: Any) -> Any:
    body = {"preset": "whisthub", "table_size": "", "deals": 2, "opponent": "random", **data}
    url = reverse("tournaments:version-try", args=[version.bot_id, version.number])
    return client.post(url, body)


def test_the_author_tries_a_ready_version_and_replays_its_deals(version: BotVersion) -> None:
    author = _client(version.bot.owner)
    page = author.get(reverse("tournaments:my-version", args=[version.bot_id, version.number]))
    html = page.content.decode()
    assert "Try it" in html
    assert 'name="deals"' in html
    assert "From 1 to 10." in html

    response = _try(author, version)
    assert response.status_code == 302
    run = Tournament.objects.get(practice=True)
    assert response["Location"] == reverse("tournaments:practice", args=[run.pk])
    waiting = author.get(response["Location"]).content.decode()
    assert "waiting for a worker" in waiting
    assert 'hx-get="' + reverse("tournaments:practice-live", args=[run.pk]) in waiting

    services.tournament_run_here(tournament=run)
    live = author.get(reverse("tournaments:practice-live", args=[run.pk]))
    assert live.status_code == 286  # htmx: stop polling
    html = author.get(reverse("tournaments:practice", args=[run.pk])).content.decode()
    assert "finished" in html
    assert "Score sheet" in html
    # The other seats' bot named as the site names built-in bots, not by its internal name.
    assert ": built-in random</th>" in html
    assert "house" not in html.lower()
    deals = list(Deal.objects.filter(table__tournament=run).order_by("index"))
    assert len(deals) == 2
    for deal in deals:
        assert reverse("tournaments:deal", args=[deal.pk]) in html
        replay = author.get(reverse("tournaments:deal", args=[deal.pk]))
        assert replay.status_code == 200
        assert reverse("tournaments:practice", args=[run.pk]) in replay.content.decode()
        assert "(built-in random)</option>" in replay.content.decode()
        assert "house:" not in replay.content.decode()
    # The version's page lists the run.
    page = author.get(reverse("tournaments:my-version", args=[version.bot_id, version.number]))
    assert reverse("tournaments:practice", args=[run.pk]) in page.content.decode()


def test_who_sees_a_practice_run(version: BotVersion) -> None:
    author = version.bot.owner
    run = services.practice_create(owner=author, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    other = UserFactory.create()
    staff = UserFactory.create(username="staffer", is_staff=True)
    pages = [
        reverse("tournaments:practice", args=[run.pk]),
        reverse("tournaments:table-detail", args=[table.pk]),
    ]
    for url in pages:  # playing: its author only (staff once it is over)
        assert _client(author).get(url).status_code == 200
        assert _client(staff).get(url).status_code == 404
        assert _client(other).get(url).status_code == 404
    services.tournament_run_here(tournament=run)
    deal = Deal.objects.filter(table=table).get()
    pages += [
        reverse("tournaments:deal", args=[deal.pk]),
        reverse("tournaments:deal-audit", args=[deal.pk]),
    ]
    for url in pages:
        assert _client(author).get(url).status_code == 200, url
        assert _client(staff).get(url).status_code == 200, url
        assert _client(other).get(url).status_code == 404, url
        assert _client(None).get(url).status_code in (302, 404), url  # login, or not found
    # No tournament page: a practice run's page is its own.
    assert (
        _client(author).get(reverse("tournaments:tournament-detail", args=[run.pk])).status_code
        == 404
    )
    # The API: the replay's lean path never answers for a practice run.
    replay = reverse("api:deal-replay", args=[deal.pk])
    assert client_for(None).get(replay, HTTP_ACCEPT="application/json").status_code == 404
    assert client_for(other).get(replay).status_code == 404
    mine = client_for(author).get(replay)
    assert mine.status_code == 200
    assert mine["Cache-Control"].startswith("private")
    assert client_for(other).get(reverse("api:table-detail", args=[table.pk])).status_code == 404
    assert client_for(author).get(reverse("api:table-detail", args=[table.pk])).status_code == 200


def test_a_practice_run_shows_in_no_list(version: BotVersion) -> None:
    author = version.bot.owner
    staff = UserFactory.create(username="staffer", is_staff=True)
    run = services.practice_create(owner=author, version=version, deals=1)
    services.tournament_run_here(tournament=run)
    # A tournament of the same bot, for contrast: its lists show it.
    cup = make_tournament(name="Contrast cup", rounds=1, deals_per_table=1)
    services.entry_register(tournament=cup, version=version, user=author)
    enter_builtins(cup, ["random"])
    services.tournament_start(tournament=cup)
    services.tournament_run_here(tournament=cup)
    for user in (None, author, staff):
        client = _client(user)
        for url in (
            reverse("home"),
            reverse("tournaments:tournament-list"),
            reverse("tournaments:bot-detail", args=[version.bot_id]),
            reverse("tournaments:rankings"),
        ):
            html = client.get(url).content.decode()
            assert "Practice: " not in html, (user, url)
            assert f"/practice/{run.pk}/" not in html, (user, url)
        api = client_for(user).get(reverse("api:tournament-list")).json()
        names = [t["name"] for t in api["results"]]
        assert "Contrast cup" in names
        assert not any(n.startswith("Practice") for n in names)
        assert (
            client_for(user).get(reverse("api:tournament-detail", args=[run.pk])).status_code == 404
        )
    for url in (
        reverse("tournaments:account"),
        reverse("tournaments:my-bot", args=[version.bot_id]),
    ):
        html = _client(author).get(url).content.decode()
        assert "Contrast cup" in html, url
        assert "Practice: " not in html, url
    # Never rated: the rating history holds the tournament's table only.
    history = client_for(None).get(reverse("api:bot-ratings", args=[version.bot_id])).json()
    assert {row["tournament"] for row in history["results"]} == {cup.pk}


def test_refusals_are_shown_next_to_their_field(version: BotVersion, settings: Any) -> None:
    author = _client(version.bot.owner)
    response = _try(author, version, deals=11)
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r'id="id_deals_error"[^>]*>[^<]*10', html), html[-3000:]
    response = _try(author, version, table_size=3)
    assert response.status_code == 400
    assert "across" in response.content.decode()
    settings.TAPIS_PRACTICE_ACTIVE = 1
    assert _try(author, version).status_code == 302
    response = _try(author, version)
    assert response.status_code == 400
    assert "waiting or playing" in response.content.decode()
    assert Tournament.objects.filter(practice=True).count() == 1


def test_a_version_not_ready_or_not_yours_is_refused() -> None:
    bot = BotFactory.create()
    pending = file_version(bot, "first_legal", status=BotVersion.Status.PENDING)
    author = _client(bot.owner)
    page = author.get(reverse("tournaments:my-version", args=[bot.pk, pending.number]))
    html = page.content.decode()
    assert "Only a ready version can be tried" in html
    assert 'name="deals"' not in html
    response = _try(author, pending)
    assert response.status_code == 400
    assert "only a ready version can be tried" in response.content.decode()
    ready = BuiltinVersionFactory.create()
    assert _try(author, ready).status_code == 404  # another author's: nothing says it exists
    staff = UserFactory.create(username="staffer", is_staff=True)
    assert _try(_client(staff), ready).status_code == 403  # staff see it, but try their own
    assert not Tournament.objects.filter(practice=True).exists()


def test_a_failed_run_says_why_in_one_line_and_stops_polling(version: BotVersion) -> None:
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    assert services.table_claim(table_id=table.pk, worker="w", token="t")
    services.table_fail(
        table_id=table.pk,
        token="t",
        error="Traceback (most recent call last):\n  ...\nOSError: gone",
    )
    author = _client(version.bot.owner)
    live = author.get(reverse("tournaments:practice-live", args=[run.pk]))
    assert live.status_code == 286
    html = live.content.decode()
    assert "failed" in html
    assert "(OSError: gone)" in html
    assert "Traceback" not in html
    staff = _client(UserFactory.create(username="staffer", is_staff=True))
    assert staff.get(reverse("tournaments:practice", args=[run.pk])).status_code == 200


def test_the_admin_lists_a_practice_run_once_it_is_over(version: BotVersion) -> None:
    admin = _client(UserFactory.create(username="root", is_staff=True, is_superuser=True))
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    listed = admin.get("/admin/tournaments/tournament/").content.decode()
    assert f"/admin/tournaments/tournament/{run.pk}/change/" not in listed
    tables = admin.get("/admin/tournaments/table/").content.decode()
    assert f"/admin/tournaments/table/{table.pk}/change/" not in tables
    assert admin.get(f"/admin/tournaments/tournament/{run.pk}/change/").status_code == 302
    services.tournament_run_here(tournament=run)
    assert f"/admin/tournaments/tournament/{run.pk}/change/" in (
        admin.get("/admin/tournaments/tournament/?practice__exact=1").content.decode()
    )
    assert admin.get(f"/admin/tournaments/tournament/{run.pk}/change/").status_code == 200
