"""The tournament list and a tournament's page with its live part."""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page

from tournaments import formats, seeds, selectors, visibility
from tournaments.models import (
    Entry,
    Round,
    Seat,
    Table,
    Tournament,
)
from tournaments.page_selectors.common import (
    FINAL_PAGE_SECONDS,
    PAGE_SIZE,
    ProgressView,
    catalogue,
    game_choices,
    game_title,
    paginate,
    preset_doc,
    progress_of,
    rules_in_words,
    tournament_or_404,
    visible_tournaments,
)
from tournaments.page_selectors.home import (
    TournamentCard,
    entry_counts,
    tournament_cards,
    winners_of,
)


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
    return _live(tournament_or_404(tournament_id, user), user, since=since)


def seat_label(seat: Seat) -> str:
    """A seat's bot as people read it: "Bot v2", "house heuristic", or "house heuristic (for
    Bot v2)" when a house bot played for a withdrawn or disqualified entry."""
    if seat.entry is None:
        return f"house {seat.house_bot}"
    label = seat.entry.version.label
    return f"house {seat.house_bot} (for {label})" if seat.substitute else label


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
    tournament = tournament_or_404(tournament_id, user)
    live = _live(tournament, user)
    assert live is not None
    return TournamentPage(tournament=tournament, live=live)
