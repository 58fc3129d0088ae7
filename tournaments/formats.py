"""Tournament formats: seating per round, table points by place, matchpoints and standings.

Pure Python (no Django): every function takes plain values and is deterministic from the
tournament's seed, so anyone holding the revealed seed and the results can recompute every
seating, every deal seed and the standings.

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
import hashlib
import itertools
import secrets
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import ClassVar, TypeAlias, TypeVar

from games.dealing import DealRng

EntryId: TypeAlias = int
Slot: TypeAlias = EntryId | None
TableSeats: TypeAlias = tuple[Slot, ...]

HOUSE: None = None
"""A seat played by a house bot (it completes the last table and is never ranked)."""

SEED_BITS = 128
"""Tournament seeds are 128-bit: the published commitment cannot be brute-forced."""

DEAL_SEED_BITS = 63
"""Table deal seeds fit a signed 64-bit database column."""


class FormatError(ValueError):
    """A format asked for something it cannot do (unknown name, too few entries...)."""


# ---------------------------------------------------------------------------------------------
# Fair dealing: the seed, its commitment, and the seeds derived from it
# ---------------------------------------------------------------------------------------------


def new_tournament_seed() -> int:
    """A fresh secret tournament seed (from the operating system's CSPRNG)."""
    return secrets.randbits(SEED_BITS)


def seed_commitment(seed: int) -> str:
    """The published commitment of a tournament seed: SHA-256 of its decimal digits, in hex.

    Anyone can check it once the seed is revealed (``printf %s SEED | sha256sum``).

    >>> seed_commitment(42) == hashlib.sha256(b"42").hexdigest()
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a tournament seed is a non-negative integer, not {seed!r}")
    return hashlib.sha256(str(seed).encode("ascii")).hexdigest()


def commitment_matches(seed: int, commitment: str) -> bool:
    """Whether a revealed seed is the one the commitment was made for.

    >>> commitment_matches(42, seed_commitment(42)), commitment_matches(43, seed_commitment(42))
    (True, False)
    """
    return secrets.compare_digest(seed_commitment(seed), commitment.strip().lower())


def _derived(seed: int, index: int, purpose: str, bits: int = DEAL_SEED_BITS) -> int:
    rng = DealRng(seed, index, purpose)
    value = (rng.next_word() << 32) | rng.next_word()
    return value >> (64 - bits)


def table_deal_seed(
    tournament_seed: int, *, round_number: int, table_number: int, duplicate: bool
) -> int:
    """The seed a table deals its deals from (deal ``i`` is ``game.new_deal(i, seed=...)``).

    Derived through SHA-256 (``games.dealing``) so that a published table seed says nothing
    about the tournament seed or the other tables. With ``duplicate`` every table of a round
    gets the round's seed, so every table plays the same deals.

    >>> a = table_deal_seed(5, round_number=1, table_number=1, duplicate=True)
    >>> a == table_deal_seed(5, round_number=1, table_number=2, duplicate=True)
    True
    >>> a == table_deal_seed(5, round_number=1, table_number=2, duplicate=False)
    False
    """
    if round_number < 1 or table_number < 1:
        raise ValueError("rounds and tables are numbered from 1")
    if duplicate:
        return _derived(tournament_seed, round_number, "round-deals")
    return _derived(tournament_seed, round_number, f"table-deals-{table_number}")


# ---------------------------------------------------------------------------------------------
# Table points
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Results and standings
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class TableOutcome:
    """A played table as the standings see it."""

    round_number: int
    table_number: int
    seats: TableSeats
    scores: tuple[int, ...]
    places: tuple[int, ...]
    points: tuple[Fraction, ...]  # tournament points of each seat (place points or matchpoints)

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
        for (i, a), (j, b) in itertools.permutations(seated, 2):
            if outcome.places[i] < outcome.places[j]:
                beat[a][b] += 1

    draw = seeded_draw(known, seed)
    excluded = set(unranked) & known

    def order(group: list[EntryId]) -> list[tuple[EntryId, int]]:
        group = sorted(group, key=lambda e: (-points[e], -relative[e]))
        result: list[tuple[EntryId, int]] = []
        for _, tied_iter in itertools.groupby(group, key=lambda e: (points[e], relative[e])):
            tied = list(tied_iter)
            h2h = {
                e: sum(beat[e][o] - beat[o][e] for o in tied if o != e) if len(tied) > 1 else 0
                for e in tied
            }
            tied.sort(key=lambda e: (-h2h[e], draw[e]))
            result.extend((e, h2h[e]) for e in tied)
        return result

    lines: list[Standing] = []
    ranked_order = order([e for e in known if e not in excluded])
    unranked_order = order(list(excluded))
    for position, (entry, h2h) in enumerate([*ranked_order, *unranked_order], start=1):
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
            )
        )
    return lines


# ---------------------------------------------------------------------------------------------
# Seating formats
# ---------------------------------------------------------------------------------------------


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


def format_choices() -> list[tuple[str, str]]:
    """(name, description) of every format, for model choices."""
    return [(name, cls.description or name) for name, cls in _FORMATS.items()]


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


def outcomes_from_results(
    results: Iterable[tuple[int, int, TableSeats, Sequence[int], Sequence[int]]],
    *,
    place_points: Sequence[int],
) -> list[TableOutcome]:
    """Outcomes scored with place points from (round, table, seats, scores, places)."""
    return [
        TableOutcome(
            round_number=r,
            table_number=t,
            seats=tuple(seats),
            scores=tuple(scores),
            places=tuple(places),
            points=tuple(table_points(places, place_points)),
        )
        for r, t, seats, scores, places in results
    ]


def points_as_json(points: Mapping[EntryId, Fraction]) -> dict[str, str]:
    """Fractions written exactly ("7/3") for logs and reports."""
    return {str(e): str(p) for e, p in points.items()}
