"""The site's pages through Django's test client: content, hidden information, permissions."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld
from tests.tournaments.factories import (
    BotFactory,
    enter,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import page_selectors, services
from tournaments.models import Deal, Rating, Table

pytestmark = pytest.mark.django_db


def routes(world: SiteWorld) -> list[str]:
    table = Table.objects.filter(tournament=world.finished).order_by("pk").first()
    deal = Deal.objects.filter(table=table).order_by("pk").first()
    assert table is not None
    assert deal is not None
    bot_id = world.finished.entries.order_by("pk").first().version.bot_id  # type: ignore[union-attr]
    return [
        reverse("home"),
        reverse("tournaments:tournament-list"),
        reverse("tournaments:tournament-list") + "?status=finished&game=hearts&page=1",
        reverse("tournaments:tournament-detail", args=[world.finished.pk]),
        reverse("tournaments:tournament-detail", args=[world.open.pk]),
        reverse("tournaments:round-detail", args=[world.finished.pk, 1]),
        reverse("tournaments:tournament-crosstable", args=[world.finished.pk]),
        reverse("tournaments:tournament-audit", args=[world.finished.pk]),
        reverse("tournaments:table-detail", args=[table.pk]),
        reverse("tournaments:deal-audit", args=[deal.pk]),
        reverse("tournaments:bot-detail", args=[bot_id]),
        reverse("tournaments:rankings"),
        reverse("tournaments:docs"),
        reverse("tournaments:docs-page", args=["protocol"]),
    ]


def test_every_page_answers(site_world: SiteWorld, client: Client) -> None:
    for url in routes(site_world):
        response = client.get(url)
        assert response.status_code == 200, url
        assert b'<main id="main"' in response.content, url
        for tag in (b"{#", b"{%", b"{{"):  # template syntax printed, not read
            assert tag not in response.content, (url, tag)


def test_a_server_error_and_a_bad_request_are_the_sites_pages(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    """With DEBUG off (as everywhere, make run too) a bug is templates/500.html, a form sent
    without its CSRF token 403_csrf.html and a request the site cannot serve
    templates/400.html, in the site's look, saying nothing of the error; under /api/ the same
    errors are JSON (tests/api)."""
    settings.DEBUG = False

    def broken(**_: object) -> None:
        raise RuntimeError("a bug with a secret in its message")

    monkeypatch.setattr(page_selectors, "rankings_page", broken)
    response = Client(raise_request_exception=False).get(reverse("tournaments:rankings"))
    page = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong on our side" in page
    assert "tapis.css" in page
    assert '<main id="main"' in page
    assert "secret" not in page
    assert "Traceback" not in page

    forged = Client(enforce_csrf_checks=True).post(
        reverse("tournaments:login"), {"username": "x", "password": "y"}
    )
    assert forged.status_code == 403
    assert b"This form was not accepted" in forged.content
    assert b"tapis.css" in forged.content

    response = Client(HTTP_HOST="elsewhere.example").get(reverse("home"))
    assert response.status_code == 400
    assert b"This request cannot be answered" in response.content
    assert b"tapis.css" in response.content


def test_moments_are_written_in_utc_saying_so(site_world: SiteWorld, client: Client) -> None:
    """The same format on every page: the minute in UTC, said, and the instant in <time>."""
    moment = re.compile(
        r'<time datetime="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)">'
        r"(\d{4}-\d\d-\d\d \d\d:\d\d) UTC</time>"
    )
    bot_id = site_world.finished.entries.order_by("pk").first().version.bot_id  # type: ignore[union-attr]
    for url in (
        reverse("tournaments:tournament-list"),
        reverse("tournaments:bot-detail", args=[bot_id]),
    ):
        found = moment.findall(client.get(url).content.decode())
        assert found, url
        for instant, shown in found:
            assert instant[:16].replace("T", " ") == shown, url


def test_a_draft_is_hidden_from_the_public_but_not_from_its_organiser(
    site_world: SiteWorld, client: Client
) -> None:
    url = reverse("tournaments:tournament-detail", args=[site_world.draft.pk])
    response = client.get(url)
    assert response.status_code == 404
    assert b"Nothing here" in response.content  # templates/404.html, in the site's style
    listing = client.get(reverse("tournaments:tournament-list")).content.decode()
    assert "Secret draft" not in listing
    assert "Finished cup" in listing
    client.force_login(site_world.organiser)
    assert client.get(url).status_code == 200


def test_the_tournament_page_says_everything_about_a_finished_tournament(
    site_world: SiteWorld, client: Client
) -> None:
    tournament = site_world.finished
    html = client.get(reverse("tournaments:tournament-detail", args=[tournament.pk])).content
    text = html.decode()
    assert tournament.commitment in text
    assert tournament.seed in text  # revealed once finished
    assert "matches the commitment" in text
    assert "Check it yourself" in text
    assert f"printf %s {tournament.seed} | sha256sum" in text
    # Options in words, from the engine's own descriptions.
    assert "Every rule option of this tournament" in text
    # Named and valued as the organiser's form names them ("TD bonus", "Off").
    assert '<th scope="row">TD bonus</th><td>Off</td>' in text
    assert "td bonus" not in text
    assert "Round 2 of 2" in text or "Finished: 2 tables played" in text
    # Standings: 4 rows, places 1..4; the rounds, each linking its page; the crosstable's link.
    assert text.count('<tr class="') >= 4
    for number in (1, 2):
        assert reverse("tournaments:round-detail", args=[tournament.pk, number]) in text
    assert "Head to head" in text
    assert reverse("tournaments:tournament-crosstable", args=[tournament.pk]) in text


def test_a_signed_in_author_sees_their_own_rows_highlighted(
    site_world: SiteWorld, client: Client
) -> None:
    url = reverse("tournaments:tournament-detail", args=[site_world.finished.pk])
    assert b'class="mine' not in client.get(url).content
    client.force_login(site_world.author)
    html = client.get(url).content.decode()
    assert html.count('<tr class="mine') == 1  # the author's one entry in the standings


def test_the_table_page_shows_the_score_sheet_with_running_totals(
    site_world: SiteWorld, client: Client
) -> None:
    table = Table.objects.filter(tournament=site_world.finished).order_by("pk").first()
    assert table is not None
    deals = list(Deal.objects.filter(table=table).order_by("index"))
    html = client.get(reverse("tournaments:table-detail", args=[table.pk])).content.decode()
    first, second = deals[0].points[0], deals[1].points[0]
    assert f'{second} <span class="small muted">({first + second})</span>' in html
    assert f"/deals/{deals[0].pk}/" in html  # the replay viewer's address
    assert f"tapis verify table-{table.pk}.json" in html
    assert reverse("api:table-log", args=[table.pk]) in html


def test_faults_are_said_in_plain_words() -> None:
    from tournaments.page_selectors import fault_in_words

    assert (
        fault_in_words(kind="illegal", deal_index=0, decision=3, detail="6D: you must follow clubs")
        == "played an illegal action at deal 1, decision 4: the first legal action was played "
        "(6D: you must follow clubs)"
    )
    assert fault_in_words(kind="crash", deal_index=1, decision=None, detail="").startswith(
        "crashed at deal 2"
    )


def test_a_duplicate_round_still_playing_hides_its_finished_tables(client: Client) -> None:
    tournament = make_tournament(name="Duplicate cup", rounds=1, deals_per_table=2, duplicate=True)
    enter_builtins(tournament, ["random"] * 8)
    services.tournament_start(tournament=tournament)
    first = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert first is not None
    outcome = services.table_run(table_id=first.pk, worker="test", token="t-1")
    assert outcome.outcome == "recorded"
    first.refresh_from_db()
    assert first.status == Table.Status.DONE
    deal = Deal.objects.filter(table=first).order_by("index").first()
    assert deal is not None

    html = client.get(reverse("tournaments:table-detail", args=[first.pk])).content.decode()
    assert "Duplicate play: the other tables of this round play the same deals" in html
    assert 'id="score-sheet"' not in html
    response = client.get(reverse("tournaments:deal-audit", args=[deal.pk]))
    assert response.status_code == 403
    assert b"once every table of the round is finished" in response.content  # 403.html
    assert b"Hidden for now" in response.content
    page = client.get(reverse("tournaments:tournament-detail", args=[tournament.pk]))
    assert tournament.seed not in page.content.decode()
    # When the table finished is one of its results: not in the page's version (its
    # data-version, and the live part's since= link) either.
    assert first.finished_at is not None
    finished_at = first.finished_at.isoformat()
    live = client.get(reverse("tournaments:tournament-live", args=[tournament.pk]))
    for html in (page.content.decode(), live.content.decode()):
        assert 'data-version="' in html
        assert finished_at not in html
        assert quote(finished_at, safe="") not in html


def test_the_live_part_answers_204_when_nothing_changed_and_286_once_over(
    site_world: SiteWorld, client: Client
) -> None:
    url = reverse("tournaments:tournament-live", args=[site_world.open.pk])
    response = client.get(url)
    assert response.status_code == 200
    version = re.search(r'data-version="([^"]+)"', response.content.decode())
    assert version is not None
    assert client.get(url, {"since": version.group(1)}).status_code == 204
    assert client.get(url, {"since": "something older"}).status_code == 200
    finished = reverse("tournaments:tournament-live", args=[site_world.finished.pk])
    response = client.get(finished)
    assert response.status_code == 286  # htmx stops polling
    assert b'hx-swap-oob="innerHTML"' in response.content  # the live region's sentence


def test_lists_filter_and_paginate(site_world: SiteWorld, client: Client) -> None:
    for number in range(page_selectors.PAGE_SIZE + 2):
        make_tournament(name=f"Filler {number}", organiser=site_world.organiser)
    url = reverse("tournaments:tournament-list")
    first = client.get(url).content.decode()
    assert "page=2" in first
    second = client.get(url, {"page": 2}).content.decode()
    assert second.count('<th scope="row">') == 4  # 29 visible tournaments: 25 then 4
    finished = client.get(url, {"status": "finished"}).content.decode()
    assert "Finished cup" in finished
    assert "Filler" not in finished
    # Junk in the query never fails: an unknown status is ignored, a page past the end is the last.
    assert client.get(url, {"status": "nonsense", "page": "999"}).status_code == 200


def test_rankings_and_bot_pages(site_world: SiteWorld, client: Client) -> None:
    html = client.get(reverse("tournaments:rankings")).content.decode()
    assert "mu \u2212 3 sigma" in html
    entry = site_world.finished.entries.order_by("pk").first()
    assert entry is not None
    assert entry.version.bot.name in html
    bot = client.get(reverse("tournaments:bot-detail", args=[entry.version.bot_id])).content
    text = bot.decode()
    assert '<svg class="chart"' in text  # two rated tables: a rating history line
    assert "Finished cup" in text
    assert "Average place" in text


def test_the_rankings_open_on_the_family_with_the_most_rated_bots(client: Client) -> None:
    # "dutch/classic" sorts first; "hearts/whisthub" has more bots: the page opens on it.
    Rating.objects.create(
        bot=BotFactory.create(game="dutch"), family="dutch/classic", mu=25, sigma=8, ordinal=1
    )
    for _ in range(2):
        bot = BotFactory.create()
        Rating.objects.create(bot=bot, family="hearts/whisthub", mu=25, sigma=8, ordinal=1)
    page = page_selectors.rankings_page()
    assert page.family is not None
    assert page.family.family == "hearts/whisthub"
    assert [c.family for c in page.families] == ["dutch/classic", "hearts/whisthub"]
    asked = page_selectors.rankings_page(family="dutch/classic").family
    assert asked is not None
    assert asked.family == "dutch/classic"
    html = client.get(reverse("tournaments:rankings")).content.decode()
    assert bot.name in html


def test_home_links_to_a_finished_tournament_a_replay_and_the_rankings(
    site_world: SiteWorld, client: Client
) -> None:
    html = client.get(reverse("home")).content.decode()
    first_deal = (
        Deal.objects.filter(table__tournament=site_world.finished)
        .order_by("table__round__number", "table__number", "index")
        .first()
    )
    assert first_deal is not None
    start = html[html.index('id="start-title"') :]
    assert reverse("tournaments:tournament-detail", args=[site_world.finished.pk]) in start
    assert reverse("tournaments:deal", args=[first_deal.pk]) in start
    assert reverse("tournaments:rankings") in start
    assert "Open cup" in html  # open for registration
    assert "Secret draft" not in html


@pytest.mark.slow
def test_a_table_page_says_faults_and_the_replacement_in_plain_words(client: Client) -> None:
    """A real sandboxed bot answering a card it does not hold, at every decision."""
    tournament = make_tournament(name="Faulty cup", rounds=1, deals_per_table=1, max_faults=2)
    enter_builtins(tournament, ["random"] * 3)
    cheat = enter(tournament, file_version(BotFactory.create(name="cheat"), "illegal"))
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    table = Table.objects.get(tournament=tournament)
    html = client.get(reverse("tournaments:table-detail", args=[table.pk])).content.decode()
    faults = html[html.index('id="faults-title"') :]
    label = cheat.version.label
    assert f"<strong>{label}</strong>" in faults
    assert "played an illegal action at deal 1, decision 1: the first legal action was played" in (
        faults
    )
    assert "&#x27;ZZ&#x27;" in faults  # what it sent, escaped
    assert (
        f"<strong>{label} was replaced at deal 1</strong>: the built-in <em>heuristic</em> bot "
        "played the rest"
    ) in faults
    assert "this seat counts the worst points of each deal and its place is last" in faults


def test_a_long_tables_score_sheet_and_faults_come_a_page_at_a_time(
    site_world: SiteWorld, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table may have 1,000 deals and as many faults: a page of each at a time (one deal and
    two faults a page here), the running totals counting the deals of the pages before."""
    from tournaments.models import Fault

    monkeypatch.setattr("tournaments.page_selectors.tables.SHEET_PAGE_SIZE", 1)
    monkeypatch.setattr("tournaments.page_selectors.tables.FAULTS_PAGE_SIZE", 2)
    table = Table.objects.filter(tournament=site_world.finished).order_by("pk").first()
    assert table is not None
    for decision in range(3):
        Fault.objects.create(
            table=table, seat=1, kind="timeout", deal_index=0, decision=decision, detail=""
        )
    first, second = Deal.objects.filter(table=table).order_by("index")
    url = reverse("tournaments:table-detail", args=[table.pk])
    html = client.get(url).content.decode()
    assert f"/deals/{first.pk}/" in html
    assert f'href="/deals/{second.pk}/"' not in html
    assert 'aria-label="Pages of the score sheet"' in html
    assert '?page=2#sheet-title"' in html
    assert html.count("ran out of time") == 2
    assert '?faults=2#faults-title"' in html
    html = client.get(url + "?page=2&faults=2").content.decode()
    assert f'href="/deals/{second.pk}/"' in html
    total = first.points[0] + second.points[0]
    assert f'{second.points[0]} <span class="small muted">({total})</span>' in html
    assert html.count("ran out of time") == 1


def test_a_bots_versions_come_a_page_at_a_time(
    site_world: SiteWorld, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An author may upload hundreds of versions: newest first, a page at a time (two here)."""
    from tests.tournaments.factories import BuiltinVersionFactory

    monkeypatch.setattr("tournaments.page_selectors.bots.PAGE_SIZE", 2)
    entry = site_world.finished.entries.order_by("pk").first()
    assert entry is not None
    bot = entry.version.bot
    top = bot.versions.order_by("-number").first()
    assert top is not None
    for number in (top.number + 1, top.number + 2):
        BuiltinVersionFactory.create(bot=bot, number=number)
    url = reverse("tournaments:bot-detail", args=[bot.pk])
    shown = re.compile(r'<th scope="row">v(\d+)</th>')
    first = client.get(url).content.decode()
    assert shown.findall(first) == [str(top.number + 2), str(top.number + 1)]
    assert '?versions=2#versions-title"' in first
    rest = client.get(url + "?versions=2").content.decode()
    assert shown.findall(rest)[0] == str(top.number)


def test_a_long_rating_history_is_drawn_from_at_most_chart_points_tables() -> None:
    from tournaments.models import Rating, RatingHistory
    from tournaments.page_selectors.bots import CHART_POINTS, rating_chart

    history = [RatingHistory(ordinal=float(i % 37), place=1 + i % 4) for i in range(1000)]
    chart = rating_chart(rating=Rating(family="hearts/whisthub"), history=history)
    assert chart.tables == 1000
    assert len(chart.points) == CHART_POINTS
    assert chart.points[0].label.endswith("after table 1 (place 1)")
    assert chart.points[-1].label == "0.00 after table 1000 (place 4)"  # 999 % 37, 1 + 999 % 4
    xs = [p.x for p in chart.points]
    assert xs == sorted(xs)
    # The scale is every table's: the highest ordinal (36) is at the top margin.
    assert min(p.y for p in chart.points) >= chart.y_ticks[0][0]
    short = rating_chart(rating=Rating(family="hearts/whisthub"), history=history[:5])
    assert (short.tables, len(short.points)) == (5, 5)
