"""The home page."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from tournaments import selectors, visibility
from tournaments.models import (
    Deal,
    Entry,
    Rating,
    Table,
    Tournament,
)
from tournaments.page_selectors.common import (
    HOME_LIST_SIZE,
    LEADERBOARD_SIZE,
    ProgressView,
    game_title,
    listed_tournaments,
    progress_of,
)


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentCard:
    tournament: Tournament
    game_title: str
    entries: int
    progress: ProgressView | None = None
    winner: Entry | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Leaderboard:
    family: str
    game: str
    game_title: str
    preset: str
    rows: list[Rating]


@dataclasses.dataclass(frozen=True, slots=True)
class Showcase:
    """Where a newcomer starts: the last finished tournament and the first deal of its first
    table, to replay."""

    tournament: Tournament
    deal_id: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class HomePage:
    running: list[TournamentCard]
    open: list[TournamentCard]
    finished: list[TournamentCard]
    leaderboards: list[Leaderboard]
    showcase: Showcase | None


def entry_counts(tournaments: Sequence[Tournament]) -> dict[int, int]:
    """The number of entries of each of ``tournaments``, in one query (counted for these
    only: annotating the listing's query counted every tournament's before its LIMIT)."""
    rows = (
        Entry.objects.filter(tournament_id__in=[t.pk for t in tournaments])
        .values("tournament_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {row["tournament_id"]: row["n"] for row in rows}


def tournament_cards(
    tournaments: Sequence[Tournament],
    *,
    counts: dict[int, int],
    progress: dict[int, ProgressView] | None = None,
    winners: dict[int, Entry] | None = None,
) -> list[TournamentCard]:
    return [
        TournamentCard(
            tournament=t,
            game_title=game_title(t.game),
            entries=counts.get(t.pk, 0),
            progress=(progress or {}).get(t.pk),
            winner=(winners or {}).get(t.pk),
        )
        for t in tournaments
    ]


def winners_of(tournaments: Sequence[Tournament]) -> dict[int, Entry]:
    """The winner (final rank 1, the first of a tie) of each finished tournament."""
    finished = [t.pk for t in tournaments if t.status == Tournament.Status.FINISHED]
    if not finished:
        return {}
    winners: dict[int, Entry] = {}
    for entry in (
        Entry.objects.filter(tournament_id__in=finished, final_rank=1)
        # The tables at which the judge replaced its bot (marked beside the winner).
        .annotate(replaced_tables=Count("seats", filter=Q(seats__replaced=True)))
        .select_related("version__bot", "user")
        .defer("version__content")
        .order_by("tournament_id", "pk")
    ):
        winners.setdefault(entry.tournament_id, entry)
    return winners


def split_family(family: str) -> tuple[str, str]:
    game, _, preset = family.partition("/")
    return game, preset


def leaderboards(*, size: int = LEADERBOARD_SIZE) -> list[Leaderboard]:
    """The top ``size`` bots of every game and preset family, in two queries."""
    families = list(Rating.objects.values_list("family", flat=True).distinct().order_by("family"))
    if not families:
        return []
    ranked = (
        selectors.ratings_with_replaced(Rating.objects.filter(family__in=families))
        .annotate(
            rank=Window(
                RowNumber(), partition_by=[F("family")], order_by=[F("ordinal").desc(), F("pk")]
            )
        )
        .select_related("bot__owner")
        .order_by("family", "-ordinal", "pk")
    )
    by_family: dict[str, list[Rating]] = defaultdict(list)
    for rating in ranked:
        if rating.rank <= size:  # type: ignore[attr-defined]
            by_family[rating.family].append(rating)
    boards = []
    for family in families:
        game, preset = split_family(family)
        boards.append(
            Leaderboard(
                family=family,
                game=game,
                game_title=game_title(game),
                preset=preset,
                rows=by_family[family],
            )
        )
    return boards


def home_page(*, user: Any) -> HomePage:
    """Running tournaments with their progress, open ones, recently finished ones with their
    winners, and the leaderboard of every game and preset family."""
    base = listed_tournaments(user=user).select_related("organiser")
    running = list(base.filter(status=Tournament.Status.RUNNING).order_by("-started_at", "-pk"))
    opened = list(
        base.filter(status=Tournament.Status.OPEN).order_by("-created_at", "-pk")[:HOME_LIST_SIZE]
    )
    finished = list(
        base.filter(status=Tournament.Status.FINISHED).order_by("-finished_at", "-pk")[
            :HOME_LIST_SIZE
        ]
    )
    showcase = None
    if finished:
        first_table = (
            Table.objects.filter(visibility.tables_shown_q(), tournament=finished[0])
            .order_by("round__number", "number")
            .values("pk")[:1]
        )
        deal_id = (
            Deal.objects.filter(table_id__in=first_table)
            .order_by("index")
            .values_list("pk", flat=True)
            .first()
        )
        showcase = Showcase(tournament=finished[0], deal_id=deal_id)
    counts = entry_counts([*running, *opened, *finished])
    return HomePage(
        showcase=showcase,
        running=tournament_cards(running, counts=counts, progress=progress_of(running)),
        open=tournament_cards(opened, counts=counts),
        finished=tournament_cards(finished, counts=counts, winners=winners_of(finished)),
        leaderboards=leaderboards(),
    )
