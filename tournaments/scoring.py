"""Scoring a tournament: points by place at a table, matchpoints of duplicate play, and the
standings with their tie-breaks.

Pure Python (no Django): every function takes plain values and is deterministic from the
tournament's seed, so anyone holding the revealed seed and the results can recompute the
standings.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any, TypeAlias

from games.dealing import DealRng

EntryId: TypeAlias = int
Slot: TypeAlias = EntryId | None
TableSeats: TypeAlias = tuple[Slot, ...]

HOUSE: None = None
"""A seat played by a house bot (it completes the last table and is never ranked)."""


class FormatError(ValueError):
    """A format or a scale asked for something it cannot do (unknown name, too few entries,
    place points that increase...)."""


def default_place_points(table_size: int) -> tuple[int, ...]:
    """Points for the places of a table: 4/2/1/0 at four seats (Whisthub), else n-1 .. 0.

    >>> default_place_points(4), default_place_points(3), default_place_points(2)
    ((4, 2, 1, 0), (2, 1, 0), (1, 0))
    """
    if table_size < 2:
        raise ValueError("a table has at least two seats")
    if table_size == 4:
        return (4, 2, 1, 0)
    return tuple(range(table_size - 1, -1, -1))


def check_place_points(points: Sequence[int], table_size: int) -> tuple[int, ...]:
    """Validate a place-points scale: one integer per seat, never increasing.

    >>> check_place_points([3, 1], 2)
    (3, 1)
    """
    values = tuple(points)
    if len(values) != table_size:
        raise FormatError(f"place points need one value per seat ({table_size}), got {len(values)}")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise FormatError("place points are integers")
    if any(a < b for a, b in itertools.pairwise(values)):
        raise FormatError(f"place points may not increase from one place to the next: {values}")
    return values


def table_points(places: Sequence[int], scale: Sequence[int]) -> list[Fraction]:
    """Points won at a table by place; seats sharing a place share the points of the places
    they cover.

    >>> [str(p) for p in table_points([1, 1, 3, 4], (4, 2, 1, 0))]
    ['3', '3', '1', '0']
    >>> [str(p) for p in table_points([2, 1, 2, 2], (4, 2, 1, 0))]
    ['1', '4', '1', '1']
    """
    if len(places) != len(scale):
        raise FormatError("one place per seat and one place-points value per seat")
    shared = {place: sum(1 for p in places if p == place) for place in set(places)}
    out = []
    for place in places:
        covered = scale[place - 1 : place - 1 + shared[place]]
        out.append(Fraction(sum(covered), shared[place]))
    return out


def duplicate_matchpoints(
    tables: Sequence[Sequence[Sequence[int]]], *, lower_is_better: bool
) -> list[list[Fraction]]:
    """Matchpoints of duplicate play: ``tables[t][d][s]`` is the points of seat ``s`` on deal
    ``d`` at table ``t`` (every table played the same deals). On each deal, each seat scores 1
    against every seat of another table that held the same cards and did worse, 1/2 for each
    that did as well. Returns each seat's total at each table.

    >>> [[str(m) for m in row] for row in duplicate_matchpoints(
    ...     [[[0, 26]], [[26, 0]], [[5, 21]]], lower_is_better=True)]
    [['2', '0'], ['0', '2'], ['1', '1']]
    """
    if not tables:
        return []
    deals = len(tables[0])
    seats = len(tables[0][0]) if deals else 0
    for t in tables:
        if len(t) != deals or any(len(points) != seats for points in t):
            raise FormatError("duplicate tables must have played the same number of deals")
    totals = [[Fraction(0)] * seats for _ in tables]
    sign = -1 if lower_is_better else 1
    for d in range(deals):
        for s in range(seats):
            column = [sign * t[d][s] for t in tables]
            for i, mine in enumerate(column):
                beaten = sum(1 for other in column if other < mine)
                equal = sum(1 for other in column if other == mine) - 1
                totals[i][s] += beaten + Fraction(equal, 2)
    return totals


@dataclasses.dataclass(frozen=True, slots=True)
class TableOutcome:
    """A played table as the standings see it."""

    round_number: int
    table_number: int
    seats: TableSeats
    scores: tuple[int, ...]
    places: tuple[int, ...]
    points: tuple[Fraction, ...]  # tournament points of each seat (place points or matchpoints)
    replaced: tuple[bool, ...] = ()  # seats the judge replaced (judge.counting)

    def average_score(self) -> Fraction:
        return Fraction(sum(self.scores), len(self.scores))


@dataclasses.dataclass(frozen=True, slots=True)
class Standing:
    """One entry's line of the standings. ``rank`` is None for unranked (withdrawn or
    disqualified) entries, listed last."""

    entry: EntryId
    rank: int | None
    points: Fraction
    relative_score: Fraction  # sum over tables of (score - table average), better is higher
    head_to_head: int  # wins minus losses against the entries tied with it on the above
    draw: int  # position in the seeded draw (lower is better), the last tie-break
    tables: int
    total_score: int
    places: tuple[int, ...]  # the place at each table played, in round order
    ranked: bool = True
    replaced: int = 0  # tables at which the judge replaced its bot
    head_to_head_decides: bool = False  # it was tied on the above and head-to-head told apart


def standings_as_json(lines: Sequence[Standing]) -> list[list[Any]]:
    """The standings as JSON values (fractions as [numerator, denominator]), read back by
    :func:`standings_from_json` unchanged.

    >>> import json
    >>> line = Standing(4, 1, Fraction(7, 2), Fraction(-1, 3), 0, 2, 3, 40, (1, 2, 1))
    >>> standings_from_json(json.loads(json.dumps(standings_as_json([line])))) == [line]
    True
    """
    return [
        [
            line.entry,
            line.rank,
            [line.points.numerator, line.points.denominator],
            [line.relative_score.numerator, line.relative_score.denominator],
            line.head_to_head,
            line.draw,
            line.tables,
            line.total_score,
            list(line.places),
            line.ranked,
            line.replaced,
            line.head_to_head_decides,
        ]
        for line in lines
    ]


def standings_from_json(data: Sequence[Sequence[Any]]) -> list[Standing]:
    """The standings that :func:`standings_as_json` stored (in those stored before the
    replaced tables and the head-to-head's part were kept: no replaced table, and whether
    head-to-head decided is found again from the lines)."""
    lines = [
        Standing(
            entry=entry,
            rank=rank,
            points=Fraction(*points),
            relative_score=Fraction(*relative),
            head_to_head=h2h,
            draw=draw,
            tables=tables,
            total_score=total,
            places=tuple(places),
            ranked=ranked,
            replaced=int(rest[0]) if rest else 0,
            head_to_head_decides=bool(rest[1]) if len(rest) > 1 else False,
        )
        for entry, rank, points, relative, h2h, draw, tables, total, places, ranked, *rest in data
    ]
    if data and len(data[0]) < 12:
        tied: dict[tuple[bool, Fraction, Fraction], set[int]] = defaultdict(set)
        for line in lines:
            tied[(line.ranked, line.points, line.relative_score)].add(line.head_to_head)
        lines = [
            dataclasses.replace(
                line,
                head_to_head_decides=len(tied[(line.ranked, line.points, line.relative_score)]) > 1,
            )
            for line in lines
        ]
    return lines


def seeded_draw(entries: Iterable[EntryId], seed: int) -> dict[EntryId, int]:
    """The seeded draw that breaks the last ties: entry -> position (0 is best).

    >>> seeded_draw([3, 1, 2], 9) == seeded_draw([1, 2, 3], 9)
    True
    """
    order = sorted(set(entries))
    DealRng(seed, 0, "standings-draw").shuffle(order)
    return {entry: position for position, entry in enumerate(order)}


def standings(
    *,
    entries: Sequence[EntryId],
    outcomes: Iterable[TableOutcome],
    seed: int,
    lower_is_better: bool,
    unranked: Iterable[EntryId] = (),
) -> list[Standing]:
    """The standings: by points, then total score relative to the table averages, then
    head-to-head among the entries still tied, then the seeded draw. House seats are never
    ranked; ``unranked`` entries (withdrawn, disqualified) are listed last without a rank.
    """
    known = set(entries)
    points: dict[EntryId, Fraction] = dict.fromkeys(known, Fraction(0))
    relative: dict[EntryId, Fraction] = dict.fromkeys(known, Fraction(0))
    total: dict[EntryId, int] = dict.fromkeys(known, 0)
    places: dict[EntryId, list[int]] = {e: [] for e in known}
    replaced: dict[EntryId, int] = dict.fromkeys(known, 0)
    # beat[a][b]: how often a placed better than b at a table they shared
    beat: dict[EntryId, dict[EntryId, int]] = defaultdict(lambda: defaultdict(int))
    sign = -1 if lower_is_better else 1
    for outcome in sorted(outcomes, key=lambda o: (o.round_number, o.table_number)):
        average = outcome.average_score()
        seated = [(i, e) for i, e in enumerate(outcome.seats) if e is not HOUSE and e in known]
        for i, entry in seated:
            points[entry] += outcome.points[i]
            relative[entry] += sign * (outcome.scores[i] - average)
            total[entry] += outcome.scores[i]
            places[entry].append(outcome.places[i])
            replaced[entry] += bool(outcome.replaced and outcome.replaced[i])
        for (i, a), (j, b) in itertools.permutations(seated, 2):
            if outcome.places[i] < outcome.places[j]:
                beat[a][b] += 1

    draw = seeded_draw(known, seed)
    excluded = set(unranked) & known

    def order(group: list[EntryId]) -> list[tuple[EntryId, int, bool]]:
        group = sorted(group, key=lambda e: (-points[e], -relative[e]))
        result: list[tuple[EntryId, int, bool]] = []
        for _, tied_iter in itertools.groupby(group, key=lambda e: (points[e], relative[e])):
            tied = list(tied_iter)
            h2h = {
                e: sum(beat[e][o] - beat[o][e] for o in tied if o != e) if len(tied) > 1 else 0
                for e in tied
            }
            # Head-to-head decides only where it tells apart entries tied on the above.
            decides = len(set(h2h.values())) > 1
            tied.sort(key=lambda e: (-h2h[e], draw[e]))
            result.extend((e, h2h[e], decides) for e in tied)
        return result

    lines: list[Standing] = []
    ranked_order = order([e for e in known if e not in excluded])
    unranked_order = order(list(excluded))
    for position, (entry, h2h, decides) in enumerate([*ranked_order, *unranked_order], start=1):
        is_ranked = entry not in excluded
        lines.append(
            Standing(
                entry=entry,
                rank=position if is_ranked else None,
                points=points[entry],
                relative_score=relative[entry],
                head_to_head=h2h,
                draw=draw[entry],
                tables=len(places[entry]),
                total_score=total[entry],
                places=tuple(places[entry]),
                ranked=is_ranked,
                replaced=replaced[entry],
                head_to_head_decides=decides,
            )
        )
    return lines
