"""Reads of the public site (tournaments/pages/): one function per page, returning plain values.

Each function hands its template everything it shows, with the joins that keep its query count
constant whatever the number of rows (tests/pages/test_page_queries.py counts them). What may be
shown (a draft, a table's cards and results, a log, a seed) is decided by
:mod:`tournaments.visibility`, the module the API asks too; nothing here decides it again.

These live apart from ``selectors.py`` for now; they will be folded into it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.db.models import Avg, Count, F, Max, Prefetch, Q, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import Http404

import games
from tournaments import formats, seeds, selectors, services, visibility
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    Entry,
    Fault,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
)

PAGE_SIZE = 25
HOME_LIST_SIZE = 5
LEADERBOARD_SIZE = 5
HEAD_TO_HEAD_SIZE = 10
# How long the rendering of a finished tournament's page is kept (templates' {% cache %}).
FINAL_PAGE_SECONDS = 24 * 3600


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------


def paginate(items: QuerySet[Any] | Sequence[Any], page: str | int | None, size: int) -> Page:
    """One page of ``items``: the last page for a number past the end, the first for junk
    (a permalink to page 9 of a list that shrank still shows something)."""
    return Paginator(items, size).get_page(page)


def visible_tournaments(*, user: Any) -> QuerySet[Tournament]:
    """The tournaments ``user`` may see on the site: every one but drafts, which only their
    organiser and staff see (as through the API)."""
    return Tournament.objects.filter(visibility.tournaments_shown_q(user=user))


def table_results_visible(*, table: Table) -> bool:
    """Whether a table's cards, results and log may be shown now (to anyone, staff too):
    :func:`tournaments.visibility.table_shown` decides."""
    return visibility.table_shown(user=None, table=table)


def _tournament_or_404(tournament_id: int, user: Any) -> Tournament:
    try:
        return visible_tournaments(user=user).select_related("organiser").get(pk=tournament_id)
    except Tournament.DoesNotExist:
        raise Http404("no such tournament") from None


@functools.cache
def _catalogue() -> dict[str, dict[str, Any]]:
    return {str(game["name"]): game for game in games.catalogue()}


def game_title(name: str) -> str:
    game = _catalogue().get(name)
    return str(game["title"]) if game else name


def game_choices() -> list[tuple[str, str]]:
    """(name, title) of every game, for the filters."""
    return [(name, str(game["title"])) for name, game in _catalogue().items()]


@dataclasses.dataclass(frozen=True, slots=True)
class OptionLine:
    """One rule option of a tournament, in words."""

    name: str
    doc: str
    value: str
    changed: bool  # differs from the game's default


def _words(value: object) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def rules_in_words(*, game: str, preset: str, options: dict[str, Any]) -> list[OptionLine]:
    """Every option of the game as the tournament plays it: the preset's values with the
    tournament's overrides, each with the engine's description."""
    entry = _catalogue().get(game)
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
                name=name.replace("_", " "),
                doc=str(info["doc"]),
                value=_words(value),
                changed=value != info["default"],
            )
        )
    return lines


def preset_doc(*, game: str, preset: str) -> str:
    entry = _catalogue().get(game)
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


# ---------------------------------------------------------------------------------------------
# Home
# ---------------------------------------------------------------------------------------------


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


def _cards(
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
        .select_related("version__bot", "user")
        .defer("version__content")
        .order_by("tournament_id", "pk")
    ):
        winners.setdefault(entry.tournament_id, entry)
    return winners


def _split_family(family: str) -> tuple[str, str]:
    game, _, preset = family.partition("/")
    return game, preset


def leaderboards(*, size: int = LEADERBOARD_SIZE) -> list[Leaderboard]:
    """The top ``size`` bots of every game and preset family, in two queries."""
    families = list(Rating.objects.values_list("family", flat=True).distinct().order_by("family"))
    if not families:
        return []
    ranked = (
        Rating.objects.filter(family__in=families)
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
        game, preset = _split_family(family)
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
    base = visible_tournaments(user=user).select_related("organiser")
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
        running=_cards(running, counts=counts, progress=progress_of(running)),
        open=_cards(opened, counts=counts),
        finished=_cards(finished, counts=counts, winners=winners_of(finished)),
        leaderboards=leaderboards(),
    )


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentListPage:
    page: Page
    cards: list[TournamentCard]
    status: str
    game: str
    statuses: list[tuple[str, str]]
    games: list[tuple[str, str]]

    @property
    def query(self) -> str:
        """The filters as a query string, for the links to other pages."""
        return urlencode({k: v for k, v in (("status", self.status), ("game", self.game)) if v})


def tournament_list_page(
    *, user: Any, status: str = "", game: str = "", page: str | int | None = None
) -> TournamentListPage:
    """A page of tournaments, newest first, filtered by status and game (unknown values are
    ignored, as a filter form would never send them)."""
    statuses = [
        (value, label)
        for value, label in Tournament.Status.choices
        if value != Tournament.Status.DRAFT
    ]
    status = status if status in {s for s, _ in statuses} else ""
    game = game if game in _catalogue() else ""
    qs = visible_tournaments(user=user)
    if status:
        qs = qs.filter(status=status)
    if game:
        qs = qs.filter(game=game)
    qs = qs.order_by("-created_at", "-pk")
    one_page = paginate(qs, page, PAGE_SIZE)
    items = list(one_page.object_list)
    return TournamentListPage(
        page=one_page,
        cards=_cards(
            items,
            counts=entry_counts(items),
            progress=progress_of(items),
            winners=winners_of(items),
        ),
        status=status,
        game=game,
        statuses=statuses,
        games=game_choices(),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class StandingLine:
    row: selectors.StandingRow
    mine: bool


@dataclasses.dataclass(frozen=True, slots=True)
class SeatLine:
    position: int
    label: str
    bot_id: int | None
    entry_id: int | None
    house: bool
    score: int | None
    place: int | None
    points: Decimal | None
    faults: int
    mine: bool


@dataclasses.dataclass(frozen=True, slots=True)
class TableLine:
    pk: int
    number: int
    status: str
    status_label: str
    seats: list[SeatLine]
    results_shown: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RoundBlock:
    number: int
    status_label: str
    tables: list[TableLine]


@dataclasses.dataclass(frozen=True, slots=True)
class CrossCell:
    ahead: int  # tables where the row's entry placed ahead of the column's
    behind: int
    met: int

    @property
    def label(self) -> str:
        return f"{self.ahead}\u2013{self.behind}" if self.met else ""


@dataclasses.dataclass(frozen=True, slots=True)
class Crosstable:
    entries: list[Entry]  # in standings order
    cells: list[list[CrossCell | None]]  # None on the diagonal

    @property
    def rows(self) -> list[tuple[Entry, list[CrossCell | None]]]:
        return list(zip(self.entries, self.cells, strict=True))


@dataclasses.dataclass(frozen=True, slots=True)
class SeedCheck:
    seed: int
    commitment: str
    matches: bool


class TournamentLive:
    """What changes while a tournament runs: its progress and standings, and ``version``, a
    key that changes whenever either may have changed (the page's polling sends it back).

    The standings are computed when first read: a page whose rendering is kept in the cache
    (under :attr:`cache_key`) never reads them."""

    def __init__(
        self, *, tournament: Tournament, progress: ProgressView, version: str, user: Any
    ) -> None:
        self.tournament = tournament
        self.progress = progress
        self.version = version
        self.user = user
        self.lower_is_better = selectors.tournament_lower_is_better(tournament=tournament)
        self.place_points = selectors.tournament_place_points(tournament=tournament)
        self.cache_key = f"{tournament.pk}:{version}:{_viewer_key(tournament, user)}"
        # Only a finished or cancelled tournament's page is kept rendered: it never changes
        # again (0: not kept; a running one changes with every table anyway).
        final = tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
        self.cache_seconds = FINAL_PAGE_SECONDS if final else 0

    @functools.cached_property
    def standings(self) -> list[StandingLine]:
        return _standings(self.tournament, self.user)

    @property
    def summary(self) -> str:
        """The progress in one sentence, for the page's live region."""
        p = self.progress
        if p.status == Tournament.Status.FINISHED:
            return f"Finished: {p.tables_done} tables played over {p.rounds} rounds."
        if p.status != Tournament.Status.RUNNING:
            return f"{p.status_label.capitalize()}."
        return (
            f"Round {p.current_round} of {p.rounds}: {p.tables_done} of {p.tables_total} "
            f"tables done, {p.tables_running} running."
        )


class TournamentPage:
    """A tournament's page. The settings are read at once; the live part, the rounds and the
    crosstable when first read (see :class:`TournamentLive`)."""

    def __init__(self, *, tournament: Tournament, live: TournamentLive) -> None:
        self.tournament = tournament
        self.live = live
        self.cache_key = live.cache_key
        self.cache_seconds = live.cache_seconds
        self.game_title = game_title(tournament.game)
        self.preset_doc = preset_doc(game=tournament.game, preset=tournament.preset)
        self.rules = rules_in_words(
            game=tournament.game, preset=tournament.preset, options=tournament.options or {}
        )
        try:
            doc = formats.get_format(tournament.seating).__doc__ or ""
        except formats.FormatError:
            doc = ""
        self.format_description = " ".join(doc.split())
        revealed = visibility.shown_seed(tournament=tournament)
        self.seed = (
            SeedCheck(
                seed=revealed,
                commitment=tournament.commitment,
                matches=seeds.commitment_matches(revealed, tournament.commitment),
            )
            if revealed is not None
            else None
        )

    @functools.cached_property
    def rounds(self) -> list[RoundBlock]:
        return _rounds(self.tournament, self.live.user)

    @functools.cached_property
    def crosstable(self) -> Crosstable:
        # From the seats the rounds already read: the places of every table shown.
        return _crosstable(self.rounds, [line.row.entry for line in self.live.standings])


def _viewer_key(tournament: Tournament, user: Any) -> str:
    """What of a tournament's page depends on who looks: which entries are theirs (their rows
    are highlighted). "-" for everyone who has none."""
    if not getattr(user, "is_authenticated", False):
        return "-"
    mine = Entry.objects.filter(tournament=tournament, user_id=user.pk).values_list("pk", flat=True)
    return ",".join(str(pk) for pk in sorted(mine)) or "-"


def _is_mine(entry: Entry | None, user: Any) -> bool:
    return bool(
        entry is not None
        and getattr(user, "is_authenticated", False)
        and entry.user_id == getattr(user, "pk", None)
    )


def _standings(tournament: Tournament, user: Any) -> list[StandingLine]:
    return [
        StandingLine(row=row, mine=_is_mine(row.entry, user))
        for row in selectors.standings_for_tournament(tournament=tournament)
    ]


def _version(tournament: Tournament, progress: ProgressView) -> str:
    return ":".join(
        str(v)
        for v in (
            tournament.status,
            progress.current_round,
            progress.tables_done,
            progress.tables_running,
            progress.tables_failed,
            selectors.standings_version(tournament=tournament),
            tournament.finished_at.isoformat() if tournament.finished_at else "-",
        )
    )


def _live(tournament: Tournament, user: Any, *, since: str | None = None) -> TournamentLive | None:
    progress = progress_of([tournament])[tournament.pk]
    version = _version(tournament, progress)
    if since is not None and since == version:
        return None
    return TournamentLive(tournament=tournament, progress=progress, version=version, user=user)


def tournament_live(
    *, tournament_id: int, user: Any, since: str | None = None
) -> TournamentLive | None:
    """The live part of a tournament's page (progress and standings), for its polling: None
    when nothing changed since the version ``since`` the page already shows."""
    return _live(_tournament_or_404(tournament_id, user), user, since=since)


def seat_label(seat: Seat) -> str:
    """A seat's bot as people read it: "Bot v2", "house heuristic", or "house heuristic (for
    Bot v2)" when a house bot played for a withdrawn or disqualified entry."""
    if seat.entry is None:
        return f"house {seat.house_bot}"
    label = seat.entry.version.label
    return f"house {seat.house_bot} (for {label})" if seat.substitute else label


def _seat_lines(table: Table, user: Any, shown: bool) -> list[SeatLine]:
    return [
        SeatLine(
            position=seat.position,
            label=seat_label(seat),
            bot_id=seat.entry.version.bot_id if seat.entry is not None else None,
            entry_id=seat.entry_id,
            house=seat.entry is None,
            score=seat.score if shown else None,
            place=seat.place if shown else None,
            points=seat.points if shown else None,
            faults=seat.faults if shown else 0,
            mine=_is_mine(seat.entry, user),
        )
        for seat in table.seats.all()
    ]


def _crosstable(rounds: list[RoundBlock], order: list[Entry]) -> Crosstable:
    """Head to head: for each pair of entries, the tables where one placed ahead of the
    other and where it placed behind, over every table they shared whose results are shown."""
    ahead: dict[tuple[int, int], int] = defaultdict(int)
    met: dict[tuple[int, int], int] = defaultdict(int)
    for block in rounds:
        for table in block.tables:
            if not table.results_shown:
                continue
            seated = [
                (seat.entry_id, seat.place)
                for seat in table.seats
                if seat.entry_id is not None and seat.place is not None
            ]
            for a, place_a in seated:
                for b, place_b in seated:
                    if a == b:
                        continue
                    met[a, b] += 1
                    if place_a < place_b:
                        ahead[a, b] += 1
    cells: list[list[CrossCell | None]] = []
    for row in order:
        line: list[CrossCell | None] = []
        for column in order:
            if row.pk == column.pk:
                line.append(None)
                continue
            key = (row.pk, column.pk)
            line.append(CrossCell(ahead=ahead[key], behind=ahead[column.pk, row.pk], met=met[key]))
        cells.append(line)
    return Crosstable(entries=order, cells=cells)


def _rounds(tournament: Tournament, user: Any) -> list[RoundBlock]:
    """The rounds with their tables and who sat where (results where they may be shown).
    Two queries of plain rows: a tournament has hundreds of seats, and making a model
    instance of each seat, entry, version and bot cost more than the rest of the page."""
    table_labels = dict(Table.Status.choices)
    round_labels = dict(Round.Status.choices)
    tables = list(
        Table.objects.filter(tournament=tournament)
        .order_by("round__number", "number")
        .values("pk", "number", "status", "round__number", "round__status")
    )
    seats: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in (
        Seat.objects.filter(table__tournament=tournament)
        .order_by("table_id", "position")
        .values(
            "table_id",
            "position",
            "entry_id",
            "entry__user_id",
            "entry__version__number",
            "entry__version__bot_id",
            "entry__version__bot__name",
            "house_bot",
            "substitute",
            "score",
            "place",
            "points",
            "faults",
        )
    ):
        seats[row["table_id"]].append(dict(row))
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    blocks: dict[int, RoundBlock] = {}
    for table in tables:
        shown = visibility.play_shown(
            table_status=table["status"],
            round_status=table["round__status"],
            tournament_status=tournament.status,
            duplicate=tournament.duplicate,
        )
        number = table["round__number"]
        block = blocks.setdefault(
            number,
            RoundBlock(number=number, status_label=round_labels[table["round__status"]], tables=[]),
        )
        lines = []
        for seat in seats[table["pk"]]:
            entry = seat["entry_id"]
            label = (
                f"{seat['entry__version__bot__name']} v{seat['entry__version__number']}"
                if entry is not None
                else ""
            )
            if entry is None:
                label = f"house {seat['house_bot']}"
            elif seat["substitute"]:
                label = f"house {seat['house_bot']} (for {label})"
            lines.append(
                SeatLine(
                    position=seat["position"],
                    label=label,
                    bot_id=seat["entry__version__bot_id"],
                    entry_id=entry,
                    house=entry is None,
                    score=seat["score"] if shown else None,
                    place=seat["place"] if shown else None,
                    points=seat["points"] if shown else None,
                    faults=seat["faults"] if shown else 0,
                    mine=user_id is not None and seat["entry__user_id"] == user_id,
                )
            )
        block.tables.append(
            TableLine(
                pk=table["pk"],
                number=table["number"],
                status=table["status"],
                status_label=table_labels[table["status"]],
                seats=lines,
                results_shown=shown,
            )
        )
    return list(blocks.values())


def tournament_page(*, tournament_id: int, user: Any) -> TournamentPage:
    """Everything a tournament's page shows: its settings in words, its progress and
    standings, its rounds with their tables and seating, the crosstable, and once it is
    finished its seed and whether it matches the commitment published at its creation."""
    tournament = _tournament_or_404(tournament_id, user)
    live = _live(tournament, user)
    assert live is not None
    return TournamentPage(tournament=tournament, live=live)


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

# What each kind of fault means, for people (judge.faults.FaultKind's values).
FAULT_WORDS = {
    "timeout": "ran out of time",
    "crash": "crashed",
    "malformed": "sent a malformed message",
    "wrong_id": "answered a request that was not the one pending",
    "illegal": "played an illegal action",
    "line_too_long": "sent a message longer than the line limit",
    "unsolicited": "spoke when it was not asked",
    "bad_utf8": "sent bytes that are not UTF-8",
    "internal": "a built-in bot failed (a fault of the judge, not of the bot's author)",
}


def fault_in_words(*, kind: str, deal_index: int | None, decision: int | None, detail: str) -> str:
    """A fault as a sentence: "ran out of time at deal 3, decision 7: the first legal action
    was played (no answer within 1 s)". Deals and decisions are counted from 1, as the score
    sheet numbers them.

    >>> fault_in_words(kind="timeout", deal_index=2, decision=6, detail="")
    'ran out of time at deal 3, decision 7: the first legal action was played'
    >>> fault_in_words(kind="crash", deal_index=None, decision=None, detail="exit 1")
    'crashed at start-up (exit 1)'
    """
    words = FAULT_WORDS.get(kind, kind.replace("_", " "))
    if deal_index is None:
        sentence = f"{words} at start-up"
    else:
        where = f"deal {deal_index + 1}"
        if decision is not None:
            where += f", decision {decision + 1}"
        sentence = f"{words} at {where}: the first legal action was played"
    if detail:
        sentence += f" ({detail})"
    return sentence


@dataclasses.dataclass(frozen=True, slots=True)
class FaultLine:
    seat: int
    label: str
    text: str


@dataclasses.dataclass(frozen=True, slots=True)
class SheetLine:
    deal_id: int
    number: int  # from 1
    points: list[int]
    running: list[int]
    decisions: int
    faults: int

    @property
    def cells(self) -> list[tuple[int, int]]:
        """Each seat's points in this deal and its total so far."""
        return list(zip(self.points, self.running, strict=False))


@dataclasses.dataclass(frozen=True, slots=True)
class TimeLine:
    position: int
    label: str
    decisions: int
    mean_ms: float | None
    max_ms: float | None


@dataclasses.dataclass(frozen=True, slots=True)
class TablePage:
    table: Table
    tournament: Tournament
    game_title: str
    shown: bool
    seats: list[SeatLine]
    sheet: list[SheetLine]
    totals: list[int]
    faults: list[FaultLine]
    replaced: list[str]
    times: list[TimeLine]
    house_bot: str
    hidden_reason: str


def table_page(*, table_id: int, user: Any) -> TablePage:
    """A table: its seats and, once its cards may be shown, places, scores, the score sheet
    deal by deal with running totals, the faults in words and the decision times."""
    try:
        table = (
            Table.objects.select_related("round", "tournament")
            .defer("result", "tournament__options")
            .prefetch_related(
                Prefetch(
                    "seats",
                    queryset=Seat.objects.select_related("entry__version__bot")
                    .defer("entry__version__content", "entry__version__report", "log")
                    .order_by("position"),
                )
            )
            .get(pk=table_id, tournament__in=visible_tournaments(user=user))
        )
    except Table.DoesNotExist:
        raise Http404("no such table") from None
    shown = table_results_visible(table=table)
    seats = _seat_lines(table, user, shown)
    labels = {seat.position: seat.label for seat in seats}
    sheet: list[SheetLine] = []
    faults: list[FaultLine] = []
    times: list[TimeLine] = []
    totals = [0] * len(seats)
    if shown:
        running = [0] * len(seats)
        for row in (
            Deal.objects.filter(table=table)
            .order_by("index")
            .values("id", "index", "points", "decisions", "faults")
        ):
            points = [int(p) for p in row["points"]]
            running = [a + b for a, b in zip(running, points, strict=False)]
            sheet.append(
                SheetLine(
                    deal_id=row["id"],
                    number=row["index"] + 1,
                    points=points,
                    running=list(running),
                    decisions=row["decisions"],
                    faults=row["faults"],
                )
            )
        totals = running
        faults = [
            FaultLine(
                seat=f.seat,
                label=labels.get(f.seat, f"seat {f.seat}"),
                text=fault_in_words(
                    kind=f.kind, deal_index=f.deal_index, decision=f.decision, detail=f.detail
                ),
            )
            for f in Fault.objects.filter(table=table).order_by("pk")
        ]
        slowest = _slowest_decisions(table)
        times = [
            TimeLine(
                position=seat.position,
                label=labels[seat.position],
                decisions=seat.decisions,
                mean_ms=seat.mean_time * 1000 if seat.mean_time is not None else None,
                max_ms=slowest.get(seat.position),
            )
            for seat in table.seats.all()
        ]
    replaced = [labels[s.position] for s in table.seats.all() if shown and s.replaced]
    return TablePage(
        table=table,
        tournament=table.tournament,
        game_title=game_title(table.tournament.game),
        shown=shown,
        seats=seats,
        sheet=sheet,
        totals=totals,
        faults=faults,
        replaced=replaced,
        times=times,
        house_bot=table.tournament.house_bot,
        hidden_reason="" if shown else visibility.table_hidden_reason(table=table),
    )


def _slowest_decisions(table: Table) -> dict[int, float]:
    """The longest decision of each seat over the table, in milliseconds (one query)."""
    from tournaments.models import Decision

    return {
        row["seat"]: row["slowest"] * 1000
        for row in Decision.objects.filter(deal__table=table)
        .values("seat")
        .annotate(slowest=Max("seconds"))
        .order_by()
    }


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class EntryLine:
    entry: Entry
    tournament: Tournament
    version: int
    rank: int | None
    entries: int


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


CHART_WIDTH, CHART_HEIGHT = 600, 220
CHART_MARGIN = (40, 10, 10, 20)  # left, top, right, bottom


def rating_chart(*, rating: Rating, history: Sequence[RatingHistory]) -> RatingChart:
    """The ordinal after each rated table, scaled into the chart (oldest left)."""
    width, height = CHART_WIDTH, CHART_HEIGHT
    left, top, right, bottom = CHART_MARGIN
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
            y=y_of(h.ordinal),
            ordinal=h.ordinal,
            label=f"{h.ordinal:.2f} after table {i + 1} (place {h.place})",
        )
        for i, h in enumerate(history)
    ]
    ticks = [(y_of(v), f"{v:.1f}") for v in (high, (high + low) / 2, low)]
    return RatingChart(family=rating.family, rating=rating, points=points, y_ticks=ticks)


def bot_page(*, bot_id: int, user: Any, page: str | int | None = None) -> BotPage:
    """A bot's public profile: its author and game, its versions (no code), its tournaments
    with its places, its rating history per family as a chart, its average place over every
    table it played, and its record against the bots it met most."""
    try:
        bot = Bot.objects.select_related("owner").get(pk=bot_id)
    except Bot.DoesNotExist:
        raise Http404("no such bot") from None
    versions = list(
        BotVersion.objects.filter(bot=bot).defer("content", "report").order_by("-number")
    )
    entries_qs = (
        Entry.objects.filter(version__bot=bot, tournament__in=visible_tournaments(user=user))
        .select_related("tournament", "version")
        .defer("version__content", "version__report", "tournament__options")
        .annotate(entry_count=Count("tournament__entries", distinct=True))
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
        )
        for e in entries.object_list
    ]
    ratings_rows = list(Rating.objects.filter(bot=bot).order_by("family"))
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
        table__tournament__in=visible_tournaments(user=user),
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
    )


# ---------------------------------------------------------------------------------------------
# Rankings
# ---------------------------------------------------------------------------------------------


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
    """The leaderboard of one game and preset family (the first one if none or an unknown one
    is asked for), a page at a time, best first."""
    choices = []
    for name in Rating.objects.values_list("family", flat=True).distinct().order_by("family"):
        game, preset = _split_family(name)
        choices.append(
            FamilyChoice(family=name, game=game, game_title=game_title(game), preset=preset)
        )
    chosen = next((c for c in choices if c.family == family), choices[0] if choices else None)
    if chosen is None:
        return RankingsPage(families=[], family=None, page=None, first_rank=1)
    board = (
        Rating.objects.filter(family=chosen.family)
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


# ---------------------------------------------------------------------------------------------
# Audits
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class DealAuditPage:
    deal: Deal
    table: Table
    tournament: Tournament
    audit: services.DealAudit


# The replay page's refusals (tournaments/replay_steps.py); the audit page says
# visibility.table_hidden_reason.
HIDDEN_DEAL = "this deal is hidden until its table is finished"
HIDDEN_DUPLICATE_DEAL = (
    "this deal is hidden until every table of its round is finished (in duplicate play the "
    "other tables of the round play the same cards)"
)


def deal_audit_page(*, deal_id: int, user: Any) -> DealAuditPage:
    """A deal re-played through the engine from its seed and log, each check with its
    verdict. Refused (PermissionDenied, with the reason) while the deal is hidden."""
    try:
        deal = (
            Deal.objects.select_related("table__round", "table__tournament")
            .filter(table__tournament__in=visible_tournaments(user=user))
            .get(pk=deal_id)
        )
    except Deal.DoesNotExist:
        raise Http404("no such deal") from None
    if not table_results_visible(table=deal.table):
        raise PermissionDenied(visibility.table_hidden_reason(table=deal.table))
    return DealAuditPage(
        deal=deal,
        table=deal.table,
        tournament=deal.table.tournament,
        audit=services.deal_audit(deal=deal),
    )


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentAuditPage:
    tournament: Tournament
    audit: services.TournamentAudit | None
    cached: bool


def tournament_audit_page(*, tournament_id: int, user: Any) -> TournamentAuditPage:
    """A tournament's audit: every recorded deal re-played, every table's totals and places,
    and once the seed is revealed the commitment and each table's deal seed. A finished
    tournament never changes: its audit is kept in the cache once made. A running one is
    audited on every visit (its recorded tables so far)."""
    tournament = _tournament_or_404(tournament_id, user)
    final = tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
    key = f"pages:audit:tournament:{tournament.pk}"
    if final:
        stored = cache.get(key)
        if isinstance(stored, dict):
            return TournamentAuditPage(
                tournament=tournament, audit=services.TournamentAudit(**stored), cached=True
            )
    audit = services.tournament_audit(tournament=tournament, shown_only=True)
    if final:
        cache.set(key, dataclasses.asdict(audit), None)
    return TournamentAuditPage(tournament=tournament, audit=audit, cached=False)
