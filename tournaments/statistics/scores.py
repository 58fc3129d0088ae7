"""Scores from recorded tables: the input of every statistic.

Pure functions over plain records (numpy, no Django): the selectors fetch the rows,
:func:`results_from_rows` turns them into :class:`Results`, and the other modules of
:mod:`tournaments.statistics` read those. docs/tournaments.md ("Statistics") explains the
figures in plain words.

The input, exactly
------------------
Every figure is computed from **scores**: one number per seat and deal, higher is better, in the
game's points. A seat's score on a deal is

* in normal play, its points minus the average points of its table on that deal (all seats,
  house bots and the seat itself included), negated when lower is better;
* in duplicate play, its points minus the average points of the seats that held the same cards
  (the same seat of the same deal at every table of the round, itself included), negated when
  lower is better.

Scores are grouped in **blocks**, the units whose results are independent of each other and
that the bootstrap resamples: in normal play a block is a table (its deals share the bots'
memory of each other); in duplicate play a block is a *board*, one deal at every table of a
round (the tables of a round share its cards, so they are not independent of each other; the
deals are). A :class:`Block` holds one :class:`SeatScores` per seat: the entry (``None`` for a
house seat, which is part of the averages but never ranked), the table it sat at (seats with the
same table sat together) and its seat number (in duplicate play the same seat number of a board
held the same cards), and its scores on the block's deals, in the same order for every seat.

>>> results = table_results(
...     [TablePlay(round=1, table=1, entries=(1, 2, None, 3),
...                points=((0, 10, 13, 3), (26, 0, 0, 0)))],
...     duplicate=False, lower_is_better=True)
>>> [s.scores for s in results.blocks[0].seats]
[(6.5, -19.5), (-3.5, 6.5), (-6.5, 6.5), (3.5, 6.5)]
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from judge.counting import counted_points

EntryId = int
#: (round number, table number): the seats with the same key sat at the same table.
TableKey = tuple[int, int]
FloatArray = NDArray[np.float64]

# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat as the database stores it.

    ``Seat``: its table's round number and number, ``position``, ``entry_id``, ``substitute``,
    ``replaced_deal``. A substitute seat is a house bot playing for a withdrawn or disqualified
    entry: it counts as a house seat. A replaced seat's deals count as :mod:`judge.counting` says
    (it forfeits the rest of its table)."""

    round: int
    table: int
    position: int
    entry: EntryId | None
    substitute: bool = False
    replaced_deal: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class DealRow:
    """A deal as the database stores it.

    ``Deal``: its table's round number and number, ``index``, ``points`` (the points of each
    seat in the game's own count)."""

    round: int
    table: int
    index: int
    points: tuple[float, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TablePlay:
    """One recorded table: who sat where and each deal's points.

    The entry in each seat (``None``: a house seat) and each deal's points per seat,
    ``points[deal][seat]``, in the game's own count, in the order played."""

    round: int
    table: int
    entries: tuple[EntryId | None, ...]
    points: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        if any(len(deal) != len(self.entries) for deal in self.points):
            raise ValueError(f"table {self.round}/{self.table}: one point per seat and deal")


@dataclasses.dataclass(frozen=True, slots=True)
class SeatScores:
    """One seat of a block: who, where, and its score on each deal of the block."""

    entry: EntryId | None
    table: TableKey
    seat: int
    scores: tuple[float, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Block:
    """An independent unit of results.

    A table (normal play), or a board (duplicate play: one deal, ``key = (round, deal index)``, at
    every table of the round). Every seat has a score for each of the block's deals, in the same
    order."""

    key: tuple[int, int]
    seats: tuple[SeatScores, ...]

    def __post_init__(self) -> None:
        if len({len(s.scores) for s in self.seats}) > 1:
            raise ValueError(f"block {self.key}: every seat needs a score for every deal")

    @property
    def deals(self) -> int:
        return len(self.seats[0].scores) if self.seats else 0


@dataclasses.dataclass(frozen=True, slots=True)
class Results:
    """A tournament's results as the statistics read them (see the module's docstring)."""

    duplicate: bool
    blocks: tuple[Block, ...]

    def entries(self) -> tuple[EntryId, ...]:
        """Every entry with at least one score, in increasing order."""
        return tuple(sorted({s.entry for b in self.blocks for s in b.seats if s.entry is not None}))


def table_results(
    tables: Iterable[TablePlay], *, duplicate: bool, lower_is_better: bool
) -> Results:
    """Scores from recorded tables (see the module's docstring for what a score is).

    In duplicate play the tables are grouped by round; a board is a deal index that every
    table of the round played (so pass only closed rounds: with a table missing, the others
    are compared without it). A round of a single table compares nothing and is left out.
    """
    sign = -1.0 if lower_is_better else 1.0
    tables = sorted(tables, key=lambda t: (t.round, t.table))
    if not duplicate:
        blocks = []
        for t in tables:
            if not t.points:
                continue
            points = np.asarray(t.points, dtype=np.float64)
            scores = sign * (points - points.mean(axis=1, keepdims=True))
            blocks.append(
                Block(
                    key=(t.round, t.table),
                    seats=tuple(
                        SeatScores(entry, (t.round, t.table), s, tuple(scores[:, s].tolist()))
                        for s, entry in enumerate(t.entries)
                    ),
                )
            )
        return Results(duplicate=False, blocks=tuple(blocks))

    by_round: dict[int, list[TablePlay]] = defaultdict(list)
    for t in tables:
        by_round[t.round].append(t)
    boards = []
    for round_number, round_tables in sorted(by_round.items()):
        if len(round_tables) < 2:
            continue
        if len({len(t.entries) for t in round_tables}) > 1:
            raise ValueError(f"round {round_number}: duplicate tables of different sizes")
        deals = min(len(t.points) for t in round_tables)
        points = np.asarray([t.points[:deals] for t in round_tables], dtype=np.float64)
        scores = sign * (points - points.mean(axis=0, keepdims=True))  # [table, deal, seat]
        for d in range(deals):
            boards.append(
                Block(
                    key=(round_number, d),
                    seats=tuple(
                        SeatScores(entry, (round_number, t.table), s, (float(scores[i, d, s]),))
                        for i, t in enumerate(round_tables)
                        for s, entry in enumerate(t.entries)
                    ),
                )
            )
    return Results(duplicate=True, blocks=tuple(boards))


def results_from_rows(
    *,
    seats: Iterable[SeatRow],
    deals: Iterable[DealRow],
    duplicate: bool,
    lower_is_better: bool,
) -> Results:
    """Scores from the rows a recorded tournament stores.

    :func:`table_results` of its seats and deals (of finished tables only; in duplicate play, of
    closed rounds only). A table's deals are taken in the order of their index, their points as they
    count (a replaced seat forfeits the rest of its table: :mod:`judge.counting`); a table without
    seats or deals is left out. A selector fetches them as ``SeatRow(*row)`` for each row of
    ``Seat.objects.filter(...).values_list("table__round__number", "table__number", "position",
    "entry_id", "substitute", "replaced_deal")`` and ``DealRow(r, t, i, tuple(points))`` for each
    ``(r, t, i, points)`` of ``Deal.objects.filter(...).values_list("table__round__number",
    "table__number", "index", "points")``.

    >>> seats = [SeatRow(1, 1, 0, 7), SeatRow(1, 1, 1, None), SeatRow(1, 1, 2, 8, True)]
    >>> deals = [DealRow(1, 1, 1, (1, 2, 6)), DealRow(1, 1, 0, (3, 3, 3))]
    >>> r = results_from_rows(seats=seats, deals=deals, duplicate=False, lower_is_better=False)
    >>> [(s.entry, s.scores) for s in r.blocks[0].seats]
    [(7, (0.0, -2.0)), (None, (0.0, -1.0)), (None, (0.0, 3.0))]
    """
    positions: dict[TableKey, dict[int, EntryId | None]] = defaultdict(dict)
    replaced: dict[TableKey, dict[int, int | None]] = defaultdict(dict)
    for seat in seats:
        entry = None if seat.substitute else seat.entry
        positions[(seat.round, seat.table)][seat.position] = entry
        replaced[(seat.round, seat.table)][seat.position] = seat.replaced_deal
    played: dict[TableKey, list[DealRow]] = defaultdict(list)
    for deal in deals:
        played[(deal.round, deal.table)].append(deal)
    tables = []
    for key, seated in positions.items():
        rows = sorted(played.get(key, []), key=lambda d: d.index)
        if not rows:
            continue
        entries = tuple(seated.get(p) for p in range(max(seated) + 1))
        counted = counted_points(
            [row.points for row in rows],
            [replaced[key].get(p) for p in range(len(entries))],
            lower_is_better=lower_is_better,
        )
        tables.append(
            TablePlay(
                round=key[0],
                table=key[1],
                entries=entries,
                points=tuple(tuple(float(p) for p in points) for points in counted),
            )
        )
    return table_results(tables, duplicate=duplicate, lower_is_better=lower_is_better)
