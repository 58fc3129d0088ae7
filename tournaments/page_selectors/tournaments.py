"""The tournament list and a tournament's page with its live part."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page
from django.db.models import Count, Q
from django.http import Http404
from django.template.defaultfilters import pluralize

from tournaments import formats, seeds, selectors, visibility
from tournaments.errors import ApplicationError
from tournaments.models import (
    Entry,
    Round,
    Seat,
    Table,
    Tournament,
)
from tournaments.page_selectors.common import (
    FINAL_PAGE_SECONDS,
    LIVE_PART_SECONDS,
    PAGE_SIZE,
    ProgressView,
    ScoreWords,
    catalogue,
    game_choices,
    game_title,
    listed_tournaments,
    paginate,
    preset_doc,
    progress_of,
    rules_in_words,
    score_words,
    tournament_or_404,
)
from tournaments.page_selectors.home import (
    TournamentCard,
    entry_counts,
    tournament_cards,
    winners_of,
)
from tournaments.statistics.crosstable import Comparison
from tournaments.statistics.spread import preset_spread


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
    game = game if game in catalogue() else ""
    qs = listed_tournaments(user=user)
    if status:
        qs = qs.filter(status=status)
    if game:
        qs = qs.filter(game=game)
    qs = qs.order_by("-created_at", "-pk")
    one_page = paginate(qs, page, PAGE_SIZE)
    items = list(one_page.object_list)
    return TournamentListPage(
        page=one_page,
        cards=tournament_cards(
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
class IntervalBar:
    """Where an entry's interval lies on the scale shared by every line of the standings, in
    percent of the bar's width (0: the scale's left end): its two ends, its mean and the
    zero of the scale (the table's average)."""

    low: float
    high: float
    mean: float
    zero: float


@dataclasses.dataclass(frozen=True, slots=True)
class EntryConfidence:
    """An entry's line of the statistics (:func:`selectors.tournament_statistics`): its mean
    score per deal relative to its tables (in duplicate play, to the seats that held the same
    cards), higher better, with its 95% interval (None: a single table or board, no interval),
    its rank by that mean with the probability of holding it, and whether the place is
    settled."""

    mean: float
    low: float | None
    high: float | None
    deals: int
    rank: int
    probability: float
    likely: tuple[tuple[int, float], ...]  # (rank, probability) of the ranks at 5% or more
    settled: bool
    bar: IntervalBar

    @property
    def mean_text(self) -> str:
        return signed(self.mean)

    @property
    def interval_text(self) -> str:
        if self.low is None or self.high is None:
            return "no interval yet (a single table)"
        return f"{signed(self.low)} to {signed(self.high)}"

    @property
    def has_chances(self) -> bool:
        """Whether the rank chances mean something: with a single table (or board) the mean
        does not move in the bootstrap, so there is neither an interval nor a chance."""
        return self.low is not None and self.high is not None

    def _chance(self, probability: float) -> str:
        """A chance in words: never 0% or 100% while the place is not settled."""
        if not self.settled and probability >= 0.995:
            return ">99%"
        if not self.settled and probability < 0.005:
            return "<1%"
        return percent(probability)

    @property
    def probability_text(self) -> str:
        return self._chance(self.probability) if self.has_chances else "needs two tables"

    @property
    def likely_text(self) -> str:
        if not self.has_chances:
            return (
                "One table so far: its mean has nothing to vary over, so neither an interval "
                "nor a rank chance means anything until a second table"
            )
        return ", ".join(f"rank {rank}: {self._chance(p)}" for rank, p in self.likely)

    @property
    def summary(self) -> str:
        """The bar in words (its title and its label for screen readers)."""
        return (
            f"{self.mean_text} points per deal against the table, 95% interval {self.interval_text}"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class StandingLine:
    row: selectors.StandingRow
    mine: bool
    confidence: EntryConfidence | None = None


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
    replaced_deal: int | None = None  # from 0: the judge replaced its bot (shown results only)

    @property
    def replaced_number(self) -> int | None:
        """The deal, from 1, from which the seat was replaced."""
        return self.replaced_deal + 1 if self.replaced_deal is not None else None


@dataclasses.dataclass(frozen=True, slots=True)
class TableLine:
    pk: int
    number: int
    status: str
    status_label: str
    seats: list[SeatLine]
    results_shown: bool


@dataclasses.dataclass(frozen=True, slots=True)
class RoundSummary:
    """A round in one line of the tournament's page: its tables by status (its tables and
    seating are on the round's own page, :func:`round_page`)."""

    number: int
    status: str
    status_label: str
    tables: int
    done: int
    running: int
    pending: int
    failed: int


@dataclasses.dataclass(frozen=True, slots=True)
class CrossCell:
    """One cell of the crosstable: the row's entry against the column's, the mean difference
    of their scores per deal where they were compared (positive: the row's entry did better),
    its 95% interval (None: one deal, no interval), the deals compared and whether the
    difference is significant (the interval excludes 0). ``deals`` 0: they never met."""

    mean: float
    low: float | None
    high: float | None
    deals: int
    significant: bool

    @property
    def verdict(self) -> str:
        """ "better" or "worse" when significant, else "" (the cell's shading)."""
        if not self.significant:
            return ""
        return "better" if self.mean > 0 else "worse"


NEVER_MET = CrossCell(mean=0.0, low=None, high=None, deals=0, significant=False)


@dataclasses.dataclass(frozen=True, slots=True)
class CrossGrid:
    """One way of comparing the entries (at the same table; in duplicate play also on the
    same cards), as a square of cells in the standings' order (None on the diagonal)."""

    comparison: str  # Comparison's value: "table" or "cards"
    title: str
    description: str
    cells: list[list[CrossCell | None]]
    significant: int  # cells (pairs counted once) whose difference is significant
    pairs: int  # pairs compared


@dataclasses.dataclass(frozen=True, slots=True)
class Crosstable:
    """The crosstable of :func:`selectors.tournament_statistics` for the page, or one block of
    it: the entries of its rows and of its columns, each with its place in the standings'
    order (numbered from 1), and one grid per comparison (a cell per row and column)."""

    rows_entries: list[tuple[int, Entry]]
    columns: list[tuple[int, Entry]]
    grids: list[CrossGrid]

    @property
    def entries(self) -> list[Entry]:
        """The entries of the rows."""
        return [entry for _, entry in self.rows_entries]

    def rows(self, grid: CrossGrid) -> list[tuple[int, Entry, list[CrossCell | None]]]:
        return [
            (number, entry, cells)
            for (number, entry), cells in zip(self.rows_entries, grid.cells, strict=True)
        ]


@dataclasses.dataclass(frozen=True, slots=True)
class DuplicateNarrowing:
    """How much duplicate play narrows the intervals for a tournament's preset, as measured
    (:func:`selectors.tournament_resolution`, from tournaments/spread.json and the finished
    tournaments of the preset): ``sentence`` says it for people. ``factor``: the width of an
    interval in normal play over its width in duplicate play."""

    factor: float
    sentence: str


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
        self,
        *,
        tournament: Tournament,
        progress: ProgressView,
        version: str,
        user: Any,
        page: str | int | None = None,
    ) -> None:
        self.tournament = tournament
        self.progress = progress
        self.version = version
        self.user = user
        self.page_number = page_number(page)
        self.lower_is_better = selectors.tournament_lower_is_better(tournament=tournament)
        self.place_points = selectors.tournament_place_points(tournament=tournament)
        self.cache_key = (
            f"{tournament.pk}:{version}:{_viewer_key(tournament, user)}:{self.page_number}"
        )
        # A finished or cancelled tournament's page is kept rendered: it never changes again.
        # Before, only its live part (progress, standings, rounds) is, under its version: every
        # viewer's polling after a table is recorded gets the rendering the first one made;
        # the rest of the page (its settings may still change) is not kept (0).
        final = tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
        self.cache_seconds = FINAL_PAGE_SECONDS if final else LIVE_PART_SECONDS
        self.page_cache_seconds = FINAL_PAGE_SECONDS if final else 0

    @functools.cached_property
    def statistics(self) -> selectors.TournamentStatistics:
        """Issue 17's figures, from the tables whose results may be shown (the selector reads
        only those): computed once per standings version, kept in the cache."""
        return selectors.tournament_statistics(tournament=self.tournament)

    @functools.cached_property
    def standings_page(self) -> Page:
        """The page of the standings asked for (:data:`PAGE_SIZE` lines): every entry is
        ranked, only these are drawn."""
        lines = _standings(self.tournament, self.user, self.statistics)
        return paginate(lines, self.page_number, PAGE_SIZE)

    @property
    def standings(self) -> list[StandingLine]:
        return list(self.standings_page.object_list)

    @functools.cached_property
    def rounds(self) -> list[RoundSummary]:
        """The rounds, each in one line with its tables by status: part of the live answer, as
        their statuses change. One query, whatever the number of tables."""
        return _round_summaries(self.tournament)

    @property
    def summary(self) -> str:
        """The progress in one sentence, for the page's live region."""
        p = self.progress
        if p.status == Tournament.Status.FINISHED:
            return (
                f"Finished: {p.tables_done} table{pluralize(p.tables_done)} played over "
                f"{p.rounds} round{pluralize(p.rounds)}."
            )
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
        self.cache_seconds = live.page_cache_seconds
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

    @property
    def rounds(self) -> list[RoundSummary]:
        return self.live.rounds

    @functools.cached_property
    def duplicate_narrowing(self) -> DuplicateNarrowing | None:
        return _duplicate_narrowing(
            self.tournament, entries=self.live.standings_page.paginator.count
        )


def page_number(page: str | int | None) -> int:
    """A page number as asked for in a query string: 1 for junk or below 1 (the paginator
    shows the last page for a number past the end)."""
    try:
        number = int(page) if page is not None else 1
    except (TypeError, ValueError):
        return 1
    return max(number, 1)


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


def signed(value: float, digits: int = 2) -> str:
    """A figure with its sign as people read it: "+1.25", "\u22120.40" (a true minus sign),
    "0.00" (no sign on a figure that rounds to zero)."""
    text = f"{value:+.{digits}f}"
    if float(text) == 0:
        return f"{0:.{digits}f}"
    return text.replace("-", "\u2212")


def percent(probability: float) -> str:
    """A probability in whole percent, "<1%" and ">99%" at the ends (never a false 0 or 100)."""
    if 0 < probability < 0.005:
        return "<1%"
    if 0.995 <= probability < 1:
        return ">99%"
    return f"{probability:.0%}"


#: Ranks shown among an entry's likely ones: those with at least this probability.
LIKELY_RANK = 0.05


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _confidences(figures: selectors.TournamentStatistics) -> dict[int, EntryConfidence]:
    """Each ranked entry's statistics with its bar, all bars on one scale: from the lowest
    interval end (or mean) to the highest, 0 (the table's average) always in view."""
    lines = figures.standings.entries
    ends = [0.0]
    for line in lines:
        ends += [v for v in (line.low, line.high) if math.isfinite(v)] or [line.mean]
    left, right = min(ends), max(ends)
    span = (right - left) or 1.0

    def at(value: float) -> float:
        return round(100 * (value - left) / span, 2)

    out = {}
    for line in lines:
        low, high = _finite(line.low), _finite(line.high)
        out[line.entry] = EntryConfidence(
            mean=line.mean,
            low=low,
            high=high,
            deals=line.deals,
            rank=line.rank,
            probability=line.rank_probability,
            likely=tuple(
                (rank, p)
                for rank, p in enumerate(line.rank_probabilities, start=1)
                if p >= LIKELY_RANK
            ),
            settled=line.settled,
            bar=IntervalBar(
                low=at(low if low is not None else line.mean),
                high=at(high if high is not None else line.mean),
                mean=at(line.mean),
                zero=at(0.0),
            ),
        )
    return out


def _standings(
    tournament: Tournament, user: Any, figures: selectors.TournamentStatistics
) -> list[StandingLine]:
    confidences = _confidences(figures)
    return [
        StandingLine(
            row=row, mine=_is_mine(row.entry, user), confidence=confidences.get(row.entry.pk)
        )
        for row in selectors.standings_for_tournament(tournament=tournament)
    ]


CROSS_GRIDS = {
    Comparison.TABLE: (
        "At the same table",
        "Each cell: the row's bot's score minus the column's, per deal, over the deals they "
        "played at the same table, then its 95% interval and the number of deals.",
    ),
    Comparison.CARDS: (
        "On the same cards",
        "Each cell: the row's bot's points minus the column's on the same cards (the same seat "
        "of the same deal, at different tables of a round), per deal, then its 95% interval "
        "and the number of deals.",
    ),
}


def _crosstable(
    figures: selectors.TournamentStatistics,
    rows: list[tuple[int, Entry]],
    columns: list[tuple[int, Entry]],
) -> Crosstable:
    """The statistics' pairs laid out as grids of ``rows`` by ``columns`` (entries numbered by
    their place in the standings): each pair's cell is made once, both ways, then each cell
    of the grid is a lookup."""
    table = figures.crosstable
    comparisons = [Comparison.TABLE]
    if table.duplicate:
        comparisons.append(Comparison.CARDS)
    row_ids = [entry.pk for _, entry in rows]
    column_ids = [entry.pk for _, entry in columns]
    grids = []
    for comparison in comparisons:
        cell_of: dict[tuple[int, int], CrossCell] = {}
        significant = pairs = 0
        for pair in table.pairs:
            if pair.comparison is not comparison:
                continue
            pairs += 1
            significant += pair.significant
            low, high = _finite(pair.low), _finite(pair.high)
            cell_of[pair.a, pair.b] = CrossCell(
                mean=pair.mean, low=low, high=high, deals=pair.deals, significant=pair.significant
            )
            cell_of[pair.b, pair.a] = CrossCell(
                mean=-pair.mean,
                low=-high if high is not None else None,
                high=-low if low is not None else None,
                deals=pair.deals,
                significant=pair.significant,
            )
        cells: list[list[CrossCell | None]] = [
            [None if a == b else cell_of.get((a, b), NEVER_MET) for b in column_ids]
            for a in row_ids
        ]
        title, description = CROSS_GRIDS[comparison]
        grids.append(
            CrossGrid(
                comparison=comparison.value,
                title=title,
                description=description,
                cells=cells,
                significant=significant,
                pairs=pairs,
            )
        )
    return Crosstable(rows_entries=rows, columns=columns, grids=grids)


def _duplicate_narrowing(tournament: Tournament, *, entries: int) -> DuplicateNarrowing | None:
    """How much duplicate play narrows an entry's interval for this tournament's preset, as
    measured: with this tournament's settings when they allow both ways of playing
    (:func:`selectors.tournament_resolution`), else the preset's measured spreads alone
    (tournaments/spread.json). None for a preset never measured."""
    try:
        report = selectors.tournament_resolution(
            game=tournament.game,
            preset=tournament.preset,
            entries=max(entries, 2),
            rounds=tournament.rounds,
            deals_per_table=tournament.deals_per_table,
            table_size=tournament.table_size,
            duplicate=tournament.duplicate,
        )
    except (ApplicationError, ValueError):
        report = None
    if report is not None and report.normal is not None and report.duplicate_play is not None:
        source = report.source
        measured = f"{source.house.deals:,} deals of the house bots"
        if source.tournament_deals:
            measured += (
                f" and {source.tournament_deals:,} scores of {source.tournaments} finished "
                f"tournament{'s' if source.tournaments != 1 else ''}"
            )
        factor = report.normal.half_width / report.duplicate_play.half_width
        return DuplicateNarrowing(
            factor=factor,
            sentence=(
                f"With this tournament's settings ({report.entries} entries, "
                f"{report.rounds} round{'s' if report.rounds != 1 else ''} of "
                f"{report.deals_per_table} deal{pluralize(report.deals_per_table)}), an entry's "
                "95% interval is expected to be "
                f"about \u00b1{report.normal.half_width:.2f} points per deal in normal play and "
                f"\u00b1{report.duplicate_play.half_width:.2f} in duplicate play: duplicate "
                f"play narrows it by a factor of {factor:.2f}, as measured for the preset "
                f"{report.preset} over {measured}."
            ),
        )
    try:
        spread = preset_spread(tournament.game, tournament.preset)
    except ValueError:
        return None
    factor = spread.table / spread.duplicate
    return DuplicateNarrowing(
        factor=factor,
        sentence=(
            f"For the preset {tournament.preset}, measured over {spread.deals:,} deals of the "
            f"house bots, a score per deal spreads by {spread.table:.2f} points relative to "
            f"its table and by {spread.duplicate:.2f} in duplicate play "
            f"({spread.duplicate_tables} tables): duplicate play narrows the intervals by a "
            f"factor of {factor:.2f}."
        ),
    )


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


def _live(
    tournament: Tournament,
    user: Any,
    *,
    since: str | None = None,
    page: str | int | None = None,
) -> TournamentLive | None:
    progress = progress_of([tournament])[tournament.pk]
    version = _version(tournament, progress)
    if since is not None and since == version:
        return None
    return TournamentLive(
        tournament=tournament, progress=progress, version=version, user=user, page=page
    )


def tournament_live(
    *, tournament_id: int, user: Any, since: str | None = None, page: str | int | None = None
) -> TournamentLive | None:
    """The live part of a tournament's page (progress, the page ``page`` of the standings,
    the rounds), for its polling: None when nothing changed since the version ``since`` the
    page already shows."""
    return _live(tournament_or_404(tournament_id, user), user, since=since, page=page)


def tournament_page_after(*, live: TournamentLive, since: str | None) -> TournamentPage | None:
    """The tournament's page anew when its status changed since the version ``since`` a page
    shows (its first part is the status, :func:`_version`), for the live answer to swap in
    what follows the status (the status itself, the Enter block, the settings and the seed);
    None while the status is the same."""
    if since is None or since.split(":", 1)[0] == live.tournament.status:
        return None
    return TournamentPage(tournament=live.tournament, live=live)


def seat_label(seat: Seat) -> str:
    """A seat's bot as people read it (:func:`bot_in_words`)."""
    version = seat.entry.version.label if seat.entry is not None else None
    return selectors.bot_in_words(version, house_bot=seat.house_bot, substitute=seat.substitute)


def seat_lines(table: Table, user: Any, shown: bool) -> list[SeatLine]:
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
            replaced_deal=seat.replaced_deal if shown and seat.replaced else None,
        )
        for seat in table.seats.all()
    ]


def _round_summaries(tournament: Tournament) -> list[RoundSummary]:
    """Each seated round with its tables counted by status: one query."""
    labels = dict(Round.Status.choices)
    statuses = Table.Status
    rows = (
        Round.objects.filter(tournament=tournament)
        .order_by("number")
        .values("number", "status")
        .annotate(
            total=Count("tables"),
            done=Count("tables", filter=Q(tables__status=statuses.DONE)),
            running=Count("tables", filter=Q(tables__status=statuses.RUNNING)),
            pending=Count("tables", filter=Q(tables__status=statuses.PENDING)),
            failed=Count("tables", filter=Q(tables__status=statuses.FAILED)),
        )
    )
    return [
        RoundSummary(
            number=row["number"],
            status=row["status"],
            status_label=labels[row["status"]],
            tables=row["total"],
            done=row["done"],
            running=row["running"],
            pending=row["pending"],
            failed=row["failed"],
        )
        for row in rows
    ]


#: The columns of a table's row that :func:`_table_lines` reads.
TABLE_FIELDS = ("pk", "number", "status", "round__number", "round__status")


def _table_lines(
    tournament: Tournament, tables: list[dict[str, Any]], user: Any
) -> list[TableLine]:
    """``tables`` (rows of :data:`TABLE_FIELDS`) with who sat where (results where they may be
    shown): one query of plain rows for their seats, as making a model instance of each seat,
    entry, version and bot cost more than the rest of the page."""
    table_labels = dict(Table.Status.choices)
    seats: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in (
        Seat.objects.filter(table_id__in=[table["pk"] for table in tables])
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
            "replaced_deal",
        )
    ):
        seats[row["table_id"]].append(dict(row))
    user_id = getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None
    out = []
    for table in tables:
        shown = visibility.play_shown(
            table_status=table["status"],
            round_status=table["round__status"],
            tournament_status=tournament.status,
            duplicate=tournament.duplicate,
        )
        lines = []
        for seat in seats[table["pk"]]:
            entry = seat["entry_id"]
            version = (
                f"{seat['entry__version__bot__name']} v{seat['entry__version__number']}"
                if entry is not None
                else None
            )
            label = selectors.bot_in_words(
                version, house_bot=seat["house_bot"], substitute=seat["substitute"]
            )
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
                    replaced_deal=seat["replaced_deal"] if shown else None,
                )
            )
        out.append(
            TableLine(
                pk=table["pk"],
                number=table["number"],
                status=table["status"],
                status_label=table_labels[table["status"]],
                seats=lines,
                results_shown=shown,
            )
        )
    return out


def tournament_page(
    *, tournament_id: int, user: Any, page: str | int | None = None
) -> TournamentPage:
    """Everything a tournament's page shows: its settings in words, its progress, a page of
    its standings, its rounds (each in one line; their tables and seating on the round's
    page, the crosstable on its own page), and once it is finished its seed and whether it
    matches the commitment published at its creation."""
    tournament = tournament_or_404(tournament_id, user)
    live = _live(tournament, user, page=page)
    assert live is not None
    return TournamentPage(tournament=tournament, live=live)


@dataclasses.dataclass(frozen=True, slots=True)
class RoundPage:
    """A round's page: a page of its tables with who sat where (results where they may be
    shown), and the other rounds to go to. ``live``: the round is still being played (the
    page refreshes its tables while it is)."""

    tournament: Tournament
    number: int
    status_label: str
    page: Page
    tables: list[TableLine]
    rounds: list[int]
    live: bool
    words: ScoreWords


def round_page(
    *, tournament_id: int, number: int, user: Any, page: str | int | None = None
) -> RoundPage:
    """Round ``number`` of a tournament with a page of its tables (:data:`PAGE_SIZE`), in
    table order: five queries, whatever the number of tables. 404 for a round not seated."""
    tournament = tournament_or_404(tournament_id, user)
    rounds = dict(Round.objects.filter(tournament=tournament).values_list("number", "status"))
    if number not in rounds:
        raise Http404("no such round (yet)")
    tables = (
        Table.objects.filter(tournament=tournament, round__number=number)
        .order_by("number")
        .values(*TABLE_FIELDS)
    )
    one_page = paginate(tables, page, PAGE_SIZE)
    return RoundPage(
        tournament=tournament,
        number=number,
        status_label=dict(Round.Status.choices)[rounds[number]],
        page=one_page,
        tables=_table_lines(tournament, list(one_page.object_list), user),
        rounds=sorted(rounds),
        live=rounds[number] == Round.Status.RUNNING
        and tournament.status == Tournament.Status.RUNNING,
        words=score_words(tournament),
    )


#: Entries per side of a block of the crosstable page: a field this size shows whole, a
#: larger one in square blocks (rows of one block of the standings, columns of another).
CROSSTABLE_BLOCK = 50


@dataclasses.dataclass(frozen=True, slots=True)
class CrosstableBlock:
    """One block of rows or columns of the crosstable page: its number (from 1) and the
    places of its first and last entries in the standings."""

    number: int
    first: int
    last: int


class CrosstablePage:
    """A tournament's crosstable page: one block of the crosstable (rows of block
    ``row_block`` by columns of block ``column_block`` of the entries in the standings' order)
    and the blocks to go to. Kept rendered like the tournament's page once it is final: the
    standings and the crosstable are read when first asked for, so a kept page reads
    neither."""

    def __init__(
        self,
        *,
        tournament: Tournament,
        version: str,
        rows: str | int | None,
        columns: str | int | None,
    ) -> None:
        self.tournament = tournament
        self.block_size = CROSSTABLE_BLOCK
        self._rows, self._columns = page_number(rows), page_number(columns)
        self.cache_key = f"{tournament.pk}:{version}:{self._rows}:{self._columns}"
        final = tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
        self.cache_seconds = FINAL_PAGE_SECONDS if final else 0

    @functools.cached_property
    def _numbered(self) -> list[tuple[int, Entry]]:
        order = selectors.standings_for_tournament(tournament=self.tournament)
        return list(enumerate((row.entry for row in order), start=1))

    @functools.cached_property
    def blocks(self) -> list[CrosstableBlock]:
        size = len(self._numbered)
        return [
            CrosstableBlock(
                number=n + 1,
                first=n * CROSSTABLE_BLOCK + 1,
                last=min((n + 1) * CROSSTABLE_BLOCK, size),
            )
            for n in range(-(-size // CROSSTABLE_BLOCK))
        ]

    @property
    def row_block(self) -> int:
        return min(self._rows, max(len(self.blocks), 1))

    @property
    def column_block(self) -> int:
        return min(self._columns, max(len(self.blocks), 1))

    def _side(self, block: int) -> list[tuple[int, Entry]]:
        return self._numbered[(block - 1) * CROSSTABLE_BLOCK : block * CROSSTABLE_BLOCK]

    @functools.cached_property
    def crosstable(self) -> Crosstable:
        return _crosstable(
            selectors.tournament_statistics(tournament=self.tournament),
            self._side(self.row_block),
            self._side(self.column_block),
        )


def crosstable_page(
    *,
    tournament_id: int,
    user: Any,
    rows: str | int | None = None,
    columns: str | int | None = None,
) -> CrosstablePage:
    """The crosstable of a tournament's entries (:func:`selectors.tournament_statistics`'s:
    the page computes no head to head of its own), in the standings' order, by blocks of
    :data:`CROSSTABLE_BLOCK` entries a side: ``rows`` and ``columns`` are block numbers."""
    tournament = tournament_or_404(tournament_id, user)
    progress = progress_of([tournament])[tournament.pk]
    return CrosstablePage(
        tournament=tournament,
        version=_version(tournament, progress),
        rows=rows,
        columns=columns,
    )
