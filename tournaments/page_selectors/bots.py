"""A bot's page and the rankings."""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page
from django.db.models import Avg, Count, Q
from django.http import Http404

from tournaments import selectors, visibility
from tournaments.models import (
    Bot,
    BotVersion,
    Entry,
    Rating,
    RatingHistory,
    Seat,
    Tournament,
)
from tournaments.page_selectors.common import (
    HEAD_TO_HEAD_SIZE,
    PAGE_SIZE,
    game_title,
    listed_tournaments,
    paginate,
)
from tournaments.page_selectors.home import (
    split_family,
)


@dataclasses.dataclass(frozen=True, slots=True)
class EntryLine:
    entry: Entry
    tournament: Tournament
    version: int
    rank: int | None
    entries: int
    replaced: int = 0  # tables at which the judge replaced it


@dataclasses.dataclass(frozen=True, slots=True)
class ChartPoint:
    x: float
    y: float
    ordinal: float
    label: str


@dataclasses.dataclass(frozen=True, slots=True)
class RatingChart:
    """A rating's history drawn as an SVG polyline (coordinates in the chart's viewBox)."""

    family: str
    rating: Rating
    points: list[ChartPoint]
    y_ticks: list[tuple[float, str]]
    width: int = 600  # CHART_WIDTH
    height: int = 220  # CHART_HEIGHT
    tables: int = 0  # the rated tables (the points drawn are at most CHART_POINTS of them)

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclasses.dataclass(frozen=True, slots=True)
class OpponentLine:
    bot_id: int
    name: str
    owner: str
    tables: int
    ahead: int
    behind: int


@dataclasses.dataclass(frozen=True, slots=True)
class BotPage:
    bot: Bot
    game_title: str
    versions: list[BotVersion]
    entries: Page
    entry_lines: list[EntryLine]
    charts: list[RatingChart]
    tables: int
    average_place: float | None
    opponents: list[OpponentLine]
    versions_page: Page | None = None  # the page of versions shown (newest first)


CHART_WIDTH, CHART_HEIGHT = 600, 220
#: The most points a rating chart draws: a bot rated after thousands of tables is drawn from
#: that many of them, evenly spread, the first and the last always (the chart is 600 wide).
CHART_POINTS = 300


def evenly(count: int, most: int) -> list[int]:
    """At most ``most`` of the indices ``0 .. count - 1``, evenly spread, the first and the
    last included.

    >>> evenly(5, 10), evenly(10, 4)
    ([0, 1, 2, 3, 4], [0, 3, 6, 9])
    """
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


CHART_MARGIN = (40, 10, 10, 20)  # left, top, right, bottom


def rating_chart(*, rating: Rating, history: Sequence[RatingHistory]) -> RatingChart:
    """The ordinal after each rated table, scaled into the chart (oldest left): at most
    :data:`CHART_POINTS` of them (the range of the scale is every table's)."""
    width, height = CHART_WIDTH, CHART_HEIGHT
    left, top, right, bottom = CHART_MARGIN
    tables = len(history)
    values = [h.ordinal for h in history]
    if not values:
        return RatingChart(family=rating.family, rating=rating, points=[], y_ticks=[])
    low, high = min(values), max(values)
    if math.isclose(low, high):
        low, high = low - 1.0, high + 1.0
    span = high - low
    n = len(values)

    def y_of(value: float) -> float:
        return top + (high - value) / span * (height - top - bottom)

    points = [
        ChartPoint(
            x=left + (i / (n - 1) if n > 1 else 0.5) * (width - left - right),
            y=y_of(history[i].ordinal),
            ordinal=history[i].ordinal,
            label=f"{history[i].ordinal:.2f} after table {i + 1} (place {history[i].place})",
        )
        for i in evenly(n, CHART_POINTS)
    ]
    ticks = [(y_of(v), f"{v:.1f}") for v in (high, (high + low) / 2, low)]
    return RatingChart(
        family=rating.family, rating=rating, points=points, y_ticks=ticks, tables=tables
    )


def bot_page(
    *,
    bot_id: int,
    user: Any,
    page: str | int | None = None,
    versions_page: str | int | None = None,
) -> BotPage:
    """A bot's public profile: its author and game, its versions (no code), its tournaments
    with its places, its rating history per family as a chart, its average place over every
    table it played, and its record against the bots it met most."""
    try:
        bot = Bot.objects.select_related("owner").get(pk=bot_id)
    except Bot.DoesNotExist:
        raise Http404("no such bot") from None
    # A page of its versions, newest first (an author may upload hundreds).
    versions_of = paginate(
        BotVersion.objects.filter(bot=bot).defer("content", "report").order_by("-number"),
        versions_page,
        PAGE_SIZE,
    )
    versions = list(versions_of.object_list)
    entries_qs = (
        Entry.objects.filter(version__bot=bot, tournament__in=listed_tournaments(user=user))
        .select_related("tournament", "version")
        .defer("version__content", "version__report", "tournament__options")
        .annotate(
            entry_count=Count("tournament__entries", distinct=True),
            # The tables shown at which the judge replaced it (it forfeited their rest).
            replaced_tables=Count(
                "seats",
                filter=Q(visibility.tables_shown_q(prefix="seats__table__"), seats__replaced=True),
                distinct=True,
            ),
        )
        .order_by("-tournament__created_at", "-pk")
    )
    entries = paginate(entries_qs, page, PAGE_SIZE)
    entry_lines = [
        EntryLine(
            entry=e,
            tournament=e.tournament,
            version=e.version.number,
            rank=e.final_rank,
            entries=e.entry_count,  # type: ignore[attr-defined]
            replaced=e.replaced_tables,  # type: ignore[attr-defined]
        )
        for e in entries.object_list
    ]
    ratings_rows = list(
        selectors.ratings_with_replaced(Rating.objects.filter(bot=bot)).order_by("family")
    )
    history: dict[int, list[RatingHistory]] = defaultdict(list)
    for h in RatingHistory.objects.filter(rating__bot=bot).order_by("created_at", "pk"):
        history[h.rating_id].append(h)
    charts = [rating_chart(rating=r, history=history[r.pk]) for r in ratings_rows]
    # Every seat of this bot at a recorded table whose results may be shown, and the other
    # seats of those tables: the average place and the record against each opponent.
    own = Seat.objects.filter(
        visibility.tables_shown_q(prefix="table__"),
        entry__version__bot=bot,
        place__isnull=False,
        table__tournament__in=listed_tournaments(user=user),
    )
    summary = own.aggregate(tables=Count("pk"), average=Avg("place"))
    own_places = dict(own.values_list("table_id", "place"))
    record: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    names: dict[int, tuple[str, str]] = {}
    for table_id, other_bot, name, owner, place in (
        # The ids as a list (a bot plays some hundreds of tables): PostgreSQL plans the
        # subquery form as a join over every seat.
        Seat.objects.filter(table_id__in=list(own_places), entry__isnull=False)
        .exclude(entry__version__bot=bot)
        .values_list(
            "table_id",
            "entry__version__bot_id",
            "entry__version__bot__name",
            "entry__version__bot__owner__username",
            "place",
        )
    ):
        mine = own_places.get(table_id)
        if mine is None or place is None:
            continue
        line = record[other_bot]
        line[0] += 1
        line[1] += mine < place
        line[2] += mine > place
        names[other_bot] = (name, owner)
    frequent = sorted(record.items(), key=lambda item: (-item[1][0], names[item[0]][0]))
    opponents = [
        OpponentLine(
            bot_id=other,
            name=names[other][0],
            owner=names[other][1],
            tables=tables,
            ahead=ahead,
            behind=behind,
        )
        for other, (tables, ahead, behind) in frequent[:HEAD_TO_HEAD_SIZE]
    ]
    return BotPage(
        bot=bot,
        game_title=game_title(bot.game),
        versions=versions,
        entries=entries,
        entry_lines=entry_lines,
        charts=charts,
        tables=summary["tables"],
        average_place=summary["average"],
        opponents=opponents,
        versions_page=versions_of,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class FamilyChoice:
    family: str
    game: str
    game_title: str
    preset: str


@dataclasses.dataclass(frozen=True, slots=True)
class RankingsPage:
    families: list[FamilyChoice]
    family: FamilyChoice | None
    page: Page | None
    first_rank: int

    @property
    def query(self) -> str:
        return urlencode({"family": self.family.family}) if self.family else ""


def rankings_page(*, family: str = "", page: str | int | None = None) -> RankingsPage:
    """The leaderboard of one game and preset family (the one with the most rated bots if none
    or an unknown one is asked for), a page at a time, best first."""
    choices, sizes = [], {}
    counts = Rating.objects.values_list("family").annotate(n=Count("pk")).order_by("family")
    for name, size in counts:
        game, preset = split_family(name)
        choices.append(
            FamilyChoice(family=name, game=game, game_title=game_title(game), preset=preset)
        )
        sizes[name] = size
    largest = max(choices, key=lambda c: sizes[c.family], default=None)
    chosen = next((c for c in choices if c.family == family), largest)
    if chosen is None:
        return RankingsPage(families=[], family=None, page=None, first_rank=1)
    board = (
        selectors.ratings_with_replaced(Rating.objects.filter(family=chosen.family))
        .select_related("bot__owner")
        .order_by("-ordinal", "pk")
    )
    one_page = paginate(board, page, 50)
    return RankingsPage(
        families=choices,
        family=chosen,
        page=one_page,
        first_rank=one_page.start_index() if one_page.paginator.count else 1,
    )
