"""No N+1: the number of SQL queries of every list and detail request is the same whatever
the amount of data behind it (measured at two sizes, asserted equal, and bounded)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.conftest import builtin_bot, client_for, enter, make_tournament, make_user
from tournaments import services
from tournaments.models import Deal, Table, Tournament

pytestmark = pytest.mark.django_db

MOST_QUERIES = 12  # any request: a bound well above what each needs


def build(size: int) -> dict[str, Any]:
    """A world that grows with ``size``: ``size`` authors each with a bot of ``size``
    versions, ``size`` extra tournaments, and a finished tournament of two rounds where
    every bot played (about ``size / 4`` tables a round, ``size`` deals a table)."""
    tag = f"s{size}"
    organiser = make_user(f"organiser-{tag}", organiser=True)
    bots = []
    for i in range(size):
        bot = builtin_bot(make_user(f"author-{tag}-{i}"), f"bot-{tag}-{i}", "random")
        for _ in range(size - 1):
            services.bot_version_create(bot=bot, builtin="lowest")
        bots.append(bot)
    for i in range(size):
        make_tournament(organiser, name=f"extra {tag} {i}")
    cup = make_tournament(organiser, name=f"cup {tag}", rounds=2, deals_per_table=size)
    for bot in bots:
        enter(cup, bot)
    services.tournament_start(tournament=cup)
    services.tournament_run_here(tournament=cup)
    cup.refresh_from_db()
    assert cup.status == Tournament.Status.FINISHED
    table = Table.objects.filter(tournament=cup).order_by("pk")[0]
    deal = Deal.objects.filter(table=table).order_by("index")[0]
    author = bots[0].owner
    return {
        "author": author,
        "urls": {
            "games": "/api/v1/games/",
            "tournaments": "/api/v1/tournaments/?page_size=200",
            "tournament": f"/api/v1/tournaments/{cup.pk}/",
            "entries": f"/api/v1/tournaments/{cup.pk}/entries/",
            "standings": f"/api/v1/tournaments/{cup.pk}/standings/",
            "progress": f"/api/v1/tournaments/{cup.pk}/progress/",
            "rounds": f"/api/v1/tournaments/{cup.pk}/rounds/",
            "tables": f"/api/v1/tournaments/{cup.pk}/tables/",
            "table": f"/api/v1/tables/{table.pk}/",
            "table log": f"/api/v1/tables/{table.pk}/log/",
            "deal": f"/api/v1/deals/{deal.pk}/",
            "rankings": "/api/v1/rankings/?game=hearts&page_size=200",
            "bot": f"/api/v1/bots/{bots[0].pk}/",
            "bot ratings": f"/api/v1/bots/{bots[0].pk}/ratings/",
            "bots": "/api/v1/bots/",
            "versions": f"/api/v1/bots/{bots[0].pk}/versions/",
            "version": f"/api/v1/bots/{bots[0].pk}/versions/1/",
        },
    }


def count_queries(world: dict[str, Any]) -> dict[str, int]:
    client = client_for(world["author"])
    counts = {}
    for name, url in world["urls"].items():
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200, (url, response.content[:300])
        counts[name] = len(queries)
    return counts


def test_query_counts_do_not_grow_with_the_data(settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    small = count_queries(build(4))
    large = count_queries(build(12))
    assert large == small
    assert max(small.values()) <= MOST_QUERIES, small
