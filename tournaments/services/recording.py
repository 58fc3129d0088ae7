"""Recording a played table in one transaction: its deals by COPY, tricks and decisions in
bulk, the seats in one statement, the replays rendered once; then the round's close."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.db import connection, models, transaction
from django.utils import timezone

import games
from judge.counting import counted_points
from judge.runner import TableResult
from tournaments import judging, scoring, selectors
from tournaments.models import (
    Deal,
    DealReplay,
    Decision,
    Fault,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
)
from tournaments.services._sql import BULK_BATCH, TABLE, as_points, insert_rows, sql_row
from tournaments.services.lifecycle import round_advance

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


def table_record_result(*, table_id: int, result: TableResult, token: str) -> bool:
    """Record a played table in one transaction: every deal with its tricks and decisions,
    the faults, the seats' scores, places and points; then, if it was the round's last table,
    close the round and seat the next one (or finish the tournament).

    Only the claim that is current records: the table must be running under ``token`` (the
    claim's token). Returns False, and changes nothing, otherwise: the table was already
    recorded (a task that ran twice), another worker claimed it since (this worker's lease ran
    out while it was paused or cut off: its late result is refused), or the tournament is no
    longer running."""
    with transaction.atomic():
        # Lock order everywhere: round, then table. Locking the round serialises the tables
        # of a round, so exactly one of them sees the round complete.
        round_ = sql_row(
            Round, f"id = (SELECT round_id FROM {TABLE} WHERE id = %s)", table_id, lock=True
        )
        table = sql_row(Table, "id = %s", table_id, lock=True)
        if round_ is None or table is None:
            raise Table.DoesNotExist(f"there is no table {table_id}")
        if table.status != Table.Status.RUNNING or table.claim_token != token:
            return False
        tournament = sql_row(Tournament, "id = %s", table.tournament_id)
        if tournament is None or tournament.status != Tournament.Status.RUNNING:
            return False
        table.round, table.tournament = round_, tournament
        seats = selectors.table_replay_seats(table_id=table_id)
        deals, tricks = _write_deals(table, tournament, result)
        _write_seats(table, tournament, result, seats)
        header = {k: v for k, v in result.log.items() if k != "deals"}
        summary: dict[str, Any] = result.as_json(with_log=False)
        summary["replay_header"] = header
        now = timezone.now()
        table.status = Table.Status.DONE
        table.finished_at = now
        table.lease_expires_at = None
        table.result = summary
        table.error = ""
        table.save(update_fields=["status", "finished_at", "lease_expires_at", "result", "error"])
        # The deals' replays, rendered once: the API sends them as they are.
        replays = selectors.replays_to_store(table=table, deals=deals, tricks=tricks, seats=seats)
        insert_rows(DealReplay, ("deal_id", "document"), [(r.deal_id, r.document) for r in replays])
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {TABLE} WHERE round_id = %s AND status <> %s LIMIT 1",
                [round_.pk, Table.Status.DONE],
            )
            complete = cursor.fetchone() is None
        if complete:
            _round_close(round_, tournament)
            round_advance(tournament=tournament)
    return True


# The columns of a deal row as _write_deals writes them (after the id).
_DEAL_FIELDS = (
    "table_id",
    "index",
    "seed",
    "record",
    "passes",
    "points",
    "log",
    "decisions",
    "faults",
)


def _write_deals(
    table: Table, tournament: Tournament, result: TableResult
) -> tuple[list[Deal], dict[int, list[dict[str, Any]]]]:
    """Write the deals of a played table with their tricks and decisions; return the deals
    (with their ids) and each deal's tricks by deal id, as the replays show them."""
    engine = judging.tournament_engine(tournament=tournament, deals=len(result.deal_points))
    entries: list[Any] = result.log["deals"]  # type: ignore[assignment]
    deals: list[Deal] = []
    extras: list[tuple[list[games.Trick], list[Any], dict[int, str], list[Any]]] = []
    for entry in entries:
        index: int = entry["index"]
        record: dict[str, Any] = entry["deal"]
        actions: list[Any] = entry["actions"]
        state = engine.deal_from_record(index, record)
        for _, action in actions:
            state.apply_action(action)
        fault_list: list[Any] = entry.get("faults") or []
        faults_at = {
            int(f["step"]): str(f["kind"])
            for f in fault_list
            if isinstance(f, dict) and isinstance(f.get("step"), int)
        }
        times: list[Any] = entry.get("times") or []
        seed = record.get("seed")
        deals.append(
            Deal(
                table=table,
                index=index,
                seed=seed if isinstance(seed, int) else None,
                record=record,
                passes=engine.passes(actions),
                points=entry["points"],
                log=entry,
                decisions=len(actions),
                faults=len(fault_list),
            )
        )
        extras.append((list(state.tricks()), actions, faults_at, times))
    _insert_deals(deals)
    tricks: list[tuple[object, ...]] = []
    decisions: list[tuple[object, ...]] = []
    shown: dict[int, list[dict[str, Any]]] = {}
    for deal, (deal_tricks, actions, faults_at, times) in zip(deals, extras, strict=True):
        rows = [
            (deal.pk, n, t.leader, list(t.cards), t.winner, t.points)
            for n, t in enumerate(deal_tricks)
        ]
        tricks.extend(rows)
        shown[deal.pk] = [
            {"number": n, "leader": leader, "cards": cards, "winner": winner, "points": points}
            for _, n, leader, cards, winner, points in rows
        ]
        decisions.extend(
            (
                deal.pk,
                step,
                seat,
                action,
                float(times[step]) if step < len(times) else 0.0,
                faults_at.get(step, ""),
            )
            for step, (seat, action) in enumerate(actions)
        )
    insert_rows(Trick, ("deal_id", "number", "leader", "cards", "winner", "points"), tricks)
    insert_rows(Decision, ("deal_id", "step", "seat", "action", "seconds", "fault"), decisions)
    return deals, shown


def _insert_deals(deals: list[Deal]) -> None:
    """Insert new deals and set their ids, in order. On PostgreSQL, the ids come first from
    the id column's sequence (one query), then the rows go in with COPY: ``bulk_create``
    would send every JSON value through psycopg's array of jsonb, which costs far more."""
    if connection.vendor != "postgresql":
        Deal.objects.bulk_create(deals, batch_size=BULK_BATCH)
        return
    meta = Deal._meta
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [meta.db_table, meta.pk.column, len(deals)],
        )
        ids = sorted(row[0] for row in cursor.fetchall())
    for deal, pk in zip(deals, ids, strict=True):
        deal.pk = pk
    insert_rows(
        Deal,
        ("id", *_DEAL_FIELDS),
        [(deal.pk, *(getattr(deal, field) for field in _DEAL_FIELDS)) for deal in deals],
    )
    for deal in deals:
        deal._state.adding = False  # as bulk_create leaves them: saved rows


def _write_seats(
    table: Table, tournament: Tournament, result: TableResult, seats: list[dict[str, Any]]
) -> None:
    """Write each seat's result (one UPDATE for all of them) and the table's faults;
    ``seats`` are the table's seats (:func:`selectors.table_replay_seats`)."""
    points = (
        None
        if tournament.duplicate
        else scoring.table_points(
            result.places, selectors.tournament_place_points(tournament=tournament)
        )
    )
    values = [
        (
            seat_result.seat,
            seat_result.score,
            seat_result.total,
            seat_result.place,
            as_points(points[seat_result.seat]) if points is not None else None,
            len(seat_result.faults),
            seat_result.replaced,
            seat_result.replaced_deal,
            seat_result.decisions,
            seat_result.mean_time,
            (seat_result.name or "")[:100],
            seat_result.log,
        )
        for seat_result in result.seats
    ]
    if values:
        _update_seats(table, values)
    entries = {seat["position"]: seat["entry_id"] for seat in seats}
    Fault.objects.bulk_create(
        [
            Fault(
                table=table,
                seat=f.seat,
                entry_id=entries[f.seat],
                kind=f.kind.value,
                deal_index=f.deal,
                decision=f.decision,
                step=f.step,
                detail=f.detail,
            )
            for f in result.faults
        ]
    )


def _update_seats(table: Table, values: list[tuple[Any, ...]]) -> None:
    """Set the result columns of a table's seats from (position, *Seat.RESULT_FIELDS)
    rows, in one ``UPDATE ... FROM (VALUES ...)`` (one small UPDATE per seat cost the worker
    and the server more; ``bulk_update``'s CASE over every column more still). Other
    databases get one small UPDATE per seat."""
    if connection.vendor != "postgresql":
        for position, *columns in values:
            Seat.objects.filter(table=table, position=position).update(
                **dict(zip(Seat.RESULT_FIELDS, columns, strict=True))
            )
        return
    meta = Seat._meta
    quote = connection.ops.quote_name
    fields = [meta.get_field(name) for name in Seat.RESULT_FIELDS]
    assert all(isinstance(f, models.Field) for f in fields)
    # Each value cast to its column's type: the VALUES list has none of its own (a column
    # of NULLs would be text).
    assignments = ", ".join(
        f"{quote(f.column)} = v.{quote(f.column)}::{f.db_type(connection)}"
        for f in fields
        if isinstance(f, models.Field)
    )
    names = ", ".join(quote(f.column) for f in fields if isinstance(f, models.Field))
    row = "(" + ", ".join(["%s"] * (len(fields) + 1)) + ")"
    table_name = quote(meta.db_table)
    sql = (
        f"UPDATE {table_name} SET {assignments} "
        f"FROM (VALUES {', '.join([row] * len(values))}) AS v(position, {names}) "
        f"WHERE {table_name}.{quote('table_id')} = %s "
        f"AND {table_name}.{quote('position')} = v.position"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for row_values in values for value in row_values] + [table.pk])


def _round_close(round_: Round, tournament: Tournament) -> None:
    """Close a round whose tables are all recorded; duplicate play scores matchpoints now."""
    if tournament.duplicate:
        round_matchpoints_store(round_=round_, tournament=tournament)
    round_.status = Round.Status.DONE
    round_.finished_at = timezone.now()
    round_.save(update_fields=["status", "finished_at"])


def round_matchpoints_store(*, round_: Round, tournament: Tournament) -> None:
    """Score a recorded duplicate round's matchpoints into its seats' points, from the deals'
    points as they count (a replaced seat forfeits the rest of its table: judge.counting)."""
    tables = list(Table.objects.filter(round=round_).order_by("number"))
    deal_points: dict[int, list[list[int]]] = {t.pk: [] for t in tables}
    for table_id, points in (
        Deal.objects.filter(table__round=round_)
        .order_by("table_id", "index")
        .values_list("table_id", "points")
    ):
        deal_points[table_id].append(points)
    lower_is_better = selectors.tournament_lower_is_better(tournament=tournament)
    seats = list(Seat.objects.filter(table__round=round_))
    replaced: dict[int, list[int | None]] = {t.pk: [None] * tournament.table_size for t in tables}
    for seat in seats:
        replaced[seat.table_id][seat.position] = seat.replaced_deal
    matchpoints = scoring.duplicate_matchpoints(
        [
            counted_points(deal_points[t.pk], replaced[t.pk], lower_is_better=lower_is_better)
            for t in tables
        ],
        lower_is_better=lower_is_better,
    )
    index = {t.pk: i for i, t in enumerate(tables)}
    for seat in seats:
        seat.points = as_points(matchpoints[index[seat.table_id]][seat.position])
    Seat.objects.bulk_update(seats, ["points"])
