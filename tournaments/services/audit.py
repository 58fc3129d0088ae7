"""Audits: re-play recorded deals through the engine and check every stored row against them."""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Prefetch
from django.utils import timezone

import games
from games.base import JSON
from games.errors import GameError
from games.log import verify_deal
from judge.counting import counted_table
from tournaments import judging, seeds, visibility
from tournaments.models import (
    Deal,
    Decision,
    Seat,
    Table,
    Tournament,
    TournamentSummary,
    Trick,
)

log = logging.getLogger(__name__)

#: The columns of a trick that the audit compares with the replay.
TRICK_FIELDS = ("number", "leader", "cards", "winner", "points")


class Verdict(enum.StrEnum):
    """A check's outcome."""

    PASSED = "passed"
    FAILED = "failed"
    #: Not made: an earlier check failed (a log the engine cannot re-play), or there was
    #: nothing to check yet (the seed is secret until the end, no table recorded).
    NOT_CHECKED = "not checked"


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    """One check of an audit: ``name`` (a stable key), ``description`` (what is checked, in
    words), its ``verdict``, ``detail`` (what it looked at, or why it was not made) and the
    ``problems`` it found (the same lines as the audit's ``problems``)."""

    name: str
    description: str
    verdict: Verdict
    detail: str = ""
    problems: tuple[str, ...] = ()

    def as_json(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "description": self.description,
            "verdict": self.verdict.value,
            "detail": self.detail,
            "problems": list(self.problems),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Check:
        """The check that :meth:`as_json` wrote."""
        return cls(
            name=str(data["name"]),
            description=str(data["description"]),
            verdict=Verdict(data["verdict"]),
            detail=str(data["detail"]),
            problems=tuple(str(p) for p in data["problems"]),
        )


# The checks of a deal, in the order they are made: (name, description).
DEAL_CHECKS = (
    ("log", "The log describes this deal (its number and its cards)."),
    ("seed", "The deal was dealt from its table's seed."),
    ("actions", "Re-played through the rules engine, every action is legal and made by the seat "
     "whose turn it was."),
    ("points", "The deal's points stored are the replay's."),
    ("tricks", "The trick rows stored (leader, cards, winner, points) are the replay's tricks."),
    ("decisions", "The decision rows stored are the log's actions, seat by seat."),
    ("passes", "The passes stored (who gave what to whom) are the log's."),
)  # fmt: skip
DEAL_CHECK_WORDS = dict(DEAL_CHECKS)


@dataclasses.dataclass(frozen=True, slots=True)
class DealAudit:
    deal_id: int
    table_id: int
    index: int
    ok: bool
    problems: tuple[str, ...]
    checks: tuple[Check, ...] = ()

    def as_json(self) -> dict[str, JSON]:
        return {
            "deal": self.deal_id,
            "table": self.table_id,
            "index": self.index,
            "ok": self.ok,
            "problems": list(self.problems),
            "checks": [check.as_json() for check in self.checks],
        }


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentAudit:
    tournament_id: int
    ok: bool
    deals: int
    tables: int
    problems: tuple[str, ...]
    commitment_ok: bool | None  # None while the seed is secret
    checks: tuple[Check, ...] = ()

    def as_json(self) -> dict[str, JSON]:
        return {
            "tournament": self.tournament_id,
            "ok": self.ok,
            "deals": self.deals,
            "tables": self.tables,
            "commitment_ok": self.commitment_ok,
            "problems": list(self.problems),
            "checks": [check.as_json() for check in self.checks],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TournamentAudit:
        """The audit that :meth:`as_json` wrote (a finished tournament's stored one)."""
        commitment = data["commitment_ok"]
        return cls(
            tournament_id=int(data["tournament"]),
            ok=bool(data["ok"]),
            deals=int(data["deals"]),
            tables=int(data["tables"]),
            problems=tuple(str(p) for p in data["problems"]),
            commitment_ok=None if commitment is None else bool(commitment),
            checks=tuple(Check.from_json(check) for check in data["checks"]),
        )


class _Checks:
    """The checks of an audit as they are made, in a fixed order: each named check gets the
    problems found for it; the verdicts follow."""

    def __init__(self, names: Iterable[str]) -> None:
        self.found: dict[str, list[str]] = {name: [] for name in names}
        self.skipped: dict[str, str] = {}

    def fail(self, name: str, problem: str) -> None:
        self.found[name].append(problem)

    def skip(self, names: Iterable[str], why: str) -> None:
        for name in names:
            self.skipped.setdefault(name, why)

    @property
    def problems(self) -> tuple[str, ...]:
        return tuple(p for found in self.found.values() for p in found)

    def verdict(self, name: str) -> Verdict:
        if self.found[name]:
            return Verdict.FAILED
        return Verdict.NOT_CHECKED if name in self.skipped else Verdict.PASSED


def deal_audit(*, deal: Deal, engine: games.Game[object] | None = None) -> DealAudit:
    """Re-play a deal from its seed (or hands) and its log through the engine: every action
    legal and by the right seat, the points right; and check that the stored rows (points,
    tricks, decisions, passes) say the same as the replay. Each check has its verdict
    (``checks``, in :data:`DEAL_CHECKS`' order); ``problems`` gathers what they found."""
    table = deal.table
    tournament = table.tournament
    engine = engine or judging.tournament_engine(tournament=tournament)
    checks = _Checks(name for name, _ in DEAL_CHECKS)
    where = f"table {table.pk} (round {table.round.number}, table {table.number}) deal {deal.index}"
    entry = deal.log
    if entry.get("index") != deal.index or entry.get("deal") != deal.record:
        checks.fail("log", f"{where}: the log does not describe this deal")
    if deal.seed is not None and deal.seed != table.deal_seed:
        checks.fail(
            "seed", f"{where}: dealt from seed {deal.seed}, the table's seed is {table.deal_seed}"
        )
    after_replay = ("points", "tricks", "decisions", "passes")
    try:
        verdict = verify_deal(engine, entry, table.deal_seed)
    except GameError as exc:
        checks.fail("actions", f"{where}: unreadable log: {exc}")
        checks.skip(after_replay, "the log could not be re-played")
        return _deal_audit(deal, checks)
    if not verdict.ok:
        step = f" (action {verdict.step})" if verdict.step is not None else ""
        checks.fail("actions", f"{where}{step}: {verdict.message}")
        checks.skip(after_replay, "the re-play stopped at the faulty action")
        return _deal_audit(deal, checks)
    state = engine.deal_from_record(deal.index, deal.record)
    actions = entry["actions"]
    assert isinstance(actions, list)
    for _, action in actions:
        state.apply_action(action)
    if deal.points != state.points():
        checks.fail("points", f"{where}: the row says {deal.points}, the replay {state.points()}")
    # Sorted here rather than by the query: a tournament's audit prefetches every deal's rows.
    tricks = sorted(deal.tricks.all(), key=lambda t: t.number)
    rows = [(t.leader, list(t.cards), t.winner, t.points) for t in tricks]
    replayed = [(t.leader, list(t.cards), t.winner, t.points) for t in state.tricks()]
    if rows != replayed:
        checks.fail("tricks", f"{where}: the trick rows differ from the replay")
    decisions = [[d.seat, d.action] for d in sorted(deal.decision_set.all(), key=lambda d: d.step)]
    if decisions != [list(a) for a in actions]:
        checks.fail("decisions", f"{where}: the decision rows differ from the log")
    if deal.passes != engine.passes(actions):
        checks.fail("passes", f"{where}: the passes differ from the log")
    return _deal_audit(deal, checks)


def _deal_audit(deal: Deal, checks: _Checks) -> DealAudit:
    problems = checks.problems
    return DealAudit(
        deal.pk,
        deal.table_id,
        deal.index,
        not problems,
        problems,
        tuple(
            Check(
                name=name,
                description=description,
                verdict=checks.verdict(name),
                detail=checks.skipped.get(name, ""),
                problems=tuple(checks.found[name]),
            )
            for name, description in DEAL_CHECKS
        ),
    )


# The checks of a tournament besides its deals', in the order the page lists them.
TOURNAMENT_CHECKS = (
    ("commitment", "The seed matches the commitment published when the tournament was created."),
    ("table_seeds", "Each table's deal seed comes from that seed."),
    ("deals_present", "Each recorded table has all its deals, numbered from the first on."),
)
SEATS_CHECK = (
    "seats",
    "Each table's seats' scores and places follow from its deals' points (a replaced seat "
    "forfeiting the rest of its table).",
)


def tournament_audit(*, tournament: Tournament, shown_only: bool = False) -> TournamentAudit:
    """Audit every recorded deal of a tournament, each table's totals and places, and, once
    the seed is revealed, the commitment and every table's deal seed. With ``shown_only``,
    only the tables whose play may be shown (``visibility.tables_shown_q``): a problem names
    a table's scores, places and seeds, so a public report leaves out a duplicate round
    still being played. ``checks``: each check with its verdict (the deals' checks over every
    deal); ``problems`` gathers what they found."""
    names = [name for name, _ in TOURNAMENT_CHECKS]
    deal_names = [f"deal:{name}" for name, _ in DEAL_CHECKS]
    checks = _Checks([*names, *deal_names, SEATS_CHECK[0]])
    commitment_ok: bool | None = None
    seed = visibility.shown_seed(tournament=tournament)
    if seed is not None:
        commitment_ok = seeds.commitment_matches(seed, tournament.commitment)
        if not commitment_ok:
            checks.fail("commitment", "the revealed seed does not match the published commitment")
    else:
        checks.skip(["commitment", "table_seeds"], "the seed is secret until the end")
    engine = judging.tournament_engine(tournament=tournament)
    tables = Table.objects.filter(tournament=tournament, status=Table.Status.DONE)
    if shown_only:
        tables = tables.filter(visibility.tables_shown_q())
    tables = tables.select_related("round", "tournament").order_by("round__number", "number")
    # Every deal with its tricks and decisions, and every seat, in a few queries whatever the
    # number of tables (not a query per table and two per deal).
    deals_of: dict[int, list[Deal]] = defaultdict(list)
    for deal in (
        Deal.objects.filter(table__in=tables)
        .order_by("table_id", "index")
        .prefetch_related(
            Prefetch("tricks", Trick.objects.only("deal_id", *TRICK_FIELDS)),
            Prefetch("decision_set", Decision.objects.only("deal_id", "step", "seat", "action")),
        )
    ):
        deals_of[deal.table_id].append(deal)
    seats_of: dict[int, list[Seat]] = defaultdict(list)
    for seat in Seat.objects.filter(table__in=tables).order_by("table_id", "position"):
        seats_of[seat.table_id].append(seat)
    deal_count = table_count = 0
    not_checked: dict[str, int] = defaultdict(int)  # deal check -> deals where it was not made
    for table in tables:
        table_count += 1
        where = f"round {table.round.number} table {table.number}"
        if seed is not None:
            expected = seeds.table_deal_seed(
                seed,
                round_number=table.round.number,
                table_number=table.number,
                duplicate=tournament.duplicate,
            )
            if expected != table.deal_seed:
                checks.fail(
                    "table_seeds", f"{where}: its deal seed does not come from the revealed seed"
                )
        deal_points = []
        deals = deals_of[table.pk]
        if [d.index for d in deals] != list(range(tournament.deals_per_table)):
            checks.fail(
                "deals_present", f"{where}: expected deals 0..{tournament.deals_per_table - 1}"
            )
        for deal in deals:
            deal.table = table
            deal_count += 1
            audit = deal_audit(deal=deal, engine=engine)
            for check in audit.checks:
                for problem in check.problems:
                    checks.fail(f"deal:{check.name}", problem)
                if check.verdict is Verdict.NOT_CHECKED:
                    not_checked[check.name] += 1
            deal_points.append(list(deal.points))
        if not deal_points:
            continue
        seats = seats_of[table.pk]
        counted = counted_table(engine, deal_points, [s.replaced_deal for s in seats])
        scores, places = counted.scores, counted.places
        if any(s.replaced != (s.replaced_deal is not None) for s in seats):
            checks.fail(SEATS_CHECK[0], f"{where}: a seat's replaced mark and deal disagree")
        if [s.score for s in seats] != scores or [s.place for s in seats] != places:
            checks.fail(
                SEATS_CHECK[0],
                f"{where}: seats say scores {[s.score for s in seats]} places "
                f"{[s.place for s in seats]}, the deals give {scores} and {places}",
            )
    if not table_count:
        checks.skip([*names[1:], *deal_names, SEATS_CHECK[0]], "no table recorded yet")
    tables_words = f"{table_count} table{'s' if table_count != 1 else ''}"
    deals_words = f"{deal_count} deal{'s' if deal_count != 1 else ''}"
    listed = [
        *TOURNAMENT_CHECKS,
        *(
            (f"deal:{name}", f"Every deal: {words[0].lower()}{words[1:]}")
            for name, words in DEAL_CHECKS
        ),
        SEATS_CHECK,
    ]
    result = []
    for name, description in listed:
        verdict = checks.verdict(name)
        detail = checks.skipped.get(name, "")
        if not detail and name != "commitment":
            if name.startswith("deal:"):
                skipped = not_checked[name.removeprefix("deal:")]
                detail = f"over {deals_words}" + (
                    f" ({skipped} not re-played: see the failed checks)" if skipped else ""
                )
            else:
                detail = f"over {tables_words}"
        result.append(
            Check(
                name=name,
                description=description,
                verdict=verdict,
                detail=detail,
                problems=tuple(checks.found[name]),
            )
        )
    problems = checks.problems
    return TournamentAudit(
        tournament.pk,
        not problems,
        deal_count,
        table_count,
        problems,
        commitment_ok,
        tuple(result),
    )


def tournament_audit_store(*, tournament_id: int) -> TournamentAudit | None:
    """Make a finished tournament's public audit (:func:`tournament_audit` of the tables whose
    play may be shown: all of them once it is finished) and store it in its summary, where its
    audit page reads it instead of re-playing every deal on a visit. Queued when the
    tournament finishes (:mod:`tournaments.queue`); safe to run twice (the same audit is
    written again). None, and nothing stored, for a tournament that is not finished or has no
    summary."""
    tournament = Tournament.objects.filter(
        pk=tournament_id, status=Tournament.Status.FINISHED
    ).first()
    if tournament is None or not TournamentSummary.objects.filter(tournament=tournament).exists():
        return None
    audit = tournament_audit(tournament=tournament, shown_only=True)
    TournamentSummary.objects.filter(tournament=tournament).update(
        audit=audit.as_json(), audited_at=timezone.now()
    )
    return audit
