"""Audits: re-play recorded deals through the engine and check every stored row against them."""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

import games
from games.base import JSON
from games.errors import GameError
from games.log import verify_deal
from tournaments import judging, seeds, visibility
from tournaments.models import (
    Deal,
    Table,
    Tournament,
)

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True)
class DealAudit:
    deal_id: int
    table_id: int
    index: int
    ok: bool
    problems: tuple[str, ...]

    def as_json(self) -> dict[str, JSON]:
        return {
            "deal": self.deal_id,
            "table": self.table_id,
            "index": self.index,
            "ok": self.ok,
            "problems": list(self.problems),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentAudit:
    tournament_id: int
    ok: bool
    deals: int
    tables: int
    problems: tuple[str, ...]
    commitment_ok: bool | None  # None while the seed is secret

    def as_json(self) -> dict[str, JSON]:
        return {
            "tournament": self.tournament_id,
            "ok": self.ok,
            "deals": self.deals,
            "tables": self.tables,
            "commitment_ok": self.commitment_ok,
            "problems": list(self.problems),
        }


def deal_audit(*, deal: Deal, engine: games.Game[object] | None = None) -> DealAudit:
    """Re-play a deal from its seed (or hands) and its log through the engine: every action
    legal and by the right seat, the points right; and check that the stored rows (points,
    tricks, decisions, passes) say the same as the replay."""
    table = deal.table
    tournament = table.tournament
    engine = engine or judging.tournament_engine(tournament=tournament)
    problems: list[str] = []
    where = f"table {table.pk} (round {table.round.number}, table {table.number}) deal {deal.index}"
    entry = deal.log
    if entry.get("index") != deal.index or entry.get("deal") != deal.record:
        problems.append(f"{where}: the log does not describe this deal")
    if deal.seed is not None and deal.seed != table.deal_seed:
        problems.append(
            f"{where}: dealt from seed {deal.seed}, the table's seed is {table.deal_seed}"
        )
    try:
        verdict = verify_deal(engine, entry, table.deal_seed)
    except GameError as exc:
        problems.append(f"{where}: unreadable log: {exc}")
        return DealAudit(deal.pk, table.pk, deal.index, False, tuple(problems))
    if not verdict.ok:
        step = f" (action {verdict.step})" if verdict.step is not None else ""
        problems.append(f"{where}{step}: {verdict.message}")
        return DealAudit(deal.pk, table.pk, deal.index, False, tuple(problems))
    state = engine.deal_from_record(deal.index, deal.record)
    actions = entry["actions"]
    assert isinstance(actions, list)
    for _, action in actions:
        state.apply_action(action)
    if deal.points != state.points():
        problems.append(f"{where}: the row says {deal.points}, the replay {state.points()}")
    rows = [(t.leader, list(t.cards), t.winner, t.points) for t in deal.tricks.order_by("number")]
    replayed = [(t.leader, list(t.cards), t.winner, t.points) for t in state.tricks()]
    if rows != replayed:
        problems.append(f"{where}: the trick rows differ from the replay")
    decisions = [[d.seat, d.action] for d in deal.decision_set.order_by("step")]
    if decisions != [list(a) for a in actions]:
        problems.append(f"{where}: the decision rows differ from the log")
    if deal.passes != engine.passes(actions):
        problems.append(f"{where}: the passes differ from the log")
    return DealAudit(deal.pk, table.pk, deal.index, not problems, tuple(problems))


def tournament_audit(*, tournament: Tournament, shown_only: bool = False) -> TournamentAudit:
    """Audit every recorded deal of a tournament, each table's totals and places, and, once
    the seed is revealed, the commitment and every table's deal seed. With ``shown_only``,
    only the tables whose play may be shown (``visibility.tables_shown_q``): a problem names
    a table's scores, places and seeds, so a public report leaves out a duplicate round
    still being played."""
    problems: list[str] = []
    commitment_ok: bool | None = None
    seed = visibility.shown_seed(tournament=tournament)
    if seed is not None:
        commitment_ok = seeds.commitment_matches(seed, tournament.commitment)
        if not commitment_ok:
            problems.append("the revealed seed does not match the published commitment")
    engine = judging.tournament_engine(tournament=tournament)
    tables = Table.objects.filter(tournament=tournament, status=Table.Status.DONE)
    if shown_only:
        tables = tables.filter(visibility.tables_shown_q())
    tables = tables.select_related("round", "tournament").order_by("round__number", "number")
    deal_count = table_count = 0
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
                problems.append(f"{where}: its deal seed does not come from the revealed seed")
        deal_points = []
        deals = list(Deal.objects.filter(table=table).order_by("index"))
        if [d.index for d in deals] != list(range(tournament.deals_per_table)):
            problems.append(f"{where}: expected deals 0..{tournament.deals_per_table - 1}")
        for deal in deals:
            deal.table = table
            deal_count += 1
            audit = deal_audit(deal=deal, engine=engine)
            problems.extend(audit.problems)
            deal_points.append(list(deal.points))
        if not deal_points:
            continue
        scores = engine.match_scores(deal_points)
        places = engine.places(scores)
        seats = list(table.seats.order_by("position"))
        if [s.score for s in seats] != scores or [s.place for s in seats] != places:
            problems.append(
                f"{where}: seats say scores {[s.score for s in seats]} places "
                f"{[s.place for s in seats]}, the deals give {scores} and {places}"
            )
    return TournamentAudit(
        tournament.pk, not problems, deal_count, table_count, tuple(problems), commitment_ok
    )
