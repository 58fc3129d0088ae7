"""The API's "try it": POST /api/v1/bots/{id}/versions/{number}/try/ and GET
/api/v1/practice/{id}/ (docs/api.md, "Try it"). Who may call them: the permission matrix."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import assert_error, builtin_bot, client_for, make_user
from tournaments import services
from tournaments.models import Deal, Tournament

pytestmark = pytest.mark.django_db


def test_a_practice_run_through_the_api(settings: Any) -> None:
    author = make_user("author")
    bot = builtin_bot(author, "alpha", "heuristic")
    api = client_for(author)
    url = f"/api/v1/bots/{bot.pk}/versions/1/try/"
    created = api.post(url, {"deals": 2, "opponent": "random"}, format="json")
    assert created.status_code == 201, created.content
    run = created.json()
    assert run["status"] == "waiting"
    assert (run["deal_count"], run["opponent"], run["preset"]) == (2, "random", "whisthub")
    assert run["deals"] == []
    services.tournament_run_here(tournament=Tournament.objects.get(pk=run["id"]))
    done = api.get(f"/api/v1/practice/{run['id']}/").json()
    assert done["status"] == "finished"
    ids = list(
        Deal.objects.filter(table_id=done["table"]).order_by("index").values_list("pk", flat=True)
    )
    assert [d["id"] for d in done["deals"]] == ids
    assert len(done["deals"][0]["points"]) == 4
    assert api.get(f"/api/v1/deals/{ids[0]}/").json()["tricks"]
    listed = api.get(url).json()  # a page, as every list of the API
    assert listed["count"] == 1
    assert [r["id"] for r in listed["results"]] == [run["id"]]

    assert_error(api.post(url, {"deals": 11}, format="json"), 400, "deals_per_table")
    assert_error(api.post(url, {"opponent": "grandmaster"}, format="json"), 400)
    settings.TAPIS_PRACTICE_ACTIVE = 1
    assert api.post(url, {"deals": 1}, format="json").status_code == 201
    assert_error(api.post(url, {"deals": 1}, format="json"), 429, "practice_limit")
