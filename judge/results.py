"""A finished table as the judge hands it over: per-seat results, per-deal points, faults and
the replay log, built from what the table loop (judge.runner) recorded."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import games
from games.base import JSON
from judge.counting import counted_table, replaced_deal
from judge.faults import Fault
from judge.protocol import PROTOCOL_VERSION
from judge.seats import decision_times_summary


@dataclasses.dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat of a finished table."""

    seat: int
    bot: str  # BotSpec.describe()
    name: str | None  # the name the bot gave in ready
    total: int  # as it counts (judge.counting): a replaced seat forfeits the rest of its table
    score: int
    place: int
    decisions: int  # decisions the bot itself was asked (not its replacement)
    mean_time: float  # seconds, over those decisions
    p99_time: float
    bank_left: float
    faults: tuple[Fault, ...]
    replaced: bool
    replaced_by: str | None
    replaced_at: dict[str, int | None] | None  # {"deal": d, "decision": n} of the last fault
    log: str  # the bot's stderr, capped
    replaced_deal: int | None = None  # the deal from which it counts as replaced

    def as_json(self, *, with_log: bool = True) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "seat": self.seat,
            "bot": self.bot,
            "name": self.name,
            "total": self.total,
            "score": self.score,
            "place": self.place,
            "decisions": self.decisions,
            "mean_time": round(self.mean_time, 6),
            "p99_time": round(self.p99_time, 6),
            "bank_left": round(self.bank_left, 3),
            "faults": [f.as_json() for f in self.faults],
            "replaced": self.replaced,
            "replaced_by": self.replaced_by,
            "replaced_at": dict(self.replaced_at) if self.replaced_at is not None else None,
            "replaced_deal": self.replaced_deal,
        }
        if with_log:
            out["log"] = self.log
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class TableResult:
    """A finished table: per-seat results, per-deal points, faults and the replay log."""

    game: str
    preset: str
    seed: int
    seats: tuple[SeatResult, ...]
    deal_points: tuple[tuple[int, ...], ...]  # as played (the replacement's own points)
    faults: tuple[Fault, ...]
    log: dict[str, JSON]  # the replay log (games.log format v1 plus times and faults)
    elapsed: float  # wall-clock seconds for the whole table
    counted_points: tuple[tuple[int, ...], ...] = ()  # as they count (judge.counting)

    @property
    def totals(self) -> list[int]:
        return [s.total for s in self.seats]

    @property
    def scores(self) -> list[int]:
        return [s.score for s in self.seats]

    @property
    def places(self) -> list[int]:
        return [s.place for s in self.seats]

    @property
    def replaced(self) -> list[int]:
        """The seats handed to a built-in bot."""
        return [s.seat for s in self.seats if s.replaced]

    def as_json(self, *, with_log: bool = True) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "game": self.game,
            "preset": self.preset,
            "seed": self.seed,
            "deals": len(self.deal_points),
            "elapsed": round(self.elapsed, 3),
            "totals": list[JSON](self.totals),
            "scores": list[JSON](self.scores),
            "places": list[JSON](self.places),
            "seats": [s.as_json(with_log=with_log) for s in self.seats],
            "deal_points": [list[JSON](p) for p in self.deal_points],
            "counted_points": [list[JSON](p) for p in self.counted_points],
            "faults": [f.as_json() for f in self.faults],
        }
        if with_log:
            out["replay"] = self.log
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRecord:
    """What the table loop recorded for one seat."""

    seat: int
    bot: str  # BotSpec.describe()
    name: str | None
    times: Sequence[float]  # the bot's own decisions
    bank: float
    replaced_by: str | None
    replaced_at: dict[str, int | None] | None
    log: str


def table_result(
    *,
    match: games.Match,
    game: str,
    preset: str,
    seed: int,
    seats: Sequence[SeatRecord],
    faults: Sequence[Fault],
    deal_faults: Mapping[int, list[JSON]],
    all_times: list[list[float]],
    judge: Mapping[str, JSON],
    elapsed: float,
) -> TableResult:
    """The result of a finished ``match``: ``judge`` (the protocol, sandbox and limits) goes
    into the replay log with each seat's summary."""
    log = match.log()
    entries = log["deals"]
    assert isinstance(entries, list)
    for entry, times in zip(entries, all_times, strict=True):
        assert isinstance(entry, dict)
        index = entry["index"]
        assert isinstance(index, int)
        entry["times"] = [round(t, 6) for t in times]
        entry["faults"] = deal_faults.get(index, [])
    replaced: list[int | None] = [None] * len(seats)
    for record in seats:
        if record.replaced_by is not None:
            replaced[record.seat] = replaced_deal(record.replaced_at or {})
    counted = counted_table(match.game, match.deal_points(), replaced)
    totals, scores, places = counted.totals, counted.scores, counted.places
    seat_results = []
    for record in seats:
        mean, p99 = decision_times_summary(record.times)
        seat_results.append(
            SeatResult(
                seat=record.seat,
                bot=record.bot,
                name=record.name,
                total=totals[record.seat],
                score=scores[record.seat],
                place=places[record.seat],
                decisions=len(record.times),
                mean_time=mean,
                p99_time=p99,
                bank_left=record.bank,
                faults=tuple(f for f in faults if f.seat == record.seat),
                replaced=record.replaced_by is not None,
                replaced_by=record.replaced_by,
                replaced_at=record.replaced_at if record.replaced_by is not None else None,
                log=record.log,
                replaced_deal=replaced[record.seat],
            )
        )
    log["judge"] = {
        "protocol": PROTOCOL_VERSION,
        **judge,
        "seats": [
            {
                "seat": s.seat,
                "bot": s.bot,
                "name": s.name,
                "faults": len(s.faults),
                "replaced_by": s.replaced_by,
                "replaced_at": dict(s.replaced_at) if s.replaced_at is not None else None,
            }
            for s in seat_results
        ],
        "startup_faults": [f.as_json() for f in faults if f.deal is None],
    }
    return TableResult(
        game=game,
        preset=preset,
        seed=seed,
        seats=tuple(seat_results),
        deal_points=tuple(tuple(p) for p in match.deal_points()),
        faults=tuple(faults),
        log=log,
        elapsed=elapsed,
        counted_points=tuple(tuple(p) for p in counted.points),
    )
