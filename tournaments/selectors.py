"""Reads of the tournaments app: keyword-only functions that return rows or plain values.

Views, serializers, the admin and services read through these; none of them writes.
"""

from __future__ import annotations

import dataclasses
import json
import weakref
from collections import defaultdict
from decimal import Decimal
from fractions import Fraction
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Prefetch, Q, QuerySet
from django.db.models.fields.json import KeyTransform

import games
from games.base import JSON
from tournaments import scoring, visibility
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    DealReplay,
    Entry,
    Fault,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
)

# ---------------------------------------------------------------------------------------------
# Tournaments and standings
# ---------------------------------------------------------------------------------------------


def tournament_list(*, status: str | None = None, game: str | None = None) -> QuerySet[Tournament]:
    qs = Tournament.objects.all()
    if status:
        qs = qs.filter(status=status)
    if game:
        qs = qs.filter(game=game)
    return qs.annotate(entry_count=Count("entries", distinct=True))


def tournament_lower_is_better(*, tournament: Tournament) -> bool:
    return games.game_class(tournament.game).lower_is_better


def tournament_place_points(*, tournament: Tournament) -> tuple[int, ...]:
    if tournament.place_points:
        return tuple(int(p) for p in tournament.place_points)
    return scoring.default_place_points(tournament.table_size)


def _fraction(value: Decimal | None) -> Fraction:
    return Fraction(value) if value is not None else Fraction(0)


def tournament_outcomes(
    *, tournament: Tournament, before_round: int | None = None
) -> list[scoring.TableOutcome]:
    """Every recorded table (of the rounds before ``before_round``, if given) as the formats
    see it. Place points are recomputed exactly from the places; duplicate matchpoints are read
    from the seats (multiples of 1/2, stored exactly)."""
    # Only the tables whose results may be shown (in duplicate play, those of closed rounds):
    # the same for everyone, and for seating a round (every earlier round is closed).
    seats = Seat.objects.filter(
        visibility.tables_shown_q(prefix="table__"), table__tournament=tournament
    )
    if before_round is not None:
        seats = seats.filter(table__round__number__lt=before_round)
    # One lean query (no table results, no bot logs), the seats grouped by table in order.
    rows = seats.order_by("table__round__number", "table__number", "position").values(
        "table_id", "table__round__number", "table__number", "entry_id", "score", "place", "points"
    )
    tables: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        tables.setdefault(row["table_id"], []).append(dict(row))
    scale = tournament_place_points(tournament=tournament)
    outcomes = []
    for table_seats in tables.values():
        if any(s["place"] is None or s["score"] is None for s in table_seats):
            continue
        places = tuple(int(s["place"]) for s in table_seats)
        if tournament.duplicate:
            if any(s["points"] is None for s in table_seats):
                continue  # the round is not closed yet: matchpoints come when it is
            points = tuple(_fraction(s["points"]) for s in table_seats)
        else:
            points = tuple(scoring.table_points(places, scale))
        outcomes.append(
            scoring.TableOutcome(
                round_number=table_seats[0]["table__round__number"],
                table_number=table_seats[0]["table__number"],
                seats=tuple(s["entry_id"] for s in table_seats),
                scores=tuple(int(s["score"]) for s in table_seats),
                places=places,
                points=points,
            )
        )
    return outcomes


@dataclasses.dataclass(frozen=True, slots=True)
class StandingRow:
    """A line of the standings, with its entry."""

    entry: Entry
    rank: int | None
    points: Fraction
    relative_score: Fraction
    head_to_head: int
    tables: int
    total_score: int
    places: tuple[int, ...]
    ranked: bool

    def as_json(self) -> dict[str, JSON]:
        return {
            "entry": self.entry.pk,
            "bot": self.entry.version.bot.name,
            "version": self.entry.version.number,
            "owner": self.entry.user.get_username(),
            "rank": self.rank,
            "points": float(self.points),
            "points_exact": str(self.points),
            "relative_score": float(self.relative_score),
            "head_to_head": self.head_to_head,
            "tables": self.tables,
            "total_score": self.total_score,
            "places": list(self.places),
            "ranked": self.ranked,
            "withdrawn": self.entry.withdrawn,
            "disqualified": self.entry.disqualified,
        }


def standings_for_tournament(*, tournament: Tournament) -> list[StandingRow]:
    """The standings so far (final once the tournament is finished): points, then total
    score relative to the table averages, then head-to-head, then the seeded draw.
    Withdrawn and disqualified entries are listed last, without a rank."""
    entries = {
        e.pk: e
        for e in Entry.objects.filter(tournament=tournament).select_related("version__bot", "user")
    }
    lines = scoring.standings(
        entries=list(entries),
        outcomes=tournament_outcomes(tournament=tournament),
        seed=tournament.seed_int,
        lower_is_better=tournament_lower_is_better(tournament=tournament),
        unranked=[pk for pk, e in entries.items() if not e.active],
    )
    return [
        StandingRow(
            entry=entries[line.entry],
            rank=line.rank,
            points=line.points,
            relative_score=line.relative_score,
            head_to_head=line.head_to_head,
            tables=line.tables,
            total_score=line.total_score,
            places=line.places,
            ranked=line.ranked,
        )
        for line in lines
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class Progress:
    """Tables done of total, by status, and the round being played."""

    tables_total: int
    tables_done: int
    tables_running: int
    tables_pending: int
    tables_failed: int
    current_round: int
    rounds: int

    @property
    def fraction(self) -> float:
        return self.tables_done / self.tables_total if self.tables_total else 0.0

    def __str__(self) -> str:
        done, total = self.tables_done, self.tables_total
        return f"round {self.current_round}/{self.rounds}, {done}/{total} tables"

    def as_json(self) -> dict[str, JSON]:
        return {
            "tables_total": self.tables_total,
            "tables_done": self.tables_done,
            "tables_running": self.tables_running,
            "tables_pending": self.tables_pending,
            "tables_failed": self.tables_failed,
            "current_round": self.current_round,
            "rounds": self.rounds,
        }


def tournament_progress(*, tournament: Tournament) -> Progress:
    """How far a tournament is: its tables by status. The total counts the tables of the
    rounds still to seat, estimated from the tables of the current round."""
    counts = Table.objects.filter(tournament=tournament).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status=Table.Status.DONE)),
        running=Count("pk", filter=Q(status=Table.Status.RUNNING)),
        pending=Count("pk", filter=Q(status=Table.Status.PENDING)),
        failed=Count("pk", filter=Q(status=Table.Status.FAILED)),
    )
    total = counts["total"]
    seated_rounds = tournament.current_round
    if seated_rounds and tournament.status == Tournament.Status.RUNNING:
        per_round = Table.objects.filter(tournament=tournament, round__number=seated_rounds).count()
        total += per_round * max(0, tournament.rounds - seated_rounds)
    return Progress(
        tables_total=total,
        tables_done=counts["done"],
        tables_running=counts["running"],
        tables_pending=counts["pending"],
        tables_failed=counts["failed"],
        current_round=tournament.current_round,
        rounds=tournament.rounds,
    )


def round_tables(*, round: Round) -> QuerySet[Table]:
    return (
        Table.objects.filter(round=round)
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=Seat.objects.select_related("entry__version__bot")
                .defer("entry__version__content", "log")
                .order_by("position"),
            )
        )
        .order_by("number")
    )


def tournament_rounds(*, tournament: Tournament) -> QuerySet[Round]:
    return Round.objects.filter(tournament=tournament).order_by("number")


def entry_tables(*, entry: Entry) -> QuerySet[Table]:
    return (
        Table.objects.filter(seats__entry=entry)
        .select_related("round")
        .order_by("round__number", "number")
        .distinct()
    )


# ---------------------------------------------------------------------------------------------
# Tables, deals and replays
# ---------------------------------------------------------------------------------------------


def table_log(*, table: Table) -> dict[str, JSON]:
    """The complete replay log of a recorded table (games.log format v1 with the judge's
    times, faults and seat summary), rebuilt from its rows."""
    if table.result is None:
        raise ValueError(f"{table} has no recorded result")
    header = dict(table.result.get("replay_header", {}))
    header["deals"] = [deal.log for deal in Deal.objects.filter(table=table).order_by("index")]
    return header


def deal_replay(*, deal: Deal) -> dict[str, JSON]:
    """A one-deal replay: the table's header (game, preset, options, seats) and this deal,
    with its tricks, for a viewer."""
    table = deal.table
    header = dict((table.result or {}).get("replay_header", {}))
    for key in ("totals", "scores", "places"):
        header.pop(key, None)
    header["deals"] = [deal.log]
    header["tricks"] = [
        {"leader": t.leader, "cards": t.cards, "winner": t.winner, "points": t.points}
        for t in deal.tricks.order_by("number")
    ]
    header["seats"] = [
        {
            "position": seat.position,
            "entry": seat.entry_id,
            "bot": seat_label(seat=seat),
            "house": seat.is_house,
            "substitute": seat.substitute,
        }
        for seat in table.seats.select_related("entry__version__bot")
        .defer("entry__version__content", "log")
        .order_by("position")
    ]
    return header


def seat_label(*, seat: Seat) -> str:
    if seat.entry is not None and not seat.substitute:
        return seat.entry.version.label
    if seat.entry is not None:
        return f"house:{seat.house_bot} for {seat.entry.version.label}"
    return f"house:{seat.house_bot}"


def table_seats(*, table: Table) -> QuerySet[Seat]:
    return (
        table.seats.select_related("entry__version__bot", "entry__user")
        .defer("entry__version__content")
        .order_by("position")
    )


# ---------------------------------------------------------------------------------------------
# Bots and ratings
# ---------------------------------------------------------------------------------------------


def bot_versions(*, bot: Bot) -> QuerySet[BotVersion]:
    return bot.versions.order_by("-number").defer("content")


def ready_versions(*, game: str | None = None) -> QuerySet[BotVersion]:
    qs = BotVersion.objects.filter(status=BotVersion.Status.READY).select_related("bot")
    if game:
        qs = qs.filter(bot__game=game)
    return qs.defer("content")


def rating_leaderboard(*, family: str) -> QuerySet[Rating]:
    return Rating.objects.filter(family=family).select_related("bot__owner").order_by("-ordinal")


def rating_history(*, bot: Bot, family: str) -> QuerySet[RatingHistory]:
    return RatingHistory.objects.filter(rating__bot=bot, rating__family=family).order_by("pk")


def fault_counts(*, tournament: Tournament) -> dict[int, int]:
    """Faults per entry over the tables of a tournament whose results may be shown."""
    counts: dict[int, int] = defaultdict(int)
    for seat in Seat.objects.filter(
        visibility.tables_shown_q(prefix="table__"),
        table__tournament=tournament,
        entry__isnull=False,
    ):
        if seat.entry_id is not None:
            counts[seat.entry_id] += seat.faults
    return dict(counts)


# --- used by the API ---------------------------------------------------------------------------
# Reads the REST API (api/views.py) needs, each with the joins that keep its query count
# constant whatever the number of rows.


def bot_list(*, owner_id: int) -> QuerySet[Bot]:
    """The bots of the user ``owner_id``, by name."""
    return Bot.objects.filter(owner_id=owner_id).select_related("owner").order_by("name", "pk")


def bot_version_content(*, version: BotVersion) -> bytes:
    """The uploaded file of a version, as uploaded."""
    return bytes(BotVersion.objects.values_list("content", flat=True).get(pk=version.pk))


def bot_rating_history(*, bot: Bot, family: str | None = None) -> QuerySet[RatingHistory]:
    """A bot's rating after each rated table, oldest first (every family unless one is named)."""
    qs = RatingHistory.objects.filter(rating__bot=bot).select_related("rating")
    if family is not None:
        qs = qs.filter(rating__family=family)
    return qs.order_by("created_at", "pk")


def tournament_entries(*, tournament: Tournament) -> QuerySet[Entry]:
    return (
        Entry.objects.filter(tournament=tournament)
        .select_related("version__bot", "user")
        .defer("version__content")
        .order_by("pk")
    )


def tournament_tables(
    *, tournament: Tournament, round_number: int | None = None
) -> QuerySet[Table]:
    """The tables of a tournament (of one round if given) with their seats and bots."""
    qs = Table.objects.filter(tournament=tournament)
    if round_number is not None:
        qs = qs.filter(round__number=round_number)
    return (
        qs.select_related("round", "tournament")
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=Seat.objects.select_related("entry__version__bot")
                .defer("entry__version__content", "log")
                .order_by("position"),
            )
        )
        .order_by("round__number", "number")
    )


def table_get(*, table_id: int) -> Table:
    """A table with its tournament, round, seats and faults (DoesNotExist if there is none)."""
    return (
        Table.objects.select_related("tournament", "round")
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=Seat.objects.select_related("entry__version__bot")
                .defer("entry__version__content", "log")
                .order_by("position"),
            ),
            Prefetch("fault_set", queryset=Fault.objects.order_by("pk")),
        )
        .get(pk=table_id)
    )


def table_deal_points(*, table: Table) -> list[dict[str, object]]:
    """Each deal of a table: id, index, points, decisions and faults (no log)."""
    rows = (
        Deal.objects.filter(table=table)
        .order_by("index")
        .values("id", "index", "points", "decisions", "faults")
    )
    return [dict(row) for row in rows]


def deal_get(*, deal_id: int) -> Deal:
    """A deal with its table, round and tournament (DoesNotExist if there is none); of the
    tournament, only what says whether the deal may be shown and what it was played by; of
    the table's result, only the replay header (``deal.replay_header``: game, preset, every
    option), not the judge's whole summary."""
    return (
        Deal.objects.select_related("table__tournament", "table__round")
        .annotate(replay_header=KeyTransform("replay_header", "table__result"))
        .only(
            *(f.name for f in Deal._meta.concrete_fields),
            "table__status",
            "table__number",
            "table__round__number",
            "table__round__status",
            "table__tournament__status",
            "table__tournament__duplicate",
            "table__tournament__organiser_id",
            "table__tournament__game",
            "table__tournament__preset",
        )
        .get(pk=deal_id)
    )


def deal_replay_rows(*, deal: Deal) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """The tricks of a deal and the seats of its table, as plain rows: what a replay shows
    beside the deal's own log (no bot code, no model instances)."""
    tricks = [
        dict(row)
        for row in Trick.objects.filter(deal_id=deal.pk)
        .order_by("number")
        .values("number", "leader", "cards", "winner", "points")
    ]
    seats = [
        dict(row)
        for row in Seat.objects.filter(table_id=deal.table_id)
        .order_by("position")
        .values(*_REPLAY_SEAT_FIELDS)
    ]
    return tricks, seats


def standings_version(*, tournament: Tournament) -> str:
    """A key that changes whenever the standings of ``tournament`` may change: ``"final"``
    once it is finished or cancelled (they never change again); before, a key that moves
    with each recorded table and each entry, withdrawal or disqualification."""
    if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        return "final"
    tables = Table.objects.filter(tournament=tournament, status=Table.Status.DONE).aggregate(
        n=Count("pk"), last=Max("finished_at")
    )
    entries = Entry.objects.filter(tournament=tournament).aggregate(
        n=Count("pk"), flagged=Count("pk", filter=Q(flagged_at__isnull=False))
    )
    last = tables["last"].isoformat() if tables["last"] is not None else "-"
    return f"{tournament.status}:{tables['n']}:{last}:{entries['n']}:{entries['flagged']}"


# --- replay documents --------------------------------------------------------------------------
# A recorded deal never changes: its replay is rendered once (when its table is recorded) and
# kept as JSON text in DealReplay; the API sends it as it is. Who may see it is still checked
# on every request (deal_replay_stored).


def _replay_seat_label(seat: dict[str, Any]) -> str:
    if seat["entry_id"] is None:
        return f"house:{seat['house_bot']}"
    label = f"{seat['entry__version__bot__name']} v{seat['entry__version__number']}"
    return f"house:{seat['house_bot']} for {label}" if seat["substitute"] else label


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
        "seats": [
            {
                "position": seat["position"],
                "entry": seat["entry_id"],
                "bot": _replay_seat_label(seat),
                "house": seat["entry_id"] is None,
                "substitute": seat["substitute"],
            }
            for seat in seats
        ],
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
    """The replay of each of ``deals`` as the API shows it (``api.serializers.
    DealReplaySerializer``: the table's replay header, the deal's log, its tricks, its seats,
    the decisions one per step), as compact JSON text, by deal id. Three queries, whatever the
    number of deals. Says nothing about who may see them."""
    rows = list(
        deals.annotate(replay_header=KeyTransform("replay_header", "table__result"))
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
SELECT t.status, r.status, tn.status, tn.duplicate, dr.document
FROM {Deal._meta.db_table} d
JOIN {Table._meta.db_table} t ON t.id = d.table_id
JOIN {Round._meta.db_table} r ON r.id = t.round_id
JOIN {Tournament._meta.db_table} tn ON tn.id = t.tournament_id
LEFT JOIN {DealReplay._meta.db_table} dr ON dr.deal_id = d.id
WHERE d.id = %s
"""
# On PostgreSQL the query is prepared once per connection: planning its four joins cost the
# server several times what running it does (about 0.4 against 0.07 ms).
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
    """Whether the deal ``deal_id`` may be shown to anyone (:func:`visibility.play_shown`:
    its table finished; in duplicate play, its round; never in a draft) and its stored
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
    table_status, round_status, tournament_status, duplicate, document = row
    visible = visibility.play_shown(
        table_status=table_status,
        round_status=round_status,
        tournament_status=tournament_status,
        duplicate=bool(duplicate),
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
