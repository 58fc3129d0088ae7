"""No N+1 on the site: each public page makes as many queries for a small world as for a
larger one, on its first visit (nothing kept in the cache: the statistics, the replay's steps,
a finished tournament's rendering) and when kept."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.tournaments.factories import UserFactory, enter_builtins, make_tournament
from tournaments import page_selectors, services
from tournaments.models import Deal, Entry, Table, Tournament

pytestmark = pytest.mark.django_db


def played(name: str, *, entries: int, rounds: int, deals: int) -> Tournament:
    tournament = make_tournament(name=name, rounds=rounds, deals_per_table=deals)
    enter_builtins(tournament, ["random"] * entries)
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    return tournament


def queries(client: Client, url: str) -> tuple[int, int]:
    """The queries of a first visit (Django's cache emptied) and of a second one."""
    client.get(url)  # the process's own caches: the engine's catalogue and the like
    cache.clear()
    counts = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url)
        assert response.status_code in (200, 286), url
        counts.append(len(captured))
    return counts[0], counts[1]


def table_of(tournament: Tournament) -> int:
    table = Table.objects.filter(tournament=tournament).order_by("pk").first()
    assert table is not None
    return table.pk


def deal_of(tournament: Tournament) -> int:
    deal = Deal.objects.filter(table__tournament=tournament).order_by("pk").first()
    assert deal is not None
    return deal.pk


def bot_of(tournament: Tournament) -> int:
    entry = Entry.objects.filter(tournament=tournament).order_by("pk").first()
    assert entry is not None
    return entry.version.bot_id


PAGES: dict[str, Callable[[Tournament], str]] = {
    "home": lambda t: reverse("home"),
    "tournament list": lambda t: reverse("tournaments:tournament-list"),
    "tournament list (filtered)": lambda t: (
        reverse("tournaments:tournament-list") + "?status=finished&game=hearts&page=2"
    ),
    "tournament": lambda t: reverse("tournaments:tournament-detail", args=[t.pk]),
    "tournament, standings page 2": lambda t: (
        reverse("tournaments:tournament-detail", args=[t.pk]) + "?page=2"
    ),
    "tournament live": lambda t: reverse("tournaments:tournament-live", args=[t.pk]),
    "round": lambda t: reverse("tournaments:round-detail", args=[t.pk, 1]),
    "crosstable": lambda t: reverse("tournaments:tournament-crosstable", args=[t.pk]),
    "tournament audit": lambda t: reverse("tournaments:tournament-audit", args=[t.pk]),
    "table": lambda t: reverse("tournaments:table-detail", args=[table_of(t)]),
    "deal replay": lambda t: reverse("tournaments:deal", args=[deal_of(t)]),
    "deal steps (the viewer's windows)": lambda t: reverse(
        "tournaments:deal-steps", args=[deal_of(t), 0]
    ),
    "deal audit": lambda t: reverse("tournaments:deal-audit", args=[deal_of(t)]),
    "bot": lambda t: reverse("tournaments:bot-detail", args=[bot_of(t)]),
    "rankings": lambda t: reverse("tournaments:rankings"),
    "docs": lambda t: reverse("tournaments:docs"),
    "docs page": lambda t: reverse("tournaments:docs-page", args=["pages"]),
}


def test_query_counts_do_not_grow_with_the_data(client: Client) -> None:
    client.force_login(UserFactory.create())  # the signed-in path (highlighted rows) too
    small = played("Small", entries=4, rounds=1, deals=1)
    small_counts = {name: queries(client, url(small)) for name, url in PAGES.items()}
    # Three times the entries, three rounds, more deals; and more tournaments for the lists.
    large = played("Large", entries=12, rounds=3, deals=3)
    played("Another", entries=8, rounds=2, deals=2)
    for _ in range(3):
        make_tournament(name="Open one")
    large_counts = {name: queries(client, url(large)) for name, url in PAGES.items()}
    assert large_counts == small_counts


def test_a_duplicate_deal_and_its_traveller_cost_as_many_queries_whatever_the_round(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The replay page of a duplicate deal carries its traveller: the deal at every table of
    the round, a page of tables at a time (two here: the large round's spans three pages)."""
    monkeypatch.setattr(page_selectors.deals, "TRAVELLER_PAGE_SIZE", 2)
    client = Client()

    def duplicate(name: str, entries: int, deals: int) -> tuple[int, int]:
        tournament = make_tournament(name=name, rounds=1, deals_per_table=deals, duplicate=True)
        enter_builtins(tournament, ["random"] * entries)
        services.tournament_start(tournament=tournament)
        services.tournament_run_here(tournament=tournament)
        return queries(client, reverse("tournaments:deal", args=[deal_of(tournament)]))

    small = duplicate("Small duplicate", entries=8, deals=1)  # 2 tables
    large = duplicate("Large duplicate", entries=20, deals=3)  # 5 tables
    assert small == large
    last = Tournament.objects.get(name="Large duplicate")
    html = client.get(reverse("tournaments:deal", args=[deal_of(last)]) + "?traveller=3")
    assert html.content.decode().count("points · ") == 4  # the fifth table's seats only
