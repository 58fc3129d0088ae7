"""Tournament formats: how each round is seated.

Pure Python (no Django): every function takes plain values and is deterministic from the
tournament's seed, so anyone holding the revealed seed and the results can recompute every
seating.

Seating formats are registered by name, as contest formats are in DMOJ::

    @register_format("random")
    class RandomFormat(SeatingFormat): ...

A seating is a list of tables; a table is a tuple of seats in seat order; a seat holds an entry
id or :data:`HOUSE` (a built-in house bot that completes the last table and is never ranked).

>>> seat_round("random", round_number=1, entries=[1, 2, 3, 4, 5], table_size=4, seed=7,
...            history=[], lower_is_better=True)[1].count(HOUSE)
3
"""

from __future__ import annotations

import abc
import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, TypeVar

from games.dealing import DealRng
from tournaments.scoring import (
    HOUSE,
    EntryId,
    FormatError,
    Slot,
    TableOutcome,
    TableSeats,
    standings,
)


@dataclasses.dataclass(frozen=True, slots=True)
class RoundContext:
    """What a format may use to seat a round."""

    round_number: int  # from 1
    entries: tuple[EntryId, ...]  # the entries to seat (active ones), in any order
    table_size: int
    seed: int  # the tournament seed
    history: tuple[TableOutcome, ...]  # every table played in earlier rounds
    lower_is_better: bool

    def rng(self, purpose: str) -> DealRng:
        return DealRng(self.seed, self.round_number, purpose)


class SeatingFormat(abc.ABC):
    """Seats the entries of a round into tables. Subclasses are registered by name."""

    name: ClassVar[str]
    description: ClassVar[str] = ""

    @abc.abstractmethod
    def seat(self, context: RoundContext) -> list[list[EntryId]]:
        """The entries of each table (the last one may be short), in table order."""

    def tables(self, context: RoundContext) -> list[TableSeats]:
        """The complete seating: short tables completed with house seats, seat order drawn."""
        if len(set(context.entries)) != len(context.entries):
            raise FormatError("an entry may be seated only once per round")
        if not context.entries:
            raise FormatError("there is nobody to seat")
        groups = self.seat(context)
        seated = sorted(e for group in groups for e in group)
        if seated != sorted(context.entries):
            raise FormatError(f"format {self.name} did not seat every entry exactly once")
        if any(len(g) > context.table_size for g in groups) or any(
            len(g) < context.table_size for g in groups[:-1]
        ):
            raise FormatError(f"format {self.name} made tables of the wrong size")
        rng = context.rng("seat-order")
        out: list[TableSeats] = []
        for group in groups:
            slots: list[Slot] = list(group)
            slots += [HOUSE] * (context.table_size - len(slots))
            rng.shuffle(slots)
            out.append(tuple(slots))
        return out


FormatT = TypeVar("FormatT", bound=type[SeatingFormat])

_FORMATS: dict[str, type[SeatingFormat]] = {}


def register_format(name: str) -> Callable[[FormatT], FormatT]:
    """Class decorator: make a seating format available by name."""

    def decorate(cls: FormatT) -> FormatT:
        if name in _FORMATS:
            raise ValueError(f"format {name!r} is registered twice")
        cls.name = name
        _FORMATS[name] = cls
        return cls

    return decorate


def format_names() -> list[str]:
    return list(_FORMATS)


def get_format(name: str) -> SeatingFormat:
    try:
        return _FORMATS[name]()
    except KeyError:
        raise FormatError(
            f"unknown seating format {name!r}; formats are: {', '.join(_FORMATS)}"
        ) from None


def seat_round(
    format_name: str,
    *,
    round_number: int,
    entries: Sequence[EntryId],
    table_size: int,
    seed: int,
    history: Sequence[TableOutcome],
    lower_is_better: bool,
) -> list[TableSeats]:
    """Seat one round with a registered format."""
    context = RoundContext(
        round_number=round_number,
        entries=tuple(entries),
        table_size=table_size,
        seed=seed,
        history=tuple(history),
        lower_is_better=lower_is_better,
    )
    return get_format(format_name).tables(context)


def meetings(history: Iterable[TableOutcome]) -> dict[frozenset[EntryId], int]:
    """How many times each pair of entries has shared a table."""
    counts: dict[frozenset[EntryId], int] = defaultdict(int)
    for outcome in history:
        seated = sorted(e for e in outcome.seats if e is not HOUSE)
        for a, b in itertools.combinations(seated, 2):
            counts[frozenset((a, b))] += 1
    return counts


def _chunks(items: Sequence[EntryId], size: int) -> list[list[EntryId]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


@register_format("random")
class RandomFormat(SeatingFormat):
    """Random tables drawn from the seed, with the fewest repeated meetings.

    Round 1 is one seeded draw. Later rounds make several seeded draws, improve each by
    swapping entries between tables while that lowers the number of pairs meeting again
    (weighted by how often they met), and keep the best (the first best on ties). It is a
    round-by-round search: it never repeats a meeting it can avoid by reseating this round.
    """

    description = "Random seating (seeded, fewest repeated meetings)"
    max_draws = 32
    max_passes = 8

    def seat(self, context: RoundContext) -> list[list[EntryId]]:
        met = meetings(context.history)
        rng = context.rng("random-seating")
        pool = sorted(context.entries)
        size = context.table_size
        # The search runs on positions in the pool, with the meetings as a table of weights
        # (weights[i][j]: how often pool[i] and pool[j] met; 0 on the diagonal): a list
        # lookup instead of a frozenset per pair looked at.
        position = {entry: i for i, entry in enumerate(pool)}
        weights = [[0] * len(pool) for _ in pool]
        for key, count in met.items():
            ends = [position[e] for e in key if e in position]
            if len(ends) == 2:
                a, b = ends
                weights[a][b] = weights[b][a] = count

        def cost(tables: list[list[int]]) -> int:
            return sum(weights[a][b] for t in tables for a, b in itertools.combinations(t, 2))

        best: list[list[int]] | None = None
        best_cost = 0
        draws = max(4, min(self.max_draws, 512 // max(1, len(pool) // size))) if met else 1
        for _ in range(draws):
            order = list(range(len(pool)))
            rng.shuffle(order)  # the same permutation as shuffling the pool itself
            tables = _chunks(order, size)
            if cost(tables):
                self._improve(tables, weights)
            c = cost(tables)
            if best is None or c < best_cost:
                best, best_cost = tables, c
            if c == 0:
                break
        assert best is not None
        return [[pool[i] for i in table] for table in best]

    def _improve(self, tables: list[list[int]], weights: list[list[int]]) -> None:
        """Swap two entries of different tables whenever that lowers the repeats (first
        improvement, in a fixed order), until no swap helps. Entries are positions in
        ``weights``, the symmetric table of meetings."""
        # sums[e][t]: the meetings of e with the entries at table t, kept up to date on swaps.
        # Swapping a (at table A) with b (at table B) changes the repeats by
        #   sum(w[b][x] - w[a][x] for x in A if x != a)
        #   + sum(w[a][y] - w[b][y] for y in B if y != b)
        # = sums[b][A] - sums[a][A] + sums[a][B] - sums[b][B] - 2 w[a][b]   (w[e][e] is 0)
        sums = [[sum(row[x] for x in table) for table in tables] for row in weights]
        for _ in range(self.max_passes):
            improved = False
            for ta, tb in itertools.combinations(range(len(tables)), 2):
                a_table, b_table = tables[ta], tables[tb]
                for i, j in itertools.product(range(len(a_table)), range(len(b_table))):
                    a, b = a_table[i], b_table[j]
                    sa, sb = sums[a], sums[b]
                    if sb[ta] - sa[ta] + sa[tb] - sb[tb] < 2 * weights[a][b]:
                        a_table[i], b_table[j] = b, a
                        improved = True
                        wa, wb = weights[a], weights[b]
                        for e, row in enumerate(sums):
                            moved = wa[e] - wb[e]  # weights are symmetric: w[e][a] - w[e][b]
                            row[ta] -= moved
                            row[tb] += moved
            if not improved:
                return


@register_format("swiss")
class SwissFormat(SeatingFormat):
    """Round 1 random; later rounds by the standings so far: the strongest group at table 1,
    the next at table 2, and so on (the last table is completed by house bots)."""

    description = "Swiss (by standings, strongest group at table 1)"

    def seat(self, context: RoundContext) -> list[list[EntryId]]:
        if context.round_number == 1 or not context.history:
            return RandomFormat().seat(context)
        lines = standings(
            entries=context.entries,
            outcomes=context.history,
            seed=context.seed,
            lower_is_better=context.lower_is_better,
        )
        return _chunks([line.entry for line in lines], context.table_size)
