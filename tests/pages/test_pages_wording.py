"""What the pages say, in words a reader takes at face value: plurals, the standings' rules of
a duplicate tournament, the titles of a deal's pages, cards written as cards (the quality sweep
of the demo found each of these wrong)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld, play_to_the_end
from tests.tournaments.factories import BotFactory, enter_builtins, make_tournament
from tournaments import services
from tournaments.models import BotVersion, Deal, Seat, Table
from tournaments.pages.views import DOCS

pytestmark = pytest.mark.django_db


def test_a_duplicate_tournament_says_it_ranks_by_matchpoints_in_the_right_numbers(
    client: Client,
) -> None:
    tournament = make_tournament(name="Duplicate cup", rounds=1, deals_per_table=1, duplicate=True)
    enter_builtins(tournament, ["random"] * 8)
    services.tournament_start(tournament=tournament)
    play_to_the_end(tournament)

    html = client.get(reverse("tournaments:tournament-detail", args=[tournament.pk])).content
    text = re.sub(r"\s+", " ", html.decode())
    assert "Finished: 2 tables played over 1 round." in text  # not "1 rounds"
    # Duplicate points are matchpoints, not the places of a table.
    assert "by points (matchpoints: on each deal, 1 for each seat of another table" in text
    assert "for the places of a table" not in text
    # The relative score is better when positive (the standings sort it so), whatever the game.
    assert "lower scores are better" not in text
    assert "positive is better: fewer points than the table's average" in text


def test_a_standard_tournament_says_its_place_points(site_world: SiteWorld, client: Client) -> None:
    url = reverse("tournaments:tournament-detail", args=[site_world.finished.pk])
    text = re.sub(r"\s+", " ", client.get(url).content.decode())
    assert "Finished: 2 tables played over 2 rounds." in text
    assert "by points (4, 2, 1, 0 for the places of a table)" in text
    # Hearts: fewer points is better, so the relative score is the average minus the score.
    assert "(its average minus the score): positive is better" in text


def test_the_relative_score_of_a_game_won_by_points_is_the_score_minus_the_average(
    client: Client,
) -> None:
    tournament = make_tournament(
        name="Roi cup", game="roi", preset="classic", rounds=1, deals_per_table=10
    )
    enter_builtins(tournament, ["random"] * 4)
    url = reverse("tournaments:tournament-detail", args=[tournament.pk])
    text = re.sub(r"\s+", " ", client.get(url).content.decode())
    assert "(the score minus its average): positive is better" in text
    assert "positive is better: more points than the table's average" in text


def test_a_deals_pages_are_titled_alike_and_its_decisions_show_cards(
    site_world: SiteWorld, client: Client
) -> None:
    table = Table.objects.filter(tournament=site_world.finished, round__number=1, number=1).get()
    deal = Deal.objects.get(table=table, index=0)
    replay = client.get(reverse("tournaments:deal", args=[deal.pk])).content.decode()
    audit = client.get(reverse("tournaments:deal-audit", args=[deal.pk])).content.decode()
    where = "Round 1, table 1 · Finished cup · Tapis</title>"
    assert f"<title>Deal 1 · {where}" in replay
    assert f"<title>Audit of deal 1 · {where}" in audit

    decisions = replay.split('aria-label="Every decision"', 1)[1].split("</table>", 1)[0]
    assert 'plays <span class="pcard' in decisions
    # No card left as its code ("plays QS"), as the viewer above draws none so.
    assert not re.search(r"\b(plays|passes) [2-9TJQKA][SHDC]\b", decisions)


def test_a_versions_status_is_followed_by_its_colon() -> None:
    version = BotVersion(status=BotVersion.Status.READY)
    html = render_to_string("members/includes/version_status.html", {"version": version})
    assert "ready</span>: it may enter tournaments." in html  # not "ready : it may"


def test_members_pages_name_the_game_as_the_public_pages_do(client: Client) -> None:
    bot = BotFactory.create(game="roi", name="My roi bot")
    client.force_login(bot.owner)
    account = client.get(reverse("tournaments:account")).content.decode()
    assert "<td>Jeu du Roi</td>" in account  # not "roi"
    # The log out button sits in the lead's line: a form inside a <p> would end it.
    assert not re.search(r"<p\b(?:(?!</p>).)*<form", account, re.S)
    mine = client.get(reverse("tournaments:my-bot", args=[bot.pk])).content.decode()
    assert "A Jeu du Roi bot by" in mine
    assert "Open tournaments of Jeu du Roi" in mine


def test_the_organiser_page_names_the_game_and_counts_tables_of_a_total(
    site_world: SiteWorld, client: Client
) -> None:
    client.force_login(site_world.organiser)
    url = reverse("tournaments:organise", args=[site_world.finished.pk])
    text = re.sub(r"\s+", " ", client.get(url).content.decode())
    assert "Hearts family (Dame de pique, les cœurs), preset whisthub, 2 rounds of 2 deals" in text
    assert "Round 2 of 2: 2 of 2 tables done, 0 running, 0 waiting, 0 failed." in text


def test_a_validation_report_gives_decision_times_in_milliseconds() -> None:
    version = BotVersion(
        status=BotVersion.Status.READY,
        report={
            "ok": True,
            "reason": "played cleanly",
            "game": "hearts",
            "decisions": 26,
            "mean_time": 0.000214,
            "p99_time": 0.0021,
        },
    )
    html = render_to_string("members/includes/version_status.html", {"version": version})
    # As the table pages ("Mean (ms)"), not "mean 0.000214 s".
    assert "mean 0.2 ms, 99th percentile 2.1 ms" in html


def test_a_validation_report_names_its_table_as_the_pages_do() -> None:
    version = BotVersion(
        status=BotVersion.Status.READY,
        report={
            "ok": True,
            "reason": "played 28 decisions cleanly",
            "game": "hearts",
            "preset": "whisthub",
            "opponents": "builtin:random",
            "deals": 2,
            "seed": 7,
        },
    )
    html = render_to_string("members/includes/version_status.html", {"version": version})
    # Not "hearts/whisthub, 2 deals against builtin:random": the game's title, the built-in
    # bot as the Try it form names it.
    assert (
        "Hearts family (Dame de pique, les cœurs), preset whisthub: 2 deals against the built-in"
        " random bot in every other seat (seed 7)"
    ) in html


def test_a_page_a_member_may_not_open_is_not_said_hidden_for_now(client: Client) -> None:
    bot = BotFactory.create(name="Not an organiser's bot")
    client.force_login(bot.owner)
    response = client.get(reverse("tournaments:tournament-new"))
    assert response.status_code == 403
    html = response.content.decode()
    assert '<h1 id="error-title">Not allowed</h1>' in html
    assert "Creating tournaments needs the organiser right: ask the operators." in html
    # Not the hidden-information page's promise: this address will not work later.
    assert "Hidden for now" not in html
    assert "Come back then" not in html


def test_before_its_first_table_a_tournament_ranks_nobody_and_audits_nothing(
    client: Client,
) -> None:
    tournament = make_tournament(name="Open cup")
    enter_builtins(tournament, ["random", "lowest"])
    html = client.get(reverse("tournaments:tournament-detail", args=[tournament.pk])).content
    standings = html.decode().split('id="standings"', 1)[1].split("</table>", 1)[0]
    assert "No table has finished yet: the entries have no place until one has." in html.decode()
    # Two entries, no place given: not "1" and "2" before a card is played.
    places = re.findall(r'<tr class="[^"]*">\s*<td class="num">(.*?)</td>', standings)
    assert len(places) == 2
    assert not any(re.search(r"\d", place) for place in places), places
    audit = client.get(reverse("tournaments:tournament-audit", args=[tournament.pk])).content
    assert b"Every check passed" not in audit  # over 0 deals at 0 tables
    assert b"Nothing to check yet:" in audit


@pytest.mark.parametrize("slug", list(DOCS))
def test_a_guide_is_rendered_and_its_links_lead_somewhere(client: Client, slug: str) -> None:
    html = client.get(reverse("tournaments:docs-page", args=[slug])).content.decode()
    main = html.split('<main id="main"', 1)[1].split("</main>", 1)[0]
    assert '<div class="doc">' in main
    source = (Path(settings.BASE_DIR) / "docs" / DOCS[slug][0]).read_text()
    if "\n## " in source:
        assert re.search(r'<h2 id="[\w-]+">', main)  # headings, not "## ..." in a <pre>
    prose = re.sub(r"<pre.*?</pre>", "", main, flags=re.S)  # code may hold "# comments"
    assert not re.search(r"^#+ ", prose, re.M)  # Markdown drawn, not shown
    assert main.count("<h1") == 1  # the page's: the guide's own title is left out
    hrefs = re.findall(r'href="([^"]*)"', main)
    # A guide's links to another guide go to its page; no link to a file the site lacks.
    assert not [href for href in hrefs if ".md" in href or href.startswith("..")]
    for anchor in (href[1:] for href in hrefs if href.startswith("#")):
        assert f'id="{anchor}"' in main, anchor
    # Each table's scrolling box is a landmark with a name of its own (axe: landmark-unique).
    regions = re.findall(r'role="region" aria-label="([^"]*)"', main)
    assert len(regions) == len(set(regions)), regions
    # Headings go down one level at a time (axe: heading-order).
    levels = [int(level) for level in re.findall(r"<h([1-6])", main)]
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels)), levels


def test_the_protocol_guide_links_the_rules_and_draws_its_tables(client: Client) -> None:
    html = client.get(reverse("tournaments:docs-page", args=["protocol"])).content.decode()
    assert 'href="/docs/rules/"' in html  # [the rules](rules.md)
    assert '<h2 id="runtimes">' in html  # ([Runtimes](#runtimes))
    assert '<table class="data">' in html


def test_a_bots_rating_names_its_family_as_the_rankings_do(
    site_world: SiteWorld, client: Client
) -> None:
    entry = site_world.finished.entries.order_by("pk").first()
    assert entry is not None
    url = reverse("tournaments:bot-detail", args=[entry.version.bot_id])
    html = client.get(url).content.decode()
    assert "<h3>Hearts family (Dame de pique, les cœurs), whisthub: " in html  # not hearts/whisthub
    assert 'href="/rankings/?family=hearts/whisthub">the ranking</a>' in html


def test_the_menus_api_entry_is_a_page_not_a_download(client: Client) -> None:
    home = client.get(reverse("home")).content.decode()
    menu = home.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]
    assert '<a href="/docs/api/">API</a>' in menu  # not the schema, a YAML file
    guide = client.get(reverse("tournaments:docs-page", args=["api"])).content.decode()
    assert '<a href="/docs/api/" aria-current="page">API</a>' in guide
    assert 'href="/api/v1/docs/"' in guide  # the guide leads on to the interactive docs


def test_a_running_tournament_of_one_table_says_table(client: Client) -> None:
    tournament = make_tournament(name="Small cup", rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 4)
    services.tournament_start(tournament=tournament)
    home = re.sub(r"\s+", " ", client.get(reverse("home")).content.decode())
    assert "Round 1 of 1: 0 of 1 table done" in home  # not "0 of 1 tables"
    listing = client.get(reverse("tournaments:tournament-list")).content.decode()
    assert "0/1 table" in listing
    assert "0/1 tables" not in listing


def test_a_seat_log_is_titled_and_placed_as_its_table(
    site_world: SiteWorld, client: Client
) -> None:
    seat = (
        Seat.objects.filter(table__tournament=site_world.finished, entry__user=site_world.author)
        .select_related("table__round")
        .order_by("table__round__number")
        .first()
    )
    assert seat is not None
    client.force_login(site_world.author)
    url = reverse("tournaments:seat-log", args=[seat.table_id, seat.position])
    html = client.get(url).content.decode()
    where = f"Round {seat.table.round.number}, table {seat.table.number}"
    title = f"<title>Log of seat {seat.position + 1} · {where} · Finished cup · Tapis</title>"
    assert title in html
    crumbs = html.split('aria-label="Breadcrumbs"', 1)[1].split("</nav>", 1)[0]
    assert ">Home</a>" in crumbs  # as the table's page: Home, Tournaments, the cup, the table
    assert ">Finished cup</a>" in crumbs
    assert f">{where}</a>" in crumbs


def test_a_game_and_its_preset_are_written_without_nested_brackets(
    site_world: SiteWorld, client: Client
) -> None:
    """A Hearts tournament's game is "Hearts family (Dame de pique, les cœurs)": its preset
    follows as "…, preset whisthub" as on the tournament's page, not in brackets of its own
    ("les cœurs) (whisthub)"), on the cards of the home page and the list, a table's page and
    a bot's title."""
    from tests.pages.test_pages_client import routes

    for url in routes(site_world):
        if url.startswith("/docs/"):
            continue
        text = re.sub(r"<[^>]+>", "", client.get(url).content.decode())
        text = re.sub(r"\s+", " ", text)
        assert ") (" not in text, (url, text[text.find(") (") - 60 : text.find(") (") + 20])
        assert "))" not in text, (url, text[text.find("))") - 60 : text.find("))") + 10])


def test_the_score_against_the_average_carries_its_sign(
    site_world: SiteWorld, client: Client
) -> None:
    """The standings' "Against average" (positive is better) is written as the per-deal figures
    beside it: "+16", "\u221238" with a true minus, "0"; it said "16" and "-38"."""
    url = reverse("tournaments:tournament-detail", args=[site_world.finished.pk])
    html = client.get(url).content.decode()
    body = html.split('id="standings"')[1].split("<tbody>")[1].split("</tbody>")[0]
    rows = re.findall(r"<tr[ >].*?</tr>", body, re.S)
    assert len(rows) == 4
    against = [re.findall(r'<td class="num">([^<]*)</td>', row)[2] for row in rows]
    assert all(re.fullmatch(r"0|[+\u2212]\d+(\.\d)?", figure) for figure in against), against
    assert any(figure != "0" for figure in against)


def test_a_rounds_lead_says_its_status_as_a_tables_does(
    site_world: SiteWorld, client: Client
) -> None:
    """The lead says "… · round 1 of 2 · done", as a table's page ends its own ("· 2 deals ·
    done"), not "· (done)" in brackets after a separator."""
    url = reverse("tournaments:round-detail", args=[site_world.finished.pk, 1])
    lead = client.get(url).content.decode().split('<p class="lead">')[1].split("</p>")[0]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", lead)).strip()
    assert text == f"{site_world.finished.name} · round 1 of 2 · done"
