"""Reads of tournaments: lists, entries, rounds and tables, progress, outcomes and standings."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction
from typing import Any

from django.db.models import Count, Max, Prefetch, Q, QuerySet

import games
from games.base import JSON
from tournaments import scoring, visibility
from tournaments.models import (
    Entry,
    Round,
    Seat,
    Table,
    Tournament,
    TournamentSummary,
)


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
        "table_id",
        "table__round__number",
        "table__number",
        "entry_id",
        "score",
        "place",
        "points",
        "replaced",
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
                replaced=tuple(bool(s["replaced"]) for s in table_seats),
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
    replaced: int = 0  # tables at which the judge replaced its bot (it forfeited their rest)
    head_to_head_decides: bool = False

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
            "replaced": self.replaced,
            "head_to_head_decides": self.head_to_head_decides,
        }


def _standing_lines(tournament: Tournament, entries: list[Entry]) -> list[scoring.Standing]:
    return scoring.standings(
        entries=[e.pk for e in entries],
        outcomes=tournament_outcomes(tournament=tournament),
        seed=tournament.seed_int,
        lower_is_better=tournament_lower_is_better(tournament=tournament),
        unranked=[e.pk for e in entries if not e.active],
    )


def tournament_standing_lines(*, tournament: Tournament) -> list[scoring.Standing]:
    """The standings of ``tournament`` computed from its recorded tables now (never the stored
    ones): what :func:`~tournaments.services.tournament_summary_store` keeps. Two queries."""
    return _standing_lines(tournament, list(Entry.objects.filter(tournament=tournament)))


def standings_for_tournament(*, tournament: Tournament) -> list[StandingRow]:
    """The standings so far (final once the tournament is finished): points, then total
    score relative to the table averages, then head-to-head, then the seeded draw.
    Withdrawn and disqualified entries are listed last, without a rank. A finished
    tournament's are read from its stored summary (written when it finished, when nothing
    can change them any more): two queries; computed, three."""
    entries = {
        e.pk: e
        for e in Entry.objects.filter(tournament=tournament).select_related("version__bot", "user")
    }
    stored = (
        TournamentSummary.objects.filter(tournament_id=tournament.pk)
        .values_list("lines", flat=True)
        .first()
        if tournament.status == Tournament.Status.FINISHED
        else None
    )
    if stored is not None:  # final: computed once when the tournament finished
        lines = scoring.standings_from_json(stored)
    else:
        lines = _standing_lines(tournament, list(entries.values()))
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
            replaced=line.replaced,
            head_to_head_decides=line.head_to_head_decides,
        )
        for line in lines
    ]


#: The standings version of a finished or cancelled tournament: they never change again.
FINAL_VERSION = "final"


def standings_version(*, tournament: Tournament) -> str:
    """A key that changes whenever the standings of ``tournament`` may change: ``"final"``
    once it is finished or cancelled (they never change again); before, a key that moves
    with each table whose results are shown (what the standings count) and each entry,
    withdrawal or disqualification. Pages print it: it is made only of what anyone may see
    (a table of a duplicate round still playing is not in it, nor when it finished)."""
    if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        return FINAL_VERSION
    tables = Table.objects.filter(visibility.tables_shown_q(), tournament=tournament).aggregate(
        n=Count("pk"), last=Max("finished_at")
    )
    entries = Entry.objects.filter(tournament=tournament).aggregate(
        n=Count("pk"), flagged=Count("pk", filter=Q(flagged_at__isnull=False))
    )
    last = tables["last"].isoformat() if tables["last"] is not None else "-"
    return f"{tournament.status}:{tables['n']}:{last}:{entries['n']}:{entries['flagged']}"


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


def tournament_rounds(*, tournament: Tournament) -> QuerySet[Round]:
    return Round.objects.filter(tournament=tournament).order_by("number")


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
