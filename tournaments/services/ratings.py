"""Ratings: each finished tournament's tables update the bots' ratings of its preset family."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.utils import timezone

from tournaments import ratings
from tournaments.models import (
    Rating,
    RatingHistory,
    Seat,
    Table,
    Tournament,
)
from tournaments.services._sql import BULK_BATCH

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


def ratings_update(*, tournament: Tournament) -> int:
    """Update the ratings of the bots of a finished tournament, table by table in order, from
    each table's places among its rated seats (house and substitute seats are not rated; a bot
    entered twice at one table counts once, at its better place). Returns the tables rated."""
    family = ratings.preset_family(tournament.game, tournament.preset)
    tables = list(
        Table.objects.filter(tournament=tournament, status=Table.Status.DONE)
        .select_related("round")
        .order_by("round__number", "number")
    )
    seats_by_table: dict[int, list[Seat]] = {t.pk: [] for t in tables}
    for seat in Seat.objects.filter(
        table__in=tables, entry__isnull=False, substitute=False, place__isnull=False
    ).select_related("entry__version"):
        seats_by_table[seat.table_id].append(seat)
    bot_ids = sorted(
        {s.entry.version.bot_id for seats in seats_by_table.values() for s in seats if s.entry}
    )
    # The bots rated for the first time start from the default rating (in one query, not a
    # get_or_create per bot; a rating made meanwhile by another tournament is kept).
    rated_before = set(
        Rating.objects.filter(bot_id__in=bot_ids, family=family).values_list("bot_id", flat=True)
    )
    Rating.objects.bulk_create(
        [
            Rating(
                bot_id=bot_id,
                family=family,
                mu=ratings.DEFAULT_MU,
                sigma=ratings.DEFAULT_SIGMA,
                ordinal=ratings.Skill().ordinal,
            )
            for bot_id in bot_ids
            if bot_id not in rated_before
        ],
        ignore_conflicts=True,
    )
    current = {
        r.bot_id: r
        for r in Rating.objects.select_for_update()
        .filter(bot_id__in=bot_ids, family=family)
        .order_by("pk")
    }
    history: list[RatingHistory] = []
    rated = 0
    now = timezone.now()
    for table in tables:
        best: dict[int, int] = {}
        for seat in seats_by_table[table.pk]:
            assert seat.entry is not None
            assert seat.place is not None
            bot_id = seat.entry.version.bot_id
            best[bot_id] = min(best.get(bot_id, seat.place), seat.place)
        if len(best) < 2:
            continue
        order = sorted(best)
        before = [ratings.Skill(current[b].mu, current[b].sigma) for b in order]
        after = ratings.rate_table(before, [best[b] for b in order])
        for bot_id, skill in zip(order, after, strict=True):
            rating = current[bot_id]
            rating.mu, rating.sigma, rating.ordinal = skill.mu, skill.sigma, skill.ordinal
            rating.tables += 1
            rating.updated_at = now
            history.append(
                RatingHistory(
                    rating=rating,
                    tournament=tournament,
                    table=table,
                    mu=skill.mu,
                    sigma=skill.sigma,
                    ordinal=skill.ordinal,
                    place=best[bot_id],
                    created_at=now,
                )
            )
        rated += 1
    Rating.objects.bulk_update(current.values(), ["mu", "sigma", "ordinal", "tables", "updated_at"])
    RatingHistory.objects.bulk_create(history, batch_size=BULK_BATCH)
    return rated
