"""Reads of the members' pages (tournaments/pages/accounts.py, authoring.py, organising.py):
a member's own account, bots, versions, entries and tournaments, and a bot's log at a table.

Who may see what is decided here through :mod:`tournaments.visibility` and
:mod:`api.permissions` (the same rules as the API), never in the views: a page a member may
not see raises ``Http404`` (it is not theirs: nothing says it exists) or ``PermissionDenied``
(it is theirs, but hidden for now, with the reason).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import Http404
from django.utils import timezone

import games
from api.models import ApiToken
from api.permissions import is_organiser, owns_bot, runs_tournament
from judge.counting import counted_points
from judge.seats import LOG_CUT_NOTE
from tournaments import scoring, selectors, visibility
from tournaments.models import Bot, BotVersion, Deal, Entry, Seat, Table, Tournament
from tournaments.page_selectors.tables import TablePage, fault_in_words, table_page
from tournaments.tournament_settings import TournamentSettings


@dataclasses.dataclass(frozen=True, slots=True)
class AccountPage:
    tokens: Sequence[ApiToken]
    bots: Sequence[Bot]
    entries: Sequence[Entry]
    tournaments: Sequence[Tournament]
    organiser: bool


def account_page(*, user: Any) -> AccountPage:
    """Everything of ``user``: API tokens (prefixes only), bots, entries, tournaments."""
    bots = list(
        Bot.objects.filter(owner=user)
        .annotate(version_count=Count("versions"))
        .order_by("name", "pk")
    )
    entries = list(
        Entry.objects.filter(user=user, tournament__practice=False)
        .select_related("tournament", "version__bot")
        .order_by("-created_at", "-pk")[:50]
    )
    organised = list(
        Tournament.objects.filter(organiser=user, practice=False)
        .annotate(entry_total=Count("entries"))
        .order_by("-created_at", "-pk")[:50]
    )
    return AccountPage(
        tokens=list(ApiToken.objects.filter(user=user)),
        bots=bots,
        entries=entries,
        tournaments=organised,
        organiser=is_organiser(user),
    )


def game_choices() -> list[tuple[str, str]]:
    """(name, title) of every game the engine knows."""
    return [(str(game["name"]), str(game["title"])) for game in games.catalogue()]


def game_catalogue() -> list[dict[str, Any]]:
    """The engine's declared games, presets and options (as ``GET /api/v1/games/``)."""
    return list(games.catalogue())


def game_entry(*, game: str) -> dict[str, Any]:
    """The engine's declaration of ``game`` (its presets and options); Http404 if unknown."""
    for entry in games.catalogue():
        if entry["name"] == game:
            return dict(entry)
    raise Http404("no such game")


def game_table_sizes(*, game: dict[str, Any]) -> list[int]:
    """The table sizes a game declares (its ``players`` option: its choices, or from its
    minimum to its maximum)."""
    for option in game.get("options", []):
        if option.get("name") != "players":
            continue
        if option.get("choices"):
            return sorted(int(n) for n in option["choices"])
        if option.get("minimum") is not None and option.get("maximum") is not None:
            return list(range(int(option["minimum"]), int(option["maximum"]) + 1))
    return []


# ---------------------------------------------------------------------------------------------
# Bot authors
# ---------------------------------------------------------------------------------------------


def own_bot(*, user: Any, bot_id: int) -> Bot:
    """The bot ``bot_id`` if ``user`` owns it or is staff; 404 otherwise."""
    bot = Bot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None or not (owns_bot(user, bot) or getattr(user, "is_staff", False)):
        raise Http404("no such bot of yours")
    return bot


@dataclasses.dataclass(frozen=True, slots=True)
class BotPage:
    bot: Bot
    versions: Sequence[BotVersion]
    open_tournaments: Sequence[Tournament]
    entries: Sequence[Entry]
    seats: Sequence[Seat]
    mine: bool


def bot_page(*, user: Any, bot_id: int) -> BotPage:
    """A bot's page for its owner (and staff): versions with their status, the open
    tournaments of its game a ready version may enter, its entries, and its seats at tables
    (each linked to its log when that may be shown)."""
    bot = own_bot(user=user, bot_id=bot_id)
    versions = list(bot.versions.order_by("-number"))
    return BotPage(
        bot=bot,
        versions=versions,
        open_tournaments=list(
            Tournament.objects.filter(status=Tournament.Status.OPEN, game=bot.game).order_by(
                "-created_at", "-pk"
            )
        ),
        entries=list(
            Entry.objects.filter(version__bot=bot, tournament__practice=False)
            .select_related("tournament", "version")
            .order_by("-created_at", "-pk")
        ),
        seats=bot_seats(user=user, bot=bot),
        mine=owns_bot(user, bot),
    )


def bot_seats(*, user: Any, bot: Bot, limit: int = 100) -> list[Seat]:
    """The seats of ``bot``'s entries at tables whose play may be shown (newest first), each
    with ``log_shown`` set for ``user``."""
    seats = list(
        Seat.objects.filter(entry__version__bot=bot)
        .filter(visibility.tables_shown_q(prefix="table__"))
        .select_related("table__tournament", "table__round", "entry__version")
        .order_by("-table__finished_at", "-pk")[:limit]
    )
    for seat in seats:
        seat.log_shown = visibility.seat_log_shown(user=user, seat=seat)  # type: ignore[attr-defined]
    return seats


def own_version(*, user: Any, bot_id: int, number: int) -> BotVersion:
    bot = own_bot(user=user, bot_id=bot_id)
    version = BotVersion.objects.select_related("bot").filter(bot=bot, number=number).first()
    if version is None:
        raise Http404("no such version")
    return version


def enterable_versions(*, user: Any, tournament: Tournament) -> QuerySet[BotVersion]:
    """The ready versions of ``user``'s bots of the tournament's game not yet entered in it;
    none when the tournament takes one entry per author and ``user`` has one."""
    if not tournament.allow_multiple_entries and _own_entries(user, tournament):
        return BotVersion.objects.none()
    return (
        BotVersion.objects.filter(
            bot__owner=user, bot__game=tournament.game, status=BotVersion.Status.READY
        )
        .exclude(entries__tournament=tournament)
        .select_related("bot")
        .order_by("bot__name", "-number")
    )


def _own_entries(user: Any, tournament: Tournament) -> list[Entry]:
    return list(
        Entry.objects.filter(tournament=tournament, user_id=user.pk, withdrawn=False)
        .select_related("version__bot")
        .order_by("pk")
    )


@dataclasses.dataclass(frozen=True, slots=True)
class EntryOffer:
    """What an author may do about an open tournament: its registration window, its rule on
    entries, the author's entries in it and how many of their versions may still enter."""

    tournament: Tournament
    opens_at: datetime | None
    closes_at: datetime | None
    registration_open: bool
    opens_later: bool
    one_entry: bool
    entries: Sequence[Entry]
    enterable: int

    @property
    def may_enter(self) -> bool:
        return self.registration_open and self.enterable > 0


def entry_offer(*, user: Any, tournament: Tournament) -> EntryOffer | None:
    """The Enter block of an open tournament's page for a logged-in member (None otherwise)."""
    if (
        not getattr(user, "is_authenticated", False)
        or tournament.practice
        or tournament.status != Tournament.Status.OPEN
    ):
        return None
    now = timezone.now()
    opens, closes = tournament.registration_opens_at, tournament.registration_closes_at
    return EntryOffer(
        tournament=tournament,
        opens_at=opens,
        closes_at=closes,
        registration_open=(opens is None or opens <= now) and (closes is None or now <= closes),
        opens_later=opens is not None and now < opens,
        one_entry=not tournament.allow_multiple_entries,
        entries=_own_entries(user, tournament),
        enterable=enterable_versions(user=user, tournament=tournament).count(),
    )


def open_tournament(*, tournament_id: int) -> Tournament:
    tournament = Tournament.objects.filter(pk=tournament_id, practice=False).first()
    if tournament is None or tournament.status == Tournament.Status.DRAFT:
        raise Http404("no such tournament")
    return tournament


def own_entry(*, user: Any, entry_id: int) -> Entry:
    entry = (
        Entry.objects.select_related("tournament", "version__bot")
        .filter(pk=entry_id, tournament__practice=False)
        .first()
    )
    if entry is None or not (entry.user_id == user.pk or getattr(user, "is_staff", False)):
        raise Http404("no such entry of yours")
    return entry


@dataclasses.dataclass(frozen=True, slots=True)
class SeatLog:
    seat: Seat
    table: Table
    log: str
    faults: list[dict[str, Any]]
    fault_texts: list[str]  # the faults in words, counted from 1 as the table page says them
    truncated: bool
    decisions: int
    mean_time: float | None
    p99_time: float | None


# The note the judge appends to a bot's stderr when it cut it (judge.seats.LOG_CUT_NOTE).
TRUNCATION_MARK = LOG_CUT_NOTE.strip().split("{", 1)[0]


def _fault_text(fault: dict[str, Any]) -> str:
    """A fault of a seat's result in the words of the table page."""
    return fault_in_words(
        kind=str(fault.get("kind", "")),
        deal_index=fault.get("deal"),
        decision=fault.get("decision"),
        detail=str(fault.get("detail") or ""),
    )


def seat_log(*, user: Any, table_id: int, position: int) -> SeatLog:
    """What the bot at ``position`` of table ``table_id`` wrote to stderr, its faults and its
    decision times: for the bot's owner and staff once the table may be shown
    (:func:`tournaments.visibility.seat_log_shown`). 404 for a seat that does not exist, that
    is not the user's, or of a tournament the user may not see (a draft, someone else's
    practice run, a running practice run to staff); 403 with the reason while the table is
    hidden."""
    seat = (
        Seat.objects.select_related("table__tournament", "table__round", "entry__version__bot")
        .filter(table_id=table_id, position=position)
        .first()
    )
    if (
        seat is None
        or seat.table.tournament.status == Tournament.Status.DRAFT
        or not visibility.tournament_shown(user=user, tournament=seat.table.tournament)
    ):
        raise Http404("no such seat")
    staff = bool(getattr(user, "is_staff", False))
    owner = seat.entry is not None and seat.entry.user_id == getattr(user, "pk", None)
    if not (staff or (getattr(user, "is_authenticated", False) and owner)):
        raise Http404("no such seat of yours")
    if not visibility.seat_log_shown(user=user, seat=seat):
        raise PermissionDenied(visibility.table_hidden_reason(table=seat.table))
    result = seat.table.result if isinstance(seat.table.result, dict) else {}
    summary: dict[str, Any] = {}
    for line in result.get("seats", []) or []:
        if isinstance(line, dict) and line.get("seat") == position:
            summary = line
    faults = [f for f in summary.get("faults", []) if isinstance(f, dict)]
    return SeatLog(
        seat=seat,
        table=seat.table,
        log=seat.log,
        faults=faults,
        fault_texts=[_fault_text(f) for f in faults],
        truncated=TRUNCATION_MARK in seat.log,
        decisions=seat.decisions,
        mean_time=seat.mean_time,
        p99_time=summary.get("p99_time"),
    )


# ---------------------------------------------------------------------------------------------
# Organisers
# ---------------------------------------------------------------------------------------------


def may_organise(*, user: Any) -> bool:
    return is_organiser(user)


def run_tournament(*, user: Any, tournament_id: int) -> Tournament:
    """The tournament ``tournament_id`` if ``user`` runs it (its organiser, or staff); 404
    (and for a practice run: nobody organises that)."""
    tournament = (
        Tournament.objects.select_related("organiser")
        .filter(pk=tournament_id, practice=False)
        .first()
    )
    if tournament is None or not runs_tournament(user, tournament):
        raise Http404("no such tournament of yours")
    return tournament


@dataclasses.dataclass(frozen=True, slots=True)
class OrganiserPage:
    tournament: Tournament
    entries: Sequence[Entry]
    failed_tables: Sequence[Table]
    progress: selectors.Progress | None

    @property
    def before_start(self) -> bool:
        """Draft or open: its settings may change (services.tournament_update)."""
        return self.tournament.status in (Tournament.Status.DRAFT, Tournament.Status.OPEN)

    @property
    def one_table_swiss(self) -> bool:
        """A Swiss tournament of several rounds, not started, whose entries fill a single
        table: every round would be that same table, the same bots, so Swiss pairing does
        nothing (the organiser page warns)."""
        t = self.tournament
        active = [e for e in self.entries if not (e.withdrawn or e.disqualified)]
        return (
            self.before_start
            and t.seating == "swiss"
            and t.rounds > 1
            and 0 < len(active) <= t.table_size
        )

    @property
    def over(self) -> bool:
        """Finished or cancelled: nothing more to do (no cancel, no entry to remove)."""
        return self.tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)


def failure_reason(error: str) -> str:
    r"""What a failed table's error says in one line: its last (the exception and its message,
    after the traceback that the page shows folded).

    >>> failure_reason('Traceback (most recent call last):\n  File "x.py"\nValueError: no\n')
    'ValueError: no'
    >>> failure_reason("")
    ''
    """
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def organiser_page(*, user: Any, tournament_id: int) -> OrganiserPage:
    """A tournament as its organiser runs it: entries (with their flags), its progress once
    it has started (not for one cancelled before), and the failed tables with their attempts
    and reason (``reason``: :func:`failure_reason` of their error)."""
    tournament = run_tournament(user=user, tournament_id=tournament_id)
    failed = list(
        Table.objects.filter(tournament=tournament, status=Table.Status.FAILED)
        .select_related("round")
        .order_by("round__number", "number")
    )
    for table in failed:
        table.reason = failure_reason(table.error)  # type: ignore[attr-defined]
    return OrganiserPage(
        tournament=tournament,
        entries=list(
            Entry.objects.filter(tournament=tournament)
            .select_related("version__bot", "user")
            .order_by("pk")
        ),
        failed_tables=failed,
        progress=(
            selectors.tournament_progress(tournament=tournament)
            if tournament.started_at is not None
            else None
        ),
    )


def tournament_game(*, tournament: Tournament) -> dict[str, Any]:
    """The engine's declaration of the tournament's game (as :func:`game_catalogue`)."""
    for game in games.catalogue():
        if game["name"] == tournament.game:
            return dict(game)
    raise Http404("no such game")


def tournament_form_initial(*, tournament: Tournament) -> dict[str, Any]:
    """The settings of ``tournament`` as its settings form shows them: what the organiser
    chose, with the engine's defaults left empty (the table size when it is the preset's: it
    is then no ``players`` option; the place points when they are the default for the table
    size), so that a new preset brings its own. ``options`` are the rule options but
    ``players``."""
    initial: dict[str, Any] = {
        name: getattr(tournament, name)
        for name in TournamentSettings.names()
        if name not in ("table_size", "place_points")
    }
    options = dict(tournament.options or {})
    initial["table_size"] = options.pop("players", None)
    initial["options"] = options
    points = list(tournament.place_points or [])
    default = list(scoring.default_place_points(tournament.table_size))
    initial["place_points"] = ", ".join(map(str, points)) if points != default else ""
    return initial


def run_entry(*, user: Any, tournament: Tournament, entry_id: int) -> Entry:
    entry = Entry.objects.filter(pk=entry_id, tournament=tournament).first()
    if entry is None:
        raise Http404("no such entry")
    return entry


def run_table(*, tournament: Tournament, table_id: int) -> Table:
    table = (
        Table.objects.select_related("tournament")
        .filter(pk=table_id, tournament=tournament)
        .first()
    )
    if table is None:
        raise Http404("no such table")
    return table


def organised_q(*, user: Any) -> Q:
    return Q(organiser=user)


# ---------------------------------------------------------------------------------------------
# Practice runs (a version's "try it")
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class PracticeLine:
    """A practice run as its version's page lists it."""

    tournament: Tournament
    table: Table | None
    state: str  # waiting, playing, finished, failed

    @property
    def over(self) -> bool:
        return self.state in ("finished", "failed")


@dataclasses.dataclass(frozen=True, slots=True)
class PracticeDeal:
    id: int
    index: int
    points: list[int]


@dataclasses.dataclass(frozen=True, slots=True)
class PracticePage:
    line: PracticeLine
    version: BotVersion
    seat: int | None  # the author's seat at the table
    deals: list[PracticeDeal]  # once its play may be shown
    results: TablePage | None  # the same, as the table page shows them (if asked for)
    error: str  # why it failed, in one line

    @property
    def tournament(self) -> Tournament:
        return self.line.tournament


def _practice_state(tournament: Tournament, table: Table | None) -> str:
    if tournament.status == Tournament.Status.CANCELLED:
        return "failed"
    if tournament.status == Tournament.Status.FINISHED:
        return "finished"
    if table is not None and table.status == Table.Status.RUNNING:
        return "playing"
    return "waiting"


def _practice_line(tournament: Tournament) -> PracticeLine:
    table = next(iter(tournament.tables.all()), None)
    return PracticeLine(tournament, table, _practice_state(tournament, table))


def _practices() -> QuerySet[Tournament]:
    return (
        Tournament.objects.filter(practice=True)
        .defer("options", "place_points")
        .prefetch_related(
            Prefetch("tables", queryset=Table.objects.defer("result", "error").order_by("pk")),
            Prefetch("entries", queryset=Entry.objects.select_related("version__bot")),
        )
    )


def version_practices(*, user: Any, version: BotVersion, limit: int = 10) -> list[PracticeLine]:
    """The latest practice runs of ``version`` that ``user`` may see, newest first."""
    runs = (
        _practices()
        .filter(visibility.tournaments_shown_q(user=user), entries__version=version)
        .order_by("-created_at", "-pk")[:limit]
    )
    return [_practice_line(t) for t in runs]


def practice_page(*, user: Any, practice_id: int, results: bool = True) -> PracticePage:
    """A practice run: its settings, its state and, once played, its deals and (with
    ``results``) its table's results as the table page shows them (the score sheet deal by
    deal with a replay of each, the faults in words, the decision times). Http404 for a run
    that is not one ``user`` may see (:func:`tournaments.visibility.practice_shown`): another
    author's, or one still playing for staff."""
    tournament = _practices().filter(pk=practice_id).first()
    if tournament is None or not visibility.tournament_shown(user=user, tournament=tournament):
        raise Http404("no such practice run")
    line = _practice_line(tournament)
    entry = next(iter(tournament.entries.all()))
    seat = None
    shown_results = None
    deals: list[PracticeDeal] = []
    error = ""
    if line.table is not None:
        seat = (
            Seat.objects.filter(table=line.table, entry=entry)
            .values_list("position", flat=True)
            .first()
        )
        if visibility.table_shown(user=user, table=line.table):
            rows = list(
                Deal.objects.filter(table=line.table)
                .order_by("index")
                .values_list("pk", "index", "points")
            )
            counted = counted_points(
                [[int(p) for p in points] for _, _, points in rows],
                _replaced_deals(line.table),
                lower_is_better=games.game_class(tournament.game).lower_is_better,
            )
            deals = [
                PracticeDeal(pk, index, points)
                for (pk, index, _), points in zip(rows, counted, strict=True)
            ]
            if results:
                shown_results = table_page(table_id=line.table.pk, user=user)
        if line.state == "failed":
            reason = Table.objects.values_list("error", flat=True).get(pk=line.table.pk)
            error = failure_reason(reason) or "no reason was recorded"
    return PracticePage(
        line=line,
        version=entry.version,
        seat=seat,
        deals=deals,
        results=shown_results,
        error=error,
    )


def _replaced_deals(table: Table) -> list[int | None]:
    """The deal from which each seat of ``table`` was replaced (None: never)."""
    return list(
        Seat.objects.filter(table=table)
        .order_by("position")
        .values_list("replaced_deal", flat=True)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class VersionPage:
    version: BotVersion
    mine: bool  # staff see every version's page; only its owner tries it
    practices: Sequence[PracticeLine]

    @property
    def may_try(self) -> bool:
        return self.mine and self.version.status == BotVersion.Status.READY


def version_page(*, user: Any, bot_id: int, number: int) -> VersionPage:
    """A version's page: the version (its owner and staff; 404 otherwise), whether ``user``
    owns it, and its practice runs ``user`` may see."""
    version = own_version(user=user, bot_id=bot_id, number=number)
    return VersionPage(
        version=version,
        mine=owns_bot(user, version.bot),
        practices=version_practices(user=user, version=version),
    )
