"""Statistics of tournament results: standings with confidence, a crosstable, how many deals a
tournament needs, and a sequential test for "is v2 better than v1?".

Pure functions over plain records (numpy and scipy, no Django): the selectors fetch the rows,
:func:`results_from_rows` turns them into :class:`Results`, and the functions below read those.
docs/tournaments.md ("Statistics") explains the figures in plain words.

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
import enum
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from scipy import special
from threadpoolctl import ThreadpoolController

from judge.counting import counted_points

EntryId = int
#: (round number, table number): the seats with the same key sat at the same table.
TableKey = tuple[int, int]
FloatArray = NDArray[np.float64]

CONFIDENCE = 0.95
#: Bootstrap replicates: their standard deviation is then within about 3% of its limit, and
#: each rank probability within about 1%.
RESAMPLES = 2000
#: The bootstrap's seed: the same results always give the same intervals.
SEED = 0
#: Where the measured per-deal spreads of the presets are kept (written by bench/spread.py).
SPREAD_FILE = Path(__file__).with_name("spread.json")


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat as the database stores it (``Seat``: its table's round number and number,
    ``position``, ``entry_id``, ``substitute``, ``replaced_deal``). A substitute seat is a
    house bot playing for a withdrawn or disqualified entry: it counts as a house seat. A
    replaced seat's deals count as :mod:`judge.counting` says (it forfeits the rest of its
    table)."""

    round: int
    table: int
    position: int
    entry: EntryId | None
    substitute: bool = False
    replaced_deal: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class DealRow:
    """A deal as the database stores it (``Deal``: its table's round number and number,
    ``index``, ``points``: the points of each seat in the game's own count)."""

    round: int
    table: int
    index: int
    points: tuple[float, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class TablePlay:
    """One recorded table: the entry in each seat (``None``: a house seat) and each deal's
    points per seat, ``points[deal][seat]``, in the game's own count, in the order played."""

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
    """An independent unit of results: a table (normal play), or a board (duplicate play: one
    deal, ``key = (round, deal index)``, at every table of the round). Every seat has a score
    for each of the block's deals, in the same order."""

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
    """:func:`table_results` from the rows a recorded tournament stores: its seats and deals
    (of finished tables only; in duplicate play, of closed rounds only). A table's deals are
    taken in the order of their index, their points as they count (a replaced seat forfeits
    the rest of its table: :mod:`judge.counting`); a table without seats or deals is left
    out. A selector fetches them as ``SeatRow(*row)`` for each row of
    ``Seat.objects.filter(...).values_list("table__round__number", "table__number",
    "position", "entry_id", "substitute", "replaced_deal")`` and
    ``DealRow(r, t, i, tuple(points))`` for each ``(r, t, i, points)`` of ``Deal.objects
    .filter(...).values_list("table__round__number", "table__number", "index", "points")``.

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


# ---------------------------------------------------------------------------------------------
# Standings with confidence
# ---------------------------------------------------------------------------------------------


@cache
def _threadpools() -> ThreadpoolController:
    return ThreadpoolController()


@dataclasses.dataclass(frozen=True, slots=True)
class EntryStanding:
    """An entry's mean score per deal with its interval, and where it may rank.

    ``rank`` orders the entries by ``mean`` (1 is the best; equal means by entry id): the
    quantity measured here, not the tournament's points. ``rank_probabilities[r - 1]`` is the
    share of the bootstrap replicates in which the entry ranked ``r``. ``settled``: see
    :func:`standings_with_confidence`. With fewer than two blocks there is no interval:
    ``low`` and ``high`` are infinite.
    """

    entry: EntryId
    rank: int
    mean: float
    low: float
    high: float
    deals: int
    blocks: int
    rank_probabilities: tuple[float, ...]
    settled: bool

    @property
    def rank_probability(self) -> float:
        """The probability that the entry holds the rank it holds."""
        return self.rank_probabilities[self.rank - 1]


@dataclasses.dataclass(frozen=True, slots=True)
class Standings:
    """The entries best first, with how they were computed."""

    duplicate: bool
    confidence: float
    resamples: int
    seed: int
    entries: tuple[EntryStanding, ...]


def _score_matrices(results: Results, entries: Sequence[EntryId]) -> tuple[FloatArray, FloatArray]:
    """``(S, N)``: ``S[k, e]`` the sum of entry ``e``'s scores in block ``k``, ``N[k, e]`` the
    number of its deals there."""
    column = {entry: i for i, entry in enumerate(entries)}
    sums = np.zeros((len(results.blocks), len(entries)))
    counts = np.zeros_like(sums)
    for k, block in enumerate(results.blocks):
        for seat in block.seats:
            i = column.get(seat.entry) if seat.entry is not None else None
            if i is not None:
                sums[k, i] += math.fsum(seat.scores)
                counts[k, i] += len(seat.scores)
    return sums, counts


def _standard_error_factor(blocks: NDArray[np.int64]) -> FloatArray:
    """``sqrt((n + 1) / (n - 1))`` for ``n`` blocks (infinite below 2): the Bayesian bootstrap's
    standard deviation of a mean of ``n`` units is ``s * sqrt((n - 1) / (n * (n + 1)))``, ``s``
    the units' sample standard deviation; times this factor it is the standard error
    ``s / sqrt(n)``."""
    n = blocks.astype(np.float64)
    out = np.full(n.shape, np.inf)
    ok = n >= 2
    out[ok] = np.sqrt((n[ok] + 1) / (n[ok] - 1))
    return out


def _rank_widening(blocks: NDArray[np.int64], confidence: float) -> FloatArray:
    """How much wider than the bootstrap's own spread each entry's interval is, for ``n``
    blocks: the standard error's small-sample factor times Student's quantile over the
    normal one (1 for fewer than two blocks: no interval, no rank chance shown).

    >>> [round(float(x), 2) for x in _rank_widening(np.array([1, 2, 8, 100]), 0.95)]
    [1.0, 11.23, 1.37, 1.02]
    """
    level = 0.5 + confidence / 2
    n = np.maximum(blocks, 2)
    student = special.stdtrit(n - 1, level) / special.ndtri(level)
    factor = np.sqrt((n + 1) / (n - 1)) * student
    return np.where(blocks >= 2, factor, 1.0)


def standings_with_confidence(
    results: Results,
    *,
    entries: Sequence[EntryId] | None = None,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Standings:
    """Each entry's mean score per deal with a ``confidence`` interval, the probability of each
    rank, and whether its place is settled; best first.

    ``entries``: the entries to rank (default: all); those without a score are left out. Their
    scores against everyone (house seats, other entries) count.

    **The interval** comes from a bootstrap over blocks (tables, or duplicate boards), the
    level at which results are independent: the Bayesian bootstrap (Rubin 1981), where each
    replicate gives every block a random weight drawn from the exponential distribution and
    each entry's mean is its weighted sum of scores over its weighted number of deals. It is
    the smooth form of resampling blocks with replacement: no entry is ever left without blocks
    in a replicate. The spread of an entry's replicates, scaled by
    :func:`_standard_error_factor` for its ``n`` blocks, is the standard error of its mean; the
    interval is the mean plus or minus Student's quantile with ``n - 1`` degrees of freedom
    times that error. (Percentile intervals cover less than they claim with few blocks, and the
    noise of their two ends shifts them: docs/tournaments.md has the measures.) The seed is
    fixed: the same results give the same figures.

    **Rank probabilities**: in each replicate the entries are ranked by their means, each
    entry's replicates first widened around its mean by :func:`_rank_widening` (the interval's
    small-sample factor: the bootstrap's own spread is overconfident with few blocks); an
    entry's probability of rank ``r`` is the share of replicates in which it ranked ``r``. Each
    entry's probabilities sum to 1, as do each rank's. With a single block an entry's mean does
    not move: its chances mean nothing (the pages say it needs two tables).

    **Settled**: the place of the entry ranked ``r`` is settled when its interval is clear of
    the intervals of every other entry: its low end above the high end of every entry ranked
    below it, its high end below the low end of every entry ranked above it. So the top place is
    settled when the leader's interval is above all others; the second when it is also below the
    leader's and above the rest, and so on.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    if resamples < 2:
        raise ValueError("resamples must be at least 2")
    chosen = sorted(set(results.entries() if entries is None else entries))
    sums, counts = _score_matrices(results, chosen)
    played = counts.sum(axis=0) > 0
    chosen = [e for e, ok in zip(chosen, played, strict=True) if ok]
    sums = np.ascontiguousarray(sums[:, played])
    counts = np.ascontiguousarray(counts[:, played])
    size = len(chosen)
    if size == 0:
        return Standings(results.duplicate, confidence, resamples, seed, ())

    deals = counts.sum(axis=0)
    blocks = (counts > 0).sum(axis=0)
    means = sums.sum(axis=0) / deals

    rng = np.random.default_rng(seed)
    weights = rng.standard_exponential((len(results.blocks), resamples))
    # One BLAS thread: these products are small, and waking threads costs more than they save,
    # far more on a busy host.
    with _threadpools().limit(limits=1, user_api="blas"):
        replicates = (sums.T @ weights) / (counts.T @ weights)  # [entry, replicate]

    with np.errstate(invalid="ignore"):  # inf * 0: a single block, no spread, no interval
        error = replicates.std(axis=1, ddof=1) * _standard_error_factor(blocks)
        half = special.stdtrit(np.maximum(blocks - 1, 1), 0.5 + confidence / 2) * error
    half = np.where(blocks >= 2, half, np.inf)
    low, high = means - half, means + half

    # Ranks in each replicate (0 is the best), each entry's replicates widened around its mean
    # by the factor that widens its interval: the bootstrap alone is overconfident with few
    # blocks (a single block does not move at all).
    widen = _rank_widening(blocks, confidence)
    spread = means[:, np.newaxis] + (replicates - means[:, np.newaxis]) * widen[:, np.newaxis]
    order = np.argsort(-spread.T, axis=1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(size), order.shape), axis=1)
    cells = np.arange(size)[np.newaxis, :] * size + ranks
    tally = np.bincount(cells.ravel(), minlength=size * size).reshape(size, size)
    probabilities = tally / resamples

    ranking = sorted(range(size), key=lambda i: (-means[i], chosen[i]))
    settled = []
    for position, i in enumerate(ranking):
        above, below = ranking[:position], ranking[position + 1 :]
        settled.append(
            all(low[i] > high[j] for j in below) and all(high[i] < low[j] for j in above)
        )
    return Standings(
        duplicate=results.duplicate,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        entries=tuple(
            EntryStanding(
                entry=chosen[i],
                rank=position + 1,
                mean=float(means[i]),
                low=float(low[i]),
                high=float(high[i]),
                deals=int(deals[i]),
                blocks=int(blocks[i]),
                rank_probabilities=tuple(float(p) for p in probabilities[i]),
                settled=settled[position],
            )
            for position, i in enumerate(ranking)
        ),
    )


# ---------------------------------------------------------------------------------------------
# Crosstable
# ---------------------------------------------------------------------------------------------


class Comparison(enum.StrEnum):
    """How a pair of entries was compared."""

    #: They sat at the same table: the difference of their scores on each deal they played
    #: there (in normal play, of their points, as both are relative to the same average).
    TABLE = "table"
    #: Duplicate play: they held the same seat of the same deal at different tables: the
    #: difference of their points on the same cards.
    CARDS = "cards"


@dataclasses.dataclass(frozen=True, slots=True)
class PairResult:
    """The mean of ``a``'s score minus ``b``'s per deal where they were compared, with Student's
    ``confidence`` interval over those deals and its two-sided p-value; ``significant`` when
    the interval excludes 0. ``blocks``: the tables (normal play) or boards they shared. With
    one deal there is no interval (infinite ends, p-value 1)."""

    a: EntryId
    b: EntryId
    comparison: Comparison
    deals: int
    blocks: int
    mean: float
    low: float
    high: float
    p_value: float
    significant: bool

    def flipped(self) -> PairResult:
        """The same comparison seen from ``b``."""
        return dataclasses.replace(
            self, a=self.b, b=self.a, mean=-self.mean, low=-self.high, high=-self.low
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Crosstable:
    """Every pair of entries compared, ``a < b``, by comparison then ``a`` then ``b``."""

    duplicate: bool
    confidence: float
    pairs: tuple[PairResult, ...]

    def cell(self, a: EntryId, b: EntryId, comparison: Comparison) -> PairResult | None:
        """The comparison of ``a`` with ``b`` (``a``'s score minus ``b``'s), if they met."""
        for pair in self.pairs:
            if pair.comparison is comparison and {pair.a, pair.b} == {a, b}:
                return pair if pair.a == a else pair.flipped()
        return None


@cache
def _upper_pairs(size: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    i, j = np.triu_indices(size, 1)
    return i, j


def crosstable(results: Results, *, confidence: float = CONFIDENCE) -> Crosstable:
    """For each pair of entries that met: the mean difference of their scores per deal, with
    Student's t interval over the deals compared, the number of deals, and a significance flag
    (the interval excludes 0, i.e. p < 1 - confidence, two-sided).

    Deals, not tables, are the units here: a pair shares few tables (often one), too few to
    resample, while the deals of a table are dealt independently; the interval assumes the
    differences of a pair's deals are independent (a bot that adapts to its table-mates over the
    deals of a table makes it somewhat narrow). Each cell is one test: among many pairs about
    1 in 20 is flagged by chance when nothing differs.

    In duplicate play pairs are compared both ways (:class:`Comparison`): at the same table, and
    on the same cards at different tables.
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    entries = results.entries()
    column = {entry: i for i, entry in enumerate(entries)}
    size = len(entries)
    keys: list[NDArray[np.int64]] = []
    block_ids: list[NDArray[np.int64]] = []
    diff_sums: list[FloatArray] = []
    diff_squares: list[FloatArray] = []
    counts: list[FloatArray] = []
    for k, block in enumerate(results.blocks):
        seats = block.seats
        if len(seats) < 2 or block.deals == 0:
            continue
        who = np.array([column[s.entry] if s.entry is not None else -1 for s in seats])
        table_codes: dict[TableKey, int] = {}
        where = np.array([table_codes.setdefault(s.table, len(table_codes)) for s in seats])
        seat_of = np.array([s.seat for s in seats])
        scores = np.array([s.scores for s in seats], dtype=np.float64)
        i, j = _upper_pairs(len(seats))
        same_table = where[i] == where[j]
        kind = np.where(same_table, 0, 1)
        keep = (who[i] >= 0) & (who[j] >= 0) & (who[i] != who[j])
        keep &= same_table | (results.duplicate & (seat_of[i] == seat_of[j]))
        i, j, kind = i[keep], j[keep], kind[keep]
        if i.size == 0:
            continue
        # Orient every pair from the smaller entry id: a - b.
        swap = who[i] > who[j]
        a = np.where(swap, who[j], who[i])
        b = np.where(swap, who[i], who[j])
        diffs = (scores[i] - scores[j]) * np.where(swap, -1.0, 1.0)[:, np.newaxis]
        keys.append((kind * size + a) * size + b)
        block_ids.append(np.full(i.size, k))
        diff_sums.append(diffs.sum(axis=1))
        diff_squares.append((diffs**2).sum(axis=1))
        counts.append(np.full(i.size, float(block.deals)))
    if not keys:
        return Crosstable(results.duplicate, confidence, ())

    key = np.concatenate(keys)
    unique, inverse = np.unique(key, return_inverse=True)
    total = np.bincount(inverse, weights=np.concatenate(diff_sums))
    squares = np.bincount(inverse, weights=np.concatenate(diff_squares))
    n = np.bincount(inverse, weights=np.concatenate(counts))
    block_count = len(results.blocks)
    shared = np.unique(inverse * block_count + np.concatenate(block_ids)) // block_count
    blocks = np.bincount(shared, minlength=unique.size)

    mean = total / n
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = np.maximum(squares - n * mean**2, 0.0) / (n - 1)
        error = np.sqrt(variance / n)
        t_stat = mean / error
    tail = 0.5 + confidence / 2
    freedom = np.maximum(n - 1, 1)
    half = np.where(n >= 2, special.stdtrit(freedom, tail) * error, np.inf)
    p_value = np.where(
        n < 2,
        1.0,
        np.where(
            error > 0,
            2 * special.stdtr(freedom, -np.abs(np.nan_to_num(t_stat))),
            np.where(mean != 0, 0.0, 1.0),
        ),
    )
    pairs = []
    for u, code in enumerate(unique.tolist()):
        kind_code, rest = divmod(code, size * size)
        a_index, b_index = divmod(rest, size)
        low, high = float(mean[u] - half[u]), float(mean[u] + half[u])
        pairs.append(
            PairResult(
                a=entries[a_index],
                b=entries[b_index],
                comparison=Comparison.TABLE if kind_code == 0 else Comparison.CARDS,
                deals=int(n[u]),
                blocks=int(blocks[u]),
                mean=float(mean[u]),
                low=low,
                high=high,
                p_value=float(p_value[u]),
                significant=bool(low > 0 or high < 0),
            )
        )
    return Crosstable(results.duplicate, confidence, tuple(pairs))


# ---------------------------------------------------------------------------------------------
# Stored form (a finished tournament's figures are kept in the database as JSON)
# ---------------------------------------------------------------------------------------------

#: The stored form: JSON values (lists and dicts of numbers, strings and booleans).
Stored = dict[str, Any]


def _finite_or_none(value: float) -> float | None:
    """JSON (and PostgreSQL's jsonb) has no infinity: an interval without ends is stored as
    null."""
    return value if math.isfinite(value) else None


def _or_infinity(value: float | None, sign: float) -> float:
    return sign * math.inf if value is None else float(value)


def standings_as_json(standings: Standings) -> Stored:
    """``standings`` as JSON values, read back by :func:`standings_from_json` unchanged.

    >>> line = EntryStanding(7, 1, 0.5, -math.inf, math.inf, 12, 1, (1.0,), False)
    >>> kept = Standings(False, 0.95, 2000, 0, (line,))
    >>> standings_from_json(json.loads(json.dumps(standings_as_json(kept)))) == kept
    True
    """
    return {
        "duplicate": standings.duplicate,
        "confidence": standings.confidence,
        "resamples": standings.resamples,
        "seed": standings.seed,
        # One list per entry: entry, rank, mean, low, high, deals, blocks, probabilities, settled.
        "entries": [
            [
                e.entry,
                e.rank,
                e.mean,
                _finite_or_none(e.low),
                _finite_or_none(e.high),
                e.deals,
                e.blocks,
                list(e.rank_probabilities),
                e.settled,
            ]
            for e in standings.entries
        ],
    }


def standings_from_json(data: Stored) -> Standings:
    """The :class:`Standings` that :func:`standings_as_json` stored."""
    return Standings(
        duplicate=bool(data["duplicate"]),
        confidence=float(data["confidence"]),
        resamples=int(data["resamples"]),
        seed=int(data["seed"]),
        entries=tuple(
            EntryStanding(
                entry=entry,
                rank=rank,
                mean=mean,
                low=_or_infinity(low, -1),
                high=_or_infinity(high, 1),
                deals=deals,
                blocks=blocks,
                rank_probabilities=tuple(probabilities),
                settled=settled,
            )
            for entry, rank, mean, low, high, deals, blocks, probabilities, settled in data[
                "entries"
            ]
        ),
    )


def crosstable_as_json(table: Crosstable) -> Stored:
    """``table`` as JSON values, read back by :func:`crosstable_from_json` unchanged.

    >>> pair = PairResult(1, 2, Comparison.TABLE, 1, 1, 3.0, -math.inf, math.inf, 1.0, False)
    >>> kept = Crosstable(False, 0.95, (pair,))
    >>> crosstable_from_json(json.loads(json.dumps(crosstable_as_json(kept)))) == kept
    True
    """
    return {
        "duplicate": table.duplicate,
        "confidence": table.confidence,
        # One list per pair: a, b, comparison, deals, blocks, mean, low, high, p, significant.
        "pairs": [
            [
                p.a,
                p.b,
                p.comparison.value,
                p.deals,
                p.blocks,
                p.mean,
                _finite_or_none(p.low),
                _finite_or_none(p.high),
                p.p_value,
                p.significant,
            ]
            for p in table.pairs
        ],
    }


def crosstable_from_json(data: Stored) -> Crosstable:
    """The :class:`Crosstable` that :func:`crosstable_as_json` stored."""
    return Crosstable(
        duplicate=bool(data["duplicate"]),
        confidence=float(data["confidence"]),
        pairs=tuple(
            PairResult(
                a=a,
                b=b,
                comparison=Comparison(comparison),
                deals=deals,
                blocks=blocks,
                mean=mean,
                low=_or_infinity(low, -1),
                high=_or_infinity(high, 1),
                p_value=p_value,
                significant=significant,
            )
            for a, b, comparison, deals, blocks, mean, low, high, p_value, significant in data[
                "pairs"
            ]
        ),
    )


# ---------------------------------------------------------------------------------------------
# Spread and "how many deals?"
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class Spread:
    """The standard deviation of one seat's score per deal for a preset (see bench/spread.py):
    ``table`` relative to its table's average, ``duplicate`` relative to the seats that held
    the same cards at ``duplicate_tables`` tables. Measured from ``deals`` deals."""

    game: str
    preset: str
    table: float
    duplicate: float
    duplicate_tables: int
    deals: int

    def per_deal(self, *, duplicate: bool, tables: int = 0) -> float:
        """The spread of a score per deal; in duplicate play with ``tables`` tables a round.

        A duplicate score is a seat's points minus the mean of the ``T`` seats that held its
        cards; with independent play at each table its variance is ``v * (1 - 1 / T)``, so the
        measured figure is rescaled from ``duplicate_tables`` to ``tables``.

        >>> Spread("g", "p", table=8.0, duplicate=3.0, duplicate_tables=4, deals=1).per_deal(
        ...     duplicate=True, tables=4)
        3.0
        """
        if not duplicate:
            return self.table
        if tables < 2:
            raise ValueError("duplicate play needs at least two tables a round")
        measured = 1 - 1 / self.duplicate_tables
        return self.duplicate * math.sqrt((1 - 1 / tables) / measured)

    def paired(self) -> float:
        """The spread of the difference between two seats that held the same cards at two
        tables (what the sequential test compares): ``sqrt(2 v)``, ``v`` the variance of one
        seat's play, ``duplicate ** 2 / (1 - 1 / duplicate_tables)``.

        >>> Spread("g", "p", table=8.0, duplicate=3.0, duplicate_tables=2, deals=1).paired()
        6.0
        """
        return self.duplicate * math.sqrt(2 / (1 - 1 / self.duplicate_tables))


@cache
def _spread_file() -> dict[str, dict[str, float]]:
    data = json.loads(SPREAD_FILE.read_text())
    presets: dict[str, dict[str, float]] = data["presets"]
    return presets


def preset_spread(game: str, preset: str) -> Spread:
    """The measured spread of ``game``/``preset`` (tournaments/spread.json); ValueError for a
    preset that was not measured."""
    try:
        row = _spread_file()[f"{game}/{preset}"]
    except KeyError:
        raise ValueError(f"no measured spread for {game}/{preset}") from None
    return Spread(
        game=game,
        preset=preset,
        table=float(row["table"]),
        duplicate=float(row["duplicate"]),
        duplicate_tables=int(row["duplicate_tables"]),
        deals=int(row["deals"]),
    )


def measured_spread(results: Results) -> float:
    """The spread of a score per deal in recorded results (e.g. the finished tournaments of a
    preset): the pooled standard deviation of each entry's scores around its own mean (house
    seats pooled as one), so that differences between entries do not count as noise."""
    by_entry: dict[EntryId | None, list[float]] = defaultdict(list)
    for block in results.blocks:
        for seat in block.seats:
            by_entry[seat.entry].extend(seat.scores)
    squares = 0.0
    freedom = 0
    for scores in by_entry.values():
        if len(scores) >= 2:
            values = np.asarray(scores)
            squares += float(((values - values.mean()) ** 2).sum())
            freedom += len(scores) - 1
    if freedom == 0:
        raise ValueError("too few scores to measure a spread")
    return math.sqrt(squares / freedom)


@dataclasses.dataclass(frozen=True, slots=True)
class Resolution:
    """What a tournament's settings tell apart: ``difference``, the smallest difference between
    two entries' mean scores per deal detected with the given power by a two-sided test at
    level ``1 - confidence``; ``half_width``, the expected half-width of an entry's interval;
    from ``deals_per_entry`` deals of spread ``spread`` each, in ``units`` independent blocks."""

    difference: float
    half_width: float
    deals_per_entry: int
    units: int
    spread: float
    duplicate: bool
    confidence: float
    power: float


def _spread_value(
    spread: Spread | float, *, duplicate: bool, entries: int, table_size: int
) -> float:
    if isinstance(spread, Spread):
        return spread.per_deal(duplicate=duplicate, tables=math.ceil(entries / table_size))
    if spread <= 0:
        raise ValueError("the spread must be positive")
    if duplicate and math.ceil(entries / table_size) < 2:
        raise ValueError("duplicate play needs at least two tables a round")
    return float(spread)


def resolution(
    *,
    entries: int,
    rounds: int,
    deals_per_table: int,
    table_size: int,
    duplicate: bool,
    spread: Spread | float,
    confidence: float = CONFIDENCE,
    power: float = 0.8,
) -> Resolution:
    """The smallest difference in points per deal that a tournament tells apart.

    Each entry plays ``n = rounds * deals_per_table`` deals, in ``u`` independent blocks
    (``rounds`` tables, or ``n`` duplicate boards). Two entries' means differ by a normal
    quantity of standard error ``sigma * sqrt(2 / n)`` (``sigma``: the spread per deal, in
    duplicate play rescaled to ``ceil(entries / table_size)`` tables a round); a two-sided test
    at level ``alpha = 1 - confidence`` detects a difference ``delta`` with probability
    ``power`` when ``delta = (t(1 - alpha / 2) + t(power)) * sigma * sqrt(2 / n)``, ``t`` the
    quantiles of Student's law with ``2 * (u - 1)`` degrees of freedom (each mean's spread is
    estimated from its ``u`` blocks). It supposes the two entries' deals independent (they are
    rarely at the same table) and the spread of the bots like that of the measured field.

    >>> r = resolution(entries=64, rounds=10, deals_per_table=8, table_size=4,
    ...                duplicate=False, spread=8.0)
    >>> round(r.difference, 2), r.deals_per_entry
    (3.75, 80)
    """
    if min(entries, rounds, deals_per_table, table_size) < 1:
        raise ValueError("entries, rounds, deals per table and table size must be positive")
    if not (0 < confidence < 1 and 0 < power < 1):
        raise ValueError("confidence and power must be between 0 and 1")
    sigma = _spread_value(spread, duplicate=duplicate, entries=entries, table_size=table_size)
    deals = rounds * deals_per_table
    units = deals if duplicate else rounds
    if units < 2:
        raise ValueError("one table per entry gives no interval: play at least two rounds")
    freedom = 2 * (units - 1)
    alpha = 1 - confidence
    error = sigma * math.sqrt(2 / deals)
    t_alpha = float(special.stdtrit(freedom, 1 - alpha / 2))
    t_power = float(special.stdtrit(freedom, power))
    t_single = float(special.stdtrit(units - 1, 1 - alpha / 2))
    return Resolution(
        difference=(t_alpha + t_power) * error,
        half_width=t_single * sigma / math.sqrt(deals),
        deals_per_entry=deals,
        units=units,
        spread=sigma,
        duplicate=duplicate,
        confidence=confidence,
        power=power,
    )


def rounds_needed(
    *,
    difference: float,
    entries: int,
    deals_per_table: int,
    table_size: int,
    duplicate: bool,
    spread: Spread | float,
    confidence: float = CONFIDENCE,
    power: float = 0.8,
    max_rounds: int = 100_000,
) -> Resolution:
    """The fewest rounds whose :func:`resolution` tells ``difference`` points per deal apart;
    its ``deals_per_entry`` is the deals needed. ValueError past ``max_rounds``.

    >>> rounds_needed(difference=3.75, entries=64, deals_per_table=8, table_size=4,
    ...               duplicate=False, spread=8.0).deals_per_entry
    80
    """
    if difference <= 0:
        raise ValueError("the difference must be positive")

    def at(rounds: int) -> Resolution:
        return resolution(
            entries=entries,
            rounds=rounds,
            deals_per_table=deals_per_table,
            table_size=table_size,
            duplicate=duplicate,
            spread=spread,
            confidence=confidence,
            power=power,
        )

    low = 1 if duplicate and deals_per_table >= 2 else 2  # the fewest rounds with an interval
    high = low
    while at(high).difference > difference:
        if high >= max_rounds:
            raise ValueError(f"more than {max_rounds} rounds are needed")
        low, high = high + 1, min(2 * high, max_rounds)
    while low < high:  # the resolution shrinks as rounds grow
        middle = (low + high) // 2
        if at(middle).difference > difference:
            low = middle + 1
        else:
            high = middle
    return at(high)


# ---------------------------------------------------------------------------------------------
# Sequential test: is v2 better than v1?
# ---------------------------------------------------------------------------------------------


class Verdict(enum.StrEnum):
    ACCEPT_H1 = "accept_h1"  # the mean difference is d1 (v2 is better, by about d1)
    ACCEPT_H0 = "accept_h0"  # the mean difference is d0 (v2 is not better)
    CONTINUE = "continue"  # play more deals
    CAPPED = "capped"  # the cap of deals is reached without a decision


#: Deals before the test may decide: its variance is estimated from the data, and a handful
#: of deals can hide the game's rare big swings (a shot at the moon).
MIN_DEALS = 64


@dataclasses.dataclass(frozen=True, slots=True)
class SprtResult:
    """The sequential test after ``deals`` paired deals: the running mean difference (v2's
    score minus v1's per deal) with Student's interval and the standard deviation, the
    log-likelihood ratio of H1 against H0 and its bounds, and the verdict."""

    deals: int
    mean: float
    low: float
    high: float
    sd: float
    llr: float
    lower_bound: float
    upper_bound: float
    verdict: Verdict
    d0: float
    d1: float
    alpha: float
    beta: float


def sprt_bounds(*, alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the log-likelihood ratio: accept H0 at or below the first, H1 at or
    above the second.

    >>> [round(b, 3) for b in sprt_bounds(alpha=0.05, beta=0.05)]
    [-2.944, 2.944]
    """
    if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
        raise ValueError("alpha and beta must be between 0 and 1, with alpha + beta < 1")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def sprt_from_sums(
    *,
    deals: int,
    total: float,
    total_squares: float,
    d0: float,
    d1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    confidence: float = CONFIDENCE,
    min_deals: int = MIN_DEALS,
    max_deals: int | None = None,
) -> SprtResult:
    """:func:`sprt` from running sums (number of deals, sum and sum of squares of the paired
    differences), which a match can keep batch after batch."""
    if d1 <= d0:
        raise ValueError("H1's mean difference d1 must be above H0's d0")
    lower, upper = sprt_bounds(alpha=alpha, beta=beta)
    if deals < 1:
        return SprtResult(
            0, 0.0, -math.inf, math.inf, 0.0, 0.0, lower, upper, Verdict.CONTINUE,
            d0, d1, alpha, beta,
        )  # fmt: skip
    mean = total / deals
    variance = max(total_squares - deals * mean * mean, 0.0) / (deals - 1) if deals > 1 else 0.0
    drift = (d1 - d0) * (2 * mean - d0 - d1)  # 2 * sigma^2 * (mean LLR per deal)
    if variance > 0:
        llr = deals * drift / (2 * variance)
    else:
        llr = 0.0 if drift == 0 or deals < 2 else math.copysign(math.inf, drift)
    if deals >= 2:
        half = float(special.stdtrit(deals - 1, 0.5 + confidence / 2)) * math.sqrt(variance / deals)
    else:
        half = math.inf
    verdict = Verdict.CONTINUE
    if deals >= min_deals:
        if llr >= upper:
            verdict = Verdict.ACCEPT_H1
        elif llr <= lower:
            verdict = Verdict.ACCEPT_H0
    if verdict is Verdict.CONTINUE and max_deals is not None and deals >= max_deals:
        verdict = Verdict.CAPPED
    return SprtResult(
        deals=deals,
        mean=mean,
        low=mean - half,
        high=mean + half,
        sd=math.sqrt(variance),
        llr=llr,
        lower_bound=lower,
        upper_bound=upper,
        verdict=verdict,
        d0=d0,
        d1=d1,
        alpha=alpha,
        beta=beta,
    )


def sprt(
    differences: Sequence[float] | FloatArray,
    *,
    d0: float,
    d1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    confidence: float = CONFIDENCE,
    min_deals: int = MIN_DEALS,
    max_deals: int | None = None,
) -> SprtResult:
    """Wald's sequential probability ratio test of H0: the mean paired difference is ``d0``
    points per deal, against H1: it is ``d1`` (``d1 > d0``), with error rates ``alpha`` (to
    accept H1 when H0 holds) and ``beta`` (to accept H0 when H1 holds).

    ``differences`` are the paired duplicate deals so far: on each deal, v2's score minus v1's,
    the two having held the same seat of the same cards (higher is better). The likelihood is
    normal with the variance estimated from the data (a generalized SPRT, as fishtest's normal
    approximation): ``LLR = n * (d1 - d0) * (2 * mean - d0 - d1) / (2 * s^2)``, ``s^2`` the
    sample variance. The test accepts H1 once ``LLR >= log((1 - beta) / alpha)``, H0 once
    ``LLR <= log(beta / (1 - alpha))``, and never before ``min_deals`` deals; otherwise it
    continues, or with ``max_deals`` deals or more stops without a decision (``CAPPED``). The
    running interval is Student's over the deals so far (after a sequential stop it is a little
    optimistic: the stop favours extreme means).

    >>> r = sprt([1.0, -1.0, 3.0, 1.0] * 20, d0=0.0, d1=1.0)
    >>> r.verdict, round(r.mean, 2), round(r.llr, 2)
    (<Verdict.ACCEPT_H1: 'accept_h1'>, 1.0, 19.75)
    """
    values = np.asarray(differences, dtype=np.float64)
    return sprt_from_sums(
        deals=int(values.size),
        total=float(values.sum()),
        total_squares=float((values**2).sum()),
        d0=d0,
        d1=d1,
        alpha=alpha,
        beta=beta,
        confidence=confidence,
        min_deals=min_deals,
        max_deals=max_deals,
    )


def sprt_expected_deals(
    *,
    d0: float,
    d1: float,
    sd: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    hypothesis: Literal["h0", "h1"] = "h1",
) -> float:
    """Wald's approximation of the mean number of deals the test takes when ``hypothesis``
    holds, with a spread ``sd`` of the paired differences per deal (the overshoot of the bounds
    makes it a little longer in practice).

    >>> round(sprt_expected_deals(d0=0.0, d1=1.0, sd=5.0))
    132
    """
    lower, upper = sprt_bounds(alpha=alpha, beta=beta)
    step = (d1 - d0) ** 2 / (2 * sd * sd)  # the mean LLR per deal, at d1 (minus it at d0)
    if hypothesis == "h1":
        return ((1 - beta) * upper + beta * lower) / step
    return -(alpha * upper + (1 - alpha) * lower) / step
