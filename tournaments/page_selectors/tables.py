"""A table's page and the audit pages."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page
from django.db.models import Max, Prefetch
from django.http import Http404

import games
from games.log import place_in_words
from judge.counting import counted_points
from tournaments import services, visibility
from tournaments.models import (
    Deal,
    Fault,
    Seat,
    Table,
    Tournament,
    TournamentSummary,
)
from tournaments.page_selectors.common import (
    ScoreWords,
    game_title,
    paginate,
    score_words,
    table_results_visible,
    tournament_or_404,
    visible_tournaments,
)
from tournaments.page_selectors.tournaments import (
    SeatLine,
    seat_lines,
)

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
    sentence = f"{words} at {place_in_words(deal_index, decision)}"
    if deal_index is not None:
        sentence += ": the first legal action was played"
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
class ReplacedLine:
    """A seat the judge replaced, from deal ``number`` (from 1)."""

    label: str
    number: int


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
    replaced: list[ReplacedLine]
    times: list[TimeLine]
    house_bot: str
    hidden_reason: str
    sheet_page: Page | None = None  # the page of the score sheet shown (SHEET_PAGE_SIZE deals)
    faults_page: Page | None = None  # the page of the faults shown (FAULTS_PAGE_SIZE)
    live: bool = False  # hidden for now and not failed: the page refreshes itself until shown
    words: ScoreWords | None = None  # what Score and Points mean


#: Deals a page of a table's score sheet shows (a table may have 1,000 deals), and faults.
SHEET_PAGE_SIZE = 100
FAULTS_PAGE_SIZE = 50


def table_page(
    *,
    table_id: int,
    user: Any,
    page: str | int | None = None,
    faults_page: str | int | None = None,
) -> TablePage:
    """A table: its seats and, once its cards may be shown, places, scores, the score sheet
    deal by deal with running totals (a page of :data:`SHEET_PAGE_SIZE` deals, ``page``), the
    faults in words (a page of :data:`FAULTS_PAGE_SIZE`, ``faults_page``) and the decision
    times."""
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
    shown = table_results_visible(table=table, user=user)
    seats = seat_lines(table, user, shown)
    labels = {seat.position: seat.label for seat in seats}
    sheet: list[SheetLine] = []
    faults: list[FaultLine] = []
    times: list[TimeLine] = []
    totals = [0] * len(seats)
    sheet_page = faults_of = None
    if shown:
        running = [0] * len(seats)
        replaced_from = [s.replaced_deal for s in table.seats.all()]
        lower_is_better = games.game_class(table.tournament.game).lower_is_better
        for row in (
            Deal.objects.filter(table=table)
            .order_by("index")
            .values("id", "index", "points", "decisions", "faults")
        ):
            # As it counts: a replaced seat forfeits the rest of its table (judge.counting).
            points = counted_points(
                [[int(p) for p in row["points"]]], replaced_from, lower_is_better=lower_is_better
            )[0]
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
        # Running totals need every deal before: all are read, a page of them is shown.
        sheet_page = paginate(sheet, page, SHEET_PAGE_SIZE)
        sheet = list(sheet_page.object_list)
        faults_of = paginate(
            Fault.objects.filter(table=table).order_by("pk"), faults_page, FAULTS_PAGE_SIZE
        )
        faults = [
            FaultLine(
                seat=f.seat,
                label=labels.get(f.seat, f"seat {f.seat + 1}"),
                text=fault_in_words(
                    kind=f.kind, deal_index=f.deal_index, decision=f.decision, detail=f.detail
                ),
            )
            for f in faults_of.object_list
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
    replaced = [
        ReplacedLine(labels[s.position], (s.replaced_deal or 0) + 1)
        for s in table.seats.all()
        if shown and s.replaced
    ]
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
        sheet_page=sheet_page,
        faults_page=faults_of,
        live=not shown and table.status != Table.Status.FAILED,
        words=score_words(table.tournament),
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


@dataclasses.dataclass(frozen=True, slots=True)
class CheckLine:
    """An audit's check as its page shows it: what was checked, the verdict in words with its
    style (never colour alone: the word is there), what it looked at, what it found."""

    description: str
    verdict: str
    css: str  # a status-* class of tapis.css
    detail: str
    problems: tuple[str, ...]


VERDICT_STYLES = {
    services.Verdict.PASSED: "status-done",
    services.Verdict.FAILED: "status-failed",
    services.Verdict.NOT_CHECKED: "status-pending",
}


def check_lines(checks: tuple[services.Check, ...]) -> list[CheckLine]:
    return [
        CheckLine(
            description=check.description,
            verdict=check.verdict.value,
            css=VERDICT_STYLES[check.verdict],
            detail=check.detail,
            problems=check.problems,
        )
        for check in checks
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class DealAuditPage:
    deal: Deal
    table: Table
    tournament: Tournament
    audit: services.DealAudit

    @property
    def checks(self) -> list[CheckLine]:
        return check_lines(self.audit.checks)


# The replay page's refusals (page_selectors.deals); the audit page says
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
    if not table_results_visible(table=deal.table, user=user):
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

    @property
    def checks(self) -> list[CheckLine]:
        return check_lines(self.audit.checks) if self.audit is not None else []


def tournament_audit_page(*, tournament_id: int, user: Any) -> TournamentAuditPage:
    """A tournament's audit: every recorded deal re-played, every table's totals and places,
    and once the seed is revealed the commitment and each table's deal seed. A finished
    tournament never changes: its audit is the one made when it finished and stored in its
    summary (services.tournament_audit_store), else made on the first visit; either is then
    kept in the cache. A running one is audited on every visit (its recorded tables so
    far)."""
    tournament = tournament_or_404(tournament_id, user)
    final = tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)
    # v2: the audit kept as it is, with its checks (v1 kept a dict of its fields).
    key = f"pages:audit:tournament:v2:{tournament.pk}"
    if final:
        kept = cache.get(key)
        if isinstance(kept, services.TournamentAudit):
            return TournamentAuditPage(tournament=tournament, audit=kept, cached=True)
        stored = (
            TournamentSummary.objects.filter(tournament=tournament, audit__isnull=False)
            .values_list("audit", flat=True)
            .first()
        )
        if stored is not None:
            audit = services.TournamentAudit.from_json(stored)
            cache.set(key, audit, None)
            return TournamentAuditPage(tournament=tournament, audit=audit, cached=True)
    audit = services.tournament_audit(tournament=tournament, shown_only=True)
    if final:
        cache.set(key, audit, None)
    return TournamentAuditPage(tournament=tournament, audit=audit, cached=False)
