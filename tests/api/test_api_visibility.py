"""What the API shows of a table, and from when (tournaments.visibility decides).

In duplicate play every table of a round plays the same deals: a finished table's results
(totals, scores, places, points, each seat's decision count, mean time and faults, when it
finished) stay hidden from everyone, staff included, until the whole round is done.
"""

from __future__ import annotations

from typing import Any

from tests.api.conftest import (
    ROLES,
    World,
    assert_error,
    builtin_bot,
    enter,
    make_tournament,
    make_user,
)
from tournaments import services
from tournaments.models import Deal, Table, Tournament

SEAT_RESULTS = ("score", "total", "place", "points", "faults", "replaced", "decisions", "mean_time")


def _half_played(world: World, *, duplicate: bool) -> tuple[Tournament, Table, Table]:
    """A tournament of two tables in round 1 (one deal each), the first one recorded."""
    organiser = world.users["organiser"]
    assert organiser is not None
    cup = make_tournament(organiser, name="Half cup", duplicate=duplicate, deals_per_table=1)
    for i in range(5):
        enter(cup, builtin_bot(make_user(f"half{i}"), f"half{i}"))
    services.tournament_start(tournament=cup)
    first, second = Table.objects.filter(tournament=cup).order_by("number")
    services.table_run(table_id=first.pk, worker="test", token="test-1")
    first.refresh_from_db()
    assert first.status == Table.Status.DONE
    return cup, first, second


def _assert_hidden(table: dict[str, Any]) -> None:
    assert table["status"] == "done"
    assert table["visible"] is False
    assert table["finished_at"] is None
    for seat in table["seats"]:
        assert {name: seat[name] for name in SEAT_RESULTS} == dict.fromkeys(SEAT_RESULTS), seat
        assert seat["label"]  # who plays is public
    if "results" in table:
        assert (table["results"], table["deals"], table["faults"]) == (None, [], [])


def _assert_shown(table: dict[str, Any]) -> None:
    assert table["visible"] is True
    assert table["finished_at"] is not None
    for seat in table["seats"]:
        for name in ("score", "total", "place", "faults", "decisions", "mean_time"):
            assert seat[name] is not None, (name, seat)
    if "results" in table:
        assert table["results"] is not None
        assert len(table["deals"]) == 1


def test_a_finished_duplicate_tables_results_wait_for_its_round(world: World) -> None:
    cup, first, second = _half_played(world, duplicate=True)
    for role in ROLES:  # staff included
        client = world.client(role)
        _assert_hidden(client.get(f"/api/v1/tables/{first.pk}/").json())
        listed = client.get(f"/api/v1/tournaments/{cup.pk}/tables/?round=1").json()["results"]
        _assert_hidden(next(t for t in listed if t["id"] == first.pk))
        deal = Deal.objects.get(table=first)
        error = assert_error(client.get(f"/api/v1/deals/{deal.pk}/"), 403, "hidden")
        assert "every table of the round" in error["message"]
        error = assert_error(client.get(f"/api/v1/tables/{second.pk}/log/"), 403, "hidden")
        assert "pending" in error["message"]

    services.table_run(table_id=second.pk, worker="test", token="test-2")
    for role in ROLES:
        client = world.client(role)
        _assert_shown(client.get(f"/api/v1/tables/{first.pk}/").json())
        listed = client.get(f"/api/v1/tournaments/{cup.pk}/tables/?round=1").json()["results"]
        for table in listed:
            _assert_shown(table)


def test_standings_have_no_figure_of_a_duplicate_round_in_play(world: World) -> None:
    cup, _, second = _half_played(world, duplicate=True)
    rows = world.client("staff").get(f"/api/v1/tournaments/{cup.pk}/standings/").json()["results"]
    assert rows
    assert {(r["tables"], r["total_score"], tuple(r["places"]), r["points"]) for r in rows} == {
        (0, 0, (), 0.0)
    }
    services.table_run(table_id=second.pk, worker="test", token="test-2")
    rows = world.client("anonymous").get(f"/api/v1/tournaments/{cup.pk}/standings/").json()
    assert all(r["tables"] == 1 and r["places"] for r in rows["results"])


def test_a_finished_table_without_duplicate_shows_its_results_at_once(world: World) -> None:
    _, first, second = _half_played(world, duplicate=False)
    client = world.client("anonymous")
    _assert_shown(client.get(f"/api/v1/tables/{first.pk}/").json())
    pending = client.get(f"/api/v1/tables/{second.pk}/").json()
    assert pending["visible"] is False
    assert pending["results"] is None


def test_the_seed_is_shown_once_the_tournament_is_finished_and_never_before(
    world: World,
) -> None:
    for role in ROLES:
        client = world.client(role)
        assert client.get(f"/api/v1/tournaments/{world.running.pk}/").json()["seed"] is None
        listed = client.get("/api/v1/tournaments/?status=running").json()["results"]
        assert {t["seed"] for t in listed} == {None}
        finished = client.get(f"/api/v1/tournaments/{world.finished.pk}/").json()
        assert finished["seed"] == world.finished.seed
