"""Recounting the tables recorded before the rule that a fault never pays (judge.counting):
their replaced seats get the deal they were replaced from, their scores, places and points
as they count; the tournaments concerned their matchpoints, final standings, summaries and
audits again, and the ratings of their families are rebuilt."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.conf import settings
from django.core.cache import cache, caches
from django.db import transaction

from judge.counting import counted_table
from tournaments import judging, ratings, scoring, selectors
from tournaments.models import (
    Deal,
    Entry,
    Fault,
    Rating,
    Round,
    Seat,
    Table,
    Tournament,
)
from tournaments.services._sql import as_points
from tournaments.services.lifecycle import tournament_summary_store
from tournaments.services.ratings import ratings_update
from tournaments.services.recording import round_matchpoints_store


@dataclasses.dataclass(frozen=True, slots=True)
class Recount:
    """What :func:`replaced_seats_recount` changed."""

    tables: int
    tournaments: int
    families: tuple[str, ...]


def replaced_seats_recount() -> Recount:
    """Recount every table with a replaced seat that has no ``replaced_deal`` (recorded
    before the rule), then what depends on them. Idempotent: a second run finds nothing."""
    pending = (
        Seat.objects.filter(replaced=True, replaced_deal__isnull=True, table__status="done")
        .values_list("table__tournament_id", flat=True)
        .distinct()
    )
    tables = 0
    families: set[str] = set()
    tournament_ids = sorted(set(pending))
    for tournament_id in tournament_ids:
        with transaction.atomic():
            tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
            tables += _recount_tournament(tournament)
            if tournament.status == Tournament.Status.FINISHED and not tournament.practice:
                families.add(ratings.preset_family(tournament.game, tournament.preset))
    for family in sorted(families):
        ratings_rebuild(family=family)
    return Recount(tables=tables, tournaments=len(tournament_ids), families=tuple(sorted(families)))


def _recount_tournament(tournament: Tournament) -> int:
    """Recount a tournament's tables recorded before the rule and what depends on them;
    returns the tables recounted."""
    tables = list(
        Table.objects.filter(
            tournament=tournament,
            status=Table.Status.DONE,
            seats__replaced=True,
            seats__replaced_deal__isnull=True,
        )
        .distinct()
        .order_by("pk")
    )
    for table in tables:
        _recount_table(table, tournament)
    if tournament.duplicate:
        for round_ in Round.objects.filter(
            pk__in={t.round_id for t in tables}, status=Round.Status.DONE
        ):
            round_matchpoints_store(round_=round_, tournament=tournament)
    if tournament.status == Tournament.Status.FINISHED:
        entries = []
        for line in selectors.standings_for_tournament(tournament=tournament):
            line.entry.final_rank = line.rank
            line.entry.final_points = as_points(line.points)
            entries.append(line.entry)
        Entry.objects.bulk_update(entries, ["final_rank", "final_points"])
        if not tournament.practice:
            summary = tournament_summary_store(tournament=tournament)
            summary.audit = None  # made again: `manage.py tournament_summaries --audits`
            summary.audited_at = None
            summary.save(update_fields=["audit", "audited_at"])
    pk = tournament.pk
    kept = (
        "tapis:statistics:{}:final",
        "tapis:crosstable:{}:final",
        "pages:audit:tournament:v2:{}",
    )
    cache.delete_many([key.format(pk) for key in kept])
    if "api" in settings.CACHES:  # the API's shared caches (api/caching.py); else per process
        caches["api"].delete(f"api:v1:standings:{pk}:final")
    return len(tables)


def _recount_table(table: Table, tournament: Tournament) -> None:
    """Give a table's replaced seats the deal they were replaced from and count its seats'
    scores, places and points (place points; matchpoints are the round's) as the rule says."""
    seats = list(Seat.objects.filter(table=table).order_by("position"))
    points = list(
        Deal.objects.filter(table=table).order_by("index").values_list("points", flat=True)
    )
    summary: dict[str, Any] = table.result if isinstance(table.result, dict) else {}
    for seat in seats:
        if seat.replaced and seat.replaced_deal is None:
            seat.replaced_deal = _replaced_from(table, seat, summary)
    engine = judging.tournament_engine(tournament=tournament, deals=max(len(points), 1))
    counted = counted_table(engine, points, [s.replaced_deal for s in seats])
    place_points = scoring.table_points(
        counted.places, selectors.tournament_place_points(tournament=tournament)
    )
    for seat in seats:
        seat.total = counted.totals[seat.position]
        seat.score = counted.scores[seat.position]
        seat.place = counted.places[seat.position]
        if not tournament.duplicate:
            seat.points = as_points(place_points[seat.position])
    Seat.objects.bulk_update(seats, ["replaced_deal", "total", "score", "place", "points"])
    if summary:
        summary.update(
            totals=counted.totals,
            scores=counted.scores,
            places=counted.places,
            counted_points=counted.points,
        )
        for line in summary.get("seats") or []:
            if isinstance(line, dict) and isinstance(line.get("seat"), int):
                position = line["seat"]
                line.update(
                    total=counted.totals[position],
                    score=counted.scores[position],
                    place=counted.places[position],
                    replaced_deal=seats[position].replaced_deal,
                )
        table.result = summary
        table.save(update_fields=["result"])


def _replaced_from(table: Table, seat: Seat, summary: dict[str, Any]) -> int:
    """The deal from which a seat recorded before the rule was replaced: the judge's
    ``replaced_at`` in the table's summary, else the deal of the seat's last fault."""
    for line in summary.get("seats") or []:
        if isinstance(line, dict) and line.get("seat") == seat.position:
            replaced_at = line.get("replaced_at")
            if isinstance(replaced_at, dict):
                deal = replaced_at.get("deal")
                return deal if isinstance(deal, int) else 0
    last = (
        Fault.objects.filter(table=table, seat=seat.position)
        .order_by("-pk")
        .values_list("deal_index", flat=True)
        .first()
    )
    return last or 0


def ratings_rebuild(*, family: str) -> int:
    """Rate a family again from the start: every finished tournament of it, in the order they
    finished, from the recorded places. Returns the tables rated."""
    with transaction.atomic():
        Rating.objects.filter(family=family).delete()  # and their history
        rated = 0
        for tournament in Tournament.objects.filter(
            status=Tournament.Status.FINISHED, practice=False
        ).order_by("finished_at", "pk"):
            if ratings.preset_family(tournament.game, tournament.preset) == family:
                rated += ratings_update(tournament=tournament)
    return rated
