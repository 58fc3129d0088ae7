"""Stored replays. A recorded deal never changes: its replay is rendered once (when its table
is recorded) and kept as JSON text in DealReplay; the API sends it as it is. Who may see it is
still checked on every request (:func:`deal_replay_stored`)."""

from __future__ import annotations

import dataclasses
import json
import weakref
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from tournaments import visibility
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    DealReplay,
    Entry,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
)
from tournaments.selectors.tables import bot_in_words, bot_label


def _replay_seat_label(seat: dict[str, Any]) -> str:
    version_label = (
        None
        if seat["entry_id"] is None
        else f"{seat['entry__version__bot__name']} v{seat['entry__version__number']}"
    )
    return bot_label(version_label, substitute=seat["substitute"], house_bot=seat["house_bot"])


def _takeover(
    deal: dict[str, Any], seat: dict[str, Any], faults: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Who played ``seat`` in this deal once the judge handed it to a built-in bot (after a
    crash or too many faults), and from which action (an index in the deal's actions), or
    None when its own bot played the whole deal. Read from the table's result, whose seats
    say after which deal and decision each was replaced."""
    results = deal.get("judge_seats")
    lines = results if isinstance(results, list) else []
    line = next((r for r in lines if isinstance(r, dict) and r.get("seat") == seat["position"]), {})
    at = line.get("replaced_at")
    if not (isinstance(at, dict) and line.get("replaced_by")):
        return None
    replaced_in, decision = at.get("deal"), at.get("decision")
    if isinstance(replaced_in, int) and replaced_in > deal["index"]:
        return None
    start = 0
    if replaced_in == deal["index"]:
        steps = [
            f.get("step")
            for f in faults
            if f.get("seat") == seat["position"] and f.get("decision") == decision
        ]
        start = steps[-1] + 1 if steps and isinstance(steps[-1], int) else 0
    builtin = str(line["replaced_by"]).partition(":")[2] or str(line["replaced_by"])
    version = (
        None
        if seat["entry_id"] is None
        else f"{seat['entry__version__bot__name']} v{seat['entry__version__number']}"
    )
    return {
        "from_action": start,
        "bot": bot_in_words(version, house_bot=builtin, substitute=version is not None),
    }


def _replay_seat(
    deal: dict[str, Any], seat: dict[str, Any], faults: list[dict[str, Any]]
) -> dict[str, Any]:
    """A seat as a replay shows it; ``takeover`` only once a built-in bot took it over (the
    documents stored before takeovers were shown have none)."""
    out = {
        "position": seat["position"],
        "entry": seat["entry_id"],
        "bot": _replay_seat_label(seat),
        "house": seat["entry_id"] is None,
        "substitute": seat["substitute"],
    }
    takeover = _takeover(deal, seat, faults)
    if takeover is not None:
        out["takeover"] = takeover
    return out


def _replay_document(
    deal: dict[str, Any], tricks: list[dict[str, Any]], seats: list[dict[str, Any]]
) -> dict[str, Any]:
    header = deal["replay_header"] if isinstance(deal["replay_header"], dict) else {}
    log = dict(deal["log"]) if isinstance(deal["log"], dict) else {}
    actions = log.get("actions") or []
    times = log.get("times") or []
    faults = [f for f in log.get("faults") or [] if isinstance(f, dict)]
    fault_at = {f.get("step"): str(f.get("kind", "")) for f in faults}
    record = deal["record"] if isinstance(deal["record"], dict) else {}
    return {
        "id": deal["id"],
        "tournament": deal["table__tournament_id"],
        "round": deal["table__round__number"],
        "table": deal["table_id"],
        "index": deal["index"],
        "game": header.get("game") or deal["table__tournament__game"],
        "preset": header.get("preset") or deal["table__tournament__preset"],
        "options": header.get("options") or {},
        "seed": deal["seed"],
        "seats": [_replay_seat(deal, seat, faults) for seat in seats],
        "hands": record.get("hands"),
        "record": record,
        "passes": deal["passes"],
        "tricks": tricks,
        "decisions": [
            {
                "step": step,
                "seat": seat,
                "action": action,
                "seconds": times[step] if step < len(times) else 0.0,
                "fault": fault_at.get(step, ""),
            }
            for step, (seat, action) in enumerate(actions)
        ],
        "faults": faults,
        "points": deal["points"],
        "log": log,
    }


def _replay_text(
    deal: dict[str, Any], tricks: list[dict[str, Any]], seats: list[dict[str, Any]]
) -> str:
    return json.dumps(
        _replay_document(deal, tricks, seats), ensure_ascii=False, separators=(",", ":")
    )


# The seat columns a replay shows (its label names the bot and version).
_REPLAY_SEAT_FIELDS = (
    "position",
    "entry_id",
    "house_bot",
    "substitute",
    "entry__version__number",
    "entry__version__bot__name",
)


def deal_replay_documents(*, deals: QuerySet[Deal]) -> dict[int, str]:
    """The replay of each of ``deals`` as the API shows it (``api.serializers.deals.
    DealReplaySerializer``: the table's replay header, the deal's log, its tricks, its seats,
    the decisions one per step), as compact JSON text, by deal id. Three queries, whatever the
    number of deals. Says nothing about who may see them."""
    rows = list(
        deals.annotate(
            replay_header=KeyTransform("replay_header", "table__result"),
            judge_seats=KeyTransform("seats", "table__result"),
        )
        .order_by("pk")
        .values(
            "id",
            "index",
            "seed",
            "record",
            "passes",
            "points",
            "log",
            "replay_header",
            "judge_seats",
            "table_id",
            "table__tournament_id",
            "table__round__number",
            "table__tournament__game",
            "table__tournament__preset",
        )
    )
    tricks: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for trick in (
        Trick.objects.filter(deal_id__in=[row["id"] for row in rows])
        .order_by("deal_id", "number")
        .values("deal_id", "number", "leader", "cards", "winner", "points")
    ):
        plain: dict[str, Any] = dict(trick)
        tricks[plain.pop("deal_id")].append(plain)
    seats: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for seat in (
        Seat.objects.filter(table_id__in={row["table_id"] for row in rows})
        .order_by("table_id", "position")
        .values("table_id", *_REPLAY_SEAT_FIELDS)
    ):
        seats[seat["table_id"]].append(dict(seat))
    return {row["id"]: _replay_text(row, tricks[row["id"]], seats[row["table_id"]]) for row in rows}


def deal_replay_document(*, deal_id: int) -> str:
    """The replay of one deal as JSON text (:func:`deal_replay_documents`)."""
    return deal_replay_documents(deals=Deal.objects.filter(pk=deal_id))[deal_id]


@dataclasses.dataclass(frozen=True, slots=True)
class StoredReplay:
    """What a replay request needs: whether the deal may be shown, and its stored replay."""

    visible: bool
    document: str | None


_STORED_REPLAY_SQL = f"""
SELECT t.status, r.status, tn.status, tn.duplicate, tn.practice, dr.document
FROM {Deal._meta.db_table} d
JOIN {Table._meta.db_table} t ON t.id = d.table_id
JOIN {Round._meta.db_table} r ON r.id = t.round_id
JOIN {Tournament._meta.db_table} tn ON tn.id = t.tournament_id
LEFT JOIN {DealReplay._meta.db_table} dr ON dr.deal_id = d.id
WHERE d.id = %s
"""
# On PostgreSQL the query is prepared once per connection: planning its four joins costs the
# server several times what running it does (docs/operations.md).
_STORED_REPLAY_STATEMENT = "tapis_deal_replay_stored"
_stored_replay_prepared: weakref.WeakSet[Any] = weakref.WeakSet()


def _stored_replay_query() -> str:
    """The replay query on the open connection: on PostgreSQL the ``EXECUTE`` of a statement
    prepared on that connection (the first time it is asked for), else plain SQL."""
    if connection.vendor != "postgresql":
        return _STORED_REPLAY_SQL
    raw = connection.connection  # psycopg's connection, new whenever Django reconnects
    if raw not in _stored_replay_prepared:
        # Once per connection, as part of opening it (on psycopg's own connection: Django does
        # not count it as a query of the request). A prepared statement outlives transactions,
        # even rolled back ones.
        sql = _STORED_REPLAY_SQL.replace("%s", "$1")
        raw.execute(f"PREPARE {_STORED_REPLAY_STATEMENT} (bigint) AS {sql}")
        _stored_replay_prepared.add(raw)
    return f"EXECUTE {_STORED_REPLAY_STATEMENT} (%s)"


def deal_replay_stored(*, deal_id: int) -> StoredReplay | None:
    """Whether the deal ``deal_id`` may be shown to anyone (:func:`visibility.play_public`:
    its table finished; in duplicate play, its round; never in a draft nor a practice run,
    which only its author and staff see: the callers then ask on their slower path, knowing
    who asks) and its stored
    replay, in one query (None if there is no such deal). The replay is None for deals
    recorded before replays were stored."""
    if not 0 < deal_id < 2**63:  # no such id (the prepared statement takes a bigint)
        return None
    # Raw SQL: compiling this join through the ORM cost more than running it.
    with connection.cursor() as cursor:
        cursor.execute(_stored_replay_query(), [deal_id])
        row = cursor.fetchone()
    if row is None:
        return None
    table_status, round_status, tournament_status, duplicate, practice, document = row
    visible = visibility.play_public(
        table_status=table_status,
        round_status=round_status,
        tournament_status=tournament_status,
        duplicate=bool(duplicate),
        practice=bool(practice),
    )
    return StoredReplay(visible=visible, document=document)


_TABLE_SEATS_SQL = f"""
SELECT s.position, s.entry_id, s.house_bot, s.substitute, v.number, b.name
FROM {Seat._meta.db_table} s
LEFT JOIN {Entry._meta.db_table} e ON e.id = s.entry_id
LEFT JOIN {BotVersion._meta.db_table} v ON v.id = e.version_id
LEFT JOIN {Bot._meta.db_table} b ON b.id = v.bot_id
WHERE s.table_id = %s
ORDER BY s.position
"""


def table_replay_seats(*, table_id: int) -> list[dict[str, Any]]:
    """The seats of a table in order, with what a replay shows of each: the values of
    ``_REPLAY_SEAT_FIELDS`` (``entry_id``, ``house_bot``, ``substitute``, the version's number
    and bot name). Raw SQL: recording every table asks for these, and compiling the joins
    through the ORM cost more than running them."""
    with connection.cursor() as cursor:
        cursor.execute(_TABLE_SEATS_SQL, [table_id])
        rows = cursor.fetchall()
    return [
        dict(zip(_REPLAY_SEAT_FIELDS, (p, e, h, bool(sub), n, b), strict=True))
        for p, e, h, sub, n, b in rows
    ]


def _jsonb_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # jsonb keeps an object's keys shorter first, then bytewise (its last value of a key).
    return dict(sorted(pairs, key=lambda pair: (len(pair[0].encode()), pair[0].encode())))


def _jsonb_number(text: str) -> int | float:
    if "e+" in text:  # 1e+16 and above: jsonb writes every digit, which reads as an integer
        return int(Decimal(text))
    number = float(text)
    return number if number else 0.0  # jsonb's numeric has no negative zero


def as_jsonb(value: Any) -> Any:
    """A JSON value as Django reads it back from a PostgreSQL ``jsonb`` column: objects with
    their keys in jsonb's order (shorter first, then bytewise), floats of 1e16 and above as
    integers, no negative zero; tuples as lists, keys as strings.

    >>> as_jsonb({"seed": 1, "a": [1.5e16, -0.0, (2, "x")], "bb": {"z": 1, "y": None}})
    {'a': [15000000000000000, 0.0, [2, 'x']], 'bb': {'y': None, 'z': 1}, 'seed': 1}
    """
    return json.loads(json.dumps(value), object_pairs_hook=_jsonb_object, parse_float=_jsonb_number)


def replays_to_store(
    *,
    table: Table,
    deals: list[Deal],
    tricks: dict[int, list[dict[str, Any]]],
    seats: list[dict[str, Any]],
) -> list[DealReplay]:
    """The replays of the deals of a table being recorded, ready to be saved (services call
    this when they record the table), exactly as :func:`deal_replay_documents` renders them
    from the database. ``table`` comes with its round and tournament and its ``result`` set;
    ``deals`` are the deals just written (with their ids), ``tricks`` their tricks by deal id
    (number, leader, cards, winner, points), ``seats`` the :func:`table_replay_seats`.

    On PostgreSQL they are rendered from these rows in memory, their JSON values taken as
    jsonb gives them back (:func:`as_jsonb`); elsewhere the rows are read back."""
    if connection.vendor != "postgresql":
        documents = deal_replay_documents(deals=Deal.objects.filter(table=table))
        return [DealReplay(deal_id=pk, document=text) for pk, text in documents.items()]
    result = table.result if isinstance(table.result, dict) else {}
    tournament = table.tournament
    common = {
        "replay_header": as_jsonb(result.get("replay_header")),
        "judge_seats": as_jsonb(result.get("seats")),
        "table_id": table.pk,
        "table__tournament_id": table.tournament_id,
        "table__round__number": table.round.number,
        "table__tournament__game": tournament.game,
        "table__tournament__preset": tournament.preset,
    }
    replays = []
    for deal in sorted(deals, key=lambda d: d.pk):
        # One pass through as_jsonb for the deal's JSON; a deal's record is also its log's
        # "deal" (the judge's log entry), taken from there when it is the same object.
        shared = isinstance(deal.log, dict) and deal.log.get("deal", ...) is deal.record
        passes, points, log, record = as_jsonb(
            [deal.passes, deal.points, deal.log, None if shared else deal.record]
        )
        row = {
            "id": deal.pk,
            "index": deal.index,
            "seed": None if deal.seed is None else int(deal.seed),
            "record": log["deal"] if shared else record,
            "passes": passes,
            "points": points,
            "log": log,
            **common,
        }
        text = _replay_text(row, tricks.get(deal.pk, []), seats)
        replays.append(DealReplay(deal_id=deal.pk, document=text))
    return replays
