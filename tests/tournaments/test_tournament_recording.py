"""Recording a played table through its fast paths (COPY, one UPDATE for the seats, replays
rendered in memory): what they write is what the ORM writes and reads back, on the real
PostgreSQL."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judge.runner import TableResult
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import scoring, selectors, services
from tournaments.models import Deal, DealReplay, Seat, Table
from tournaments.services import recording

pytestmark = pytest.mark.django_db(transaction=True)

# What these check is PostgreSQL's (COPY, jsonb); the suite runs on PostgreSQL.
postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the fast paths are PostgreSQL's"
)

# JSON whose text jsonb does not give back as written: keys reordered (shorter first, then
# bytewise), 1e16 and above written out in full, no negative zero; and text to escape.
ODD: dict[str, Any] = {
    "zz": 1.5e16,
    "a": [1e-07, -0.0, 0.1, 2.5e-300, 12345678901234567890, 1e22],
    "é": 'snow ☃ "quoted" \\ back\tslash\nline',
    "bb": {"long key": None, "k": True, "ü": [], "j": {}},
}


def _claimed(entries: int = 4, **kwargs: Any) -> Table:
    tournament = make_tournament(rounds=1, deals_per_table=2, **kwargs)
    enter_builtins(tournament, ["heuristic", "random", "lowest", "random"][:entries] * 2)
    services.tournament_start(tournament=tournament)
    table = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert table is not None
    claimed = services.table_claim(table_id=table.pk, worker="w", token="t")
    assert claimed is not None
    return claimed


def _deal_rows(table: Table) -> list[tuple[Any, ...]]:
    """A table's deals as PostgreSQL holds them (JSON as jsonb's text)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT index, seed, record::text, passes::text, passes IS NULL, points::text, "
            "log::text, decisions, faults FROM tournaments_deal WHERE table_id = %s "
            "ORDER BY index",
            [table.pk],
        )
        return cursor.fetchall()


@postgresql_only
def test_deals_go_in_as_bulk_create_writes_them() -> None:
    first = _claimed()
    second = Table.objects.filter(round=first.round).exclude(pk=first.pk).get()

    def deals(table: Table) -> list[Deal]:
        return [
            Deal(
                table=table,
                index=index,
                seed=seed,
                record={"seed": seed, "hands": [["QS", "2C"], ["AH"]], "odd": ODD},
                passes=passes,
                points=[26, 0, -0.0, 1.5],
                log={"index": index, "actions": [[0, "2C"], [1, ["AH", "KH"]]], "odd": ODD},
                decisions=index * 3,
                faults=index,
            )
            for index, seed, passes in [
                (0, 2**63 - 1, [["QS"], None]),
                (1, None, None),  # SQL NULL, not JSON null
                (2, 0, []),
            ]
        ]

    fast, plain = deals(first), deals(second)
    recording._insert_deals(fast)
    Deal.objects.bulk_create(plain)
    assert _deal_rows(first) == _deal_rows(second)
    assert [row[4] for row in _deal_rows(first)] == [False, True, False]
    # The ids are set in index order, as the database has them.
    ids = [deal.pk for deal in fast]
    assert ids == sorted(ids)
    assert (
        list(Deal.objects.filter(table=first).order_by("index").values_list("pk", flat=True)) == ids
    )
    assert all(not deal._state.adding for deal in fast)


def _odd_result(result: TableResult) -> TableResult:
    """The played result with odd JSON in the parts the replays show, and odd seat text."""
    log = dict(result.log)
    options = log.get("options")
    log["options"] = {**(options if isinstance(options, dict) else {}), "x-odd": ODD}
    entries = log["deals"]
    assert isinstance(entries, list)
    for entry in entries:
        assert isinstance(entry, dict)
        entry["x-odd"] = ODD
        faults = entry.get("faults")
        assert isinstance(faults, list)
        faults.append({"step": 1, "kind": "timeout", "seat": 1, "detail": "é ☃", "zz": 1e20})
    seats = list(result.seats)
    seats[1] = dataclasses.replace(seats[1], name='O\'Brien \\ ☃\t"x"', log="line\n\tnext\\")
    return dataclasses.replace(result, log=log, seats=tuple(seats))


@postgresql_only
def test_recorded_rows_and_stored_replays_are_those_the_database_gives_back() -> None:
    table = _claimed()
    result = _odd_result(services.table_play(table=table))
    assert services.table_record_result(table_id=table.pk, result=result, token="t")
    deals = Deal.objects.filter(table=table)
    stored = dict(DealReplay.objects.filter(deal__in=deals).values_list("deal_id", "document"))
    assert len(stored) == 2
    assert stored == selectors.deal_replay_documents(deals=deals)
    assert all('"x-odd":{"a":[1e-07,0.0,0.1,2.5e-300' in text for text in stored.values())
    assert all('"zz":15000000000000000,"é":' in text for text in stored.values())
    # Every seat column the one UPDATE writes.
    points = scoring.table_points(result.places, (4, 2, 1, 0))
    for seat in Seat.objects.filter(table=table).order_by("position"):
        mine = result.seats[seat.position]
        assert (
            seat.score,
            seat.total,
            seat.place,
            seat.points,
            seat.faults,
            seat.replaced,
            seat.decisions,
            seat.mean_time,
            seat.bot_name,
            seat.log,
        ) == (
            mine.score,
            mine.total,
            mine.place,
            Decimal(float(points[mine.seat])).quantize(Decimal("0.0001")),
            len(mine.faults),
            mine.replaced,
            mine.decisions,
            mine.mean_time,
            (mine.name or "")[:100],
            mine.log,
        )
    assert Seat.objects.get(table=table, position=1).bot_name == 'O\'Brien \\ ☃\t"x"'


def test_duplicate_play_leaves_the_points_to_the_round() -> None:
    table = _claimed(duplicate=True)
    assert services.table_record_result(
        table_id=table.pk, result=services.table_play(table=table), token="t"
    )
    seats = Seat.objects.filter(table=table)
    assert list(seats.values_list("points", flat=True)) == [None] * 4
    assert all(seat.place is not None for seat in seats)


@postgresql_only
def test_recording_a_table_takes_few_queries() -> None:
    table = _claimed()
    result = services.table_play(table=table)
    with CaptureQueriesContext(connection) as queries:
        assert services.table_record_result(table_id=table.pk, result=result, token="t")
    # BEGIN, lock the round, lock the table, its tournament, its seats, the deals' ids, the
    # seats' results, the table's, is the round complete, COMMIT (COPY is not counted).
    assert len(queries) == 10, [q["sql"][:80] for q in queries]


def test_claiming_a_table_takes_two_queries() -> None:
    tournament = make_tournament(rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 4)
    services.tournament_start(tournament=tournament)
    table = Table.objects.get(tournament=tournament)
    with CaptureQueriesContext(connection) as queries:
        claimed = services.table_claim(table_id=table.pk, worker="w", token="t")
    assert len(queries) == 2  # the tournament, then the compare-and-set (RETURNING the row)
    assert claimed is not None
    assert (claimed.status, claimed.claimed_by, claimed.claim_token, claimed.attempts) == (
        Table.Status.RUNNING,
        "w",
        "t",
        1,
    )
    assert claimed.tournament == tournament
    assert claimed.round.number == 1
    assert Table.objects.filter(pk=table.pk, status=Table.Status.RUNNING, attempts=1).exists()
