"""The pieces every page shares: pagination, what the viewer may see, the games in words,
progress."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, F, Q, QuerySet
from django.http import Http404

import games
from tournaments import selectors, visibility
from tournaments.models import (
    Table,
    Tournament,
)

PAGE_SIZE = 25
HOME_LIST_SIZE = 5
LEADERBOARD_SIZE = 5
HEAD_TO_HEAD_SIZE = 10
# How long the rendering of a finished tournament's page is kept (templates' {% cache %}).
FINAL_PAGE_SECONDS = 24 * 3600
# How long the rendering of a running tournament's live part is kept, under its version (which
# moves with every change): only bounds the memory of versions gone by.
LIVE_PART_SECONDS = 120


def paginate(items: QuerySet[Any] | Sequence[Any], page: str | int | None, size: int) -> Page:
    """One page of ``items``: the last page for a number past the end, the first for junk
    (a permalink to page 9 of a list that shrank still shows something)."""
    return Paginator(items, size).get_page(page)


def visible_tournaments(*, user: Any) -> QuerySet[Tournament]:
    """The tournaments ``user`` may see on the site: every one but drafts, which only their
    organiser and staff see (as through the API), and practice runs, their author's (and
    staff's once over): :func:`tournaments.visibility.tournaments_shown_q`."""
    return Tournament.objects.filter(visibility.tournaments_shown_q(user=user))


def listed_tournaments(*, user: Any) -> QuerySet[Tournament]:
    """The tournaments the site's lists show ``user``: :func:`visible_tournaments` but
    practice runs, which no list counts (:func:`tournaments.visibility.tournaments_listed_q`)."""
    return Tournament.objects.filter(visibility.tournaments_listed_q(user=user))


def table_results_visible(*, table: Table, user: Any = None) -> bool:
    """Whether a table's cards, results and log may be shown now to ``user`` (the same for
    everyone, staff too, but a practice run's, which only its author and staff see):
    :func:`tournaments.visibility.table_shown` decides."""
    return visibility.table_shown(user=user, table=table)


def tournament_or_404(tournament_id: int, user: Any) -> Tournament:
    """A tournament's page: a practice run has none (its page is the practice page)."""
    try:
        return listed_tournaments(user=user).select_related("organiser").get(pk=tournament_id)
    except Tournament.DoesNotExist:
        raise Http404("no such tournament") from None


@functools.cache
def catalogue() -> dict[str, dict[str, Any]]:
    return {str(game["name"]): game for game in games.catalogue()}


def game_title(name: str) -> str:
    game = catalogue().get(name)
    return str(game["title"]) if game else name


def game_choices() -> list[tuple[str, str]]:
    """(name, title) of every game, for the filters."""
    return [(name, str(game["title"])) for name, game in catalogue().items()]


@dataclasses.dataclass(frozen=True, slots=True)
class OptionLine:
    """One rule option of a tournament, in words."""

    name: str
    doc: str
    value: str
    changed: bool  # differs from the game's default


def option_value_words(value: object) -> str:
    """A rule option's value as the pages write it: "On" or "Off" for a yes-or-no option.

    >>> option_value_words(False), option_value_words(50)
    ('Off', '50')
    """
    if value is True:
        return "On"
    if value is False:
        return "Off"
    return str(value)


def rules_in_words(*, game: str, preset: str, options: dict[str, Any]) -> list[OptionLine]:
    """Every option of the game as the tournament plays it: the preset's values with the
    tournament's overrides, each with the engine's description."""
    entry = catalogue().get(game)
    if entry is None:
        return []
    preset_values: dict[str, Any] = {}
    for p in entry["presets"]:
        if p["name"] == preset:
            preset_values = dict(p["values"])
    lines = []
    for info in entry["options"]:
        name = str(info["name"])
        value = options.get(name, preset_values.get(name, info["default"]))
        lines.append(
            OptionLine(
                name=str(info["label"]),
                doc=str(info["doc"]),
                value=option_value_words(value),
                changed=value != info["default"],
            )
        )
    return lines


def preset_doc(*, game: str, preset: str) -> str:
    entry = catalogue().get(game)
    for p in entry["presets"] if entry else ():
        if p["name"] == preset:
            return str(p["doc"])
    return ""


@dataclasses.dataclass(frozen=True, slots=True)
class ProgressView:
    """A tournament's progress as the pages show it."""

    status: str
    status_label: str
    current_round: int
    rounds: int
    tables_total: int
    tables_done: int
    tables_running: int
    tables_pending: int
    tables_failed: int

    @property
    def percent(self) -> int:
        return int(100 * self.tables_done / self.tables_total) if self.tables_total else 0

    @property
    def running(self) -> bool:
        return self.status == Tournament.Status.RUNNING

    @property
    def needs_attention(self) -> bool:
        """A table failed: the tournament waits for an operator to re-run it."""
        return self.running and self.tables_failed > 0

    @property
    def live(self) -> bool:
        """Whether the page keeps asking for news: while the tournament runs, and while it is
        open (to see it start)."""
        return self.status in (Tournament.Status.OPEN, Tournament.Status.RUNNING)


def _progress_view(tournament: Tournament, counts: dict[str, int], per_round: int) -> ProgressView:
    total = counts.get("total", 0)
    if tournament.status == Tournament.Status.RUNNING and tournament.current_round:
        total += per_round * max(0, tournament.rounds - tournament.current_round)
    return ProgressView(
        status=tournament.status,
        status_label=tournament.get_status_display(),
        current_round=tournament.current_round,
        rounds=tournament.rounds,
        tables_total=total,
        tables_done=counts.get("done", 0),
        tables_running=counts.get("running", 0),
        tables_pending=counts.get("pending", 0),
        tables_failed=counts.get("failed", 0),
    )


def progress_of(tournaments: Sequence[Tournament]) -> dict[int, ProgressView]:
    """The progress of each of ``tournaments``, in one query whatever their number."""
    if not tournaments:
        return {}
    rows = (
        Table.objects.filter(tournament__in=[t.pk for t in tournaments])
        .values("tournament_id")
        .annotate(
            total=Count("pk"),
            done=Count("pk", filter=Q(status=Table.Status.DONE)),
            running=Count("pk", filter=Q(status=Table.Status.RUNNING)),
            pending=Count("pk", filter=Q(status=Table.Status.PENDING)),
            failed=Count("pk", filter=Q(status=Table.Status.FAILED)),
            # Tables of the round being played: the rounds still to seat will have as many.
            current=Count("pk", filter=Q(round__number=F("tournament__current_round"))),
        )
        .order_by()
    )
    counts = {row["tournament_id"]: row for row in rows}
    return {
        t.pk: _progress_view(t, counts.get(t.pk, {}), counts.get(t.pk, {}).get("current", 0))
        for t in tournaments
    }


@dataclasses.dataclass(frozen=True, slots=True)
class ScoreWords:
    """What a table's "Score" and "Points" columns mean, in words, for their headers' titles
    and the legend under them."""

    score: str
    points: str


def score_words(tournament: Tournament) -> ScoreWords:
    """The words for a tournament's tables' Score (the game's card points) and Points (the
    place points, or matchpoints in duplicate play)."""
    better = "lower" if selectors.tournament_lower_is_better(tournament=tournament) else "higher"
    score = (
        "the card points the seat made over the table's deals, as the game counts them "
        f"({better} is better)"
    )
    if tournament.duplicate:
        points = (
            "the matchpoints the seat earned against the seats that held the same cards "
            "at the round's other tables"
        )
    else:
        places = selectors.tournament_place_points(tournament=tournament)
        ladder = ", ".join(f"{_ordinal(k)} {p}" for k, p in enumerate(places, start=1))
        points = (
            f"the place points its place at the table earned ({ladder}): the standings add them up"
        )
    return ScoreWords(score=score, points=points)


def _ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th...

    >>> [_ordinal(k) for k in (1, 2, 3, 4, 11, 12, 21)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '21st']
    """
    suffix = (
        "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    )
    return f"{number}{suffix}"
