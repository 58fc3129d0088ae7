"""``GET /api/v1/tables/{id}/seats/{seat}/log/``: a bot's own stderr log at a table, for its
owner and staff once the table may be shown (tournaments.visibility.seat_log_shown); who gets
what is also in the permission matrix (test_api_permissions.py)."""

from __future__ import annotations

from judge.seats import LOG_CUT_NOTE
from tests.api.conftest import World, assert_error
from tournaments.models import Seat


def _seat(world: World, username: str = "author") -> Seat:
    return Seat.objects.get(table=world.table_done, entry__user__username=username)


def test_the_owner_reads_the_log_faults_and_times(world: World) -> None:
    seat = _seat(world)
    seat.log = "hello from stderr\n"
    seat.save(update_fields=["log"])
    response = world.client("author").get(
        f"/api/v1/tables/{world.table_done.pk}/seats/{seat.position}/log/"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["log"] == "hello from stderr\n"
    assert body["truncated"] is False
    assert body["table"] == world.table_done.pk
    assert body["seat"] == seat.position
    assert body["bot"] == "alpha v1"
    assert body["decisions"] == seat.decisions > 0
    assert body["faults"] == []
    assert isinstance(body["p99_time"], float)


def test_a_cut_log_says_so(world: World) -> None:
    seat = _seat(world)
    seat.log = "x" * 10 + LOG_CUT_NOTE.format(cap=10, dropped=99)
    seat.save(update_fields=["log"])
    body = (
        world.client("staff")
        .get(f"/api/v1/tables/{world.table_done.pk}/seats/{seat.position}/log/")
        .json()
    )
    assert body["truncated"] is True
    assert body["log"].endswith("99 more bytes dropped]\n")


def test_another_authors_seat_is_not_found_and_a_hidden_table_says_why(world: World) -> None:
    other = _seat(world, "other")
    missing = world.client("author").get(
        f"/api/v1/tables/{world.table_done.pk}/seats/{other.position}/log/"
    )
    assert_error(missing, 404)
    running = Seat.objects.get(table=world.table_running, entry__user__username="author")
    hidden = world.client("author").get(
        f"/api/v1/tables/{world.table_running.pk}/seats/{running.position}/log/"
    )
    body = assert_error(hidden, 403, "hidden")
    assert "finished" in str(body)
    nowhere = world.client("author").get(f"/api/v1/tables/{world.table_done.pk}/seats/9/log/")
    assert_error(nowhere, 404)
