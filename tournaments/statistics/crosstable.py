"""The crosstable: every pair of entries that met, compared deal by deal."""

from __future__ import annotations

import dataclasses
import enum
from functools import cache

import numpy as np
from numpy.typing import NDArray
from scipy import special

from tournaments.statistics import CONFIDENCE
from tournaments.statistics.scores import EntryId, FloatArray, Results, TableKey


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
    """How ``a`` compared with ``b``: the mean of its score minus ``b``'s per deal.

    The mean is over the deals where they were compared, with Student's ``confidence`` interval over
    those deals and its two-sided p-value; ``significant`` when the interval excludes 0. ``blocks``:
    the tables (normal play) or boards they shared. With one deal there is no interval (infinite
    ends, p-value 1)."""

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
    """Compare every pair of entries that met, deal by deal.

    For each pair: the mean difference of their scores per deal, with Student's t interval over the
    deals compared, the number of deals, and a significance flag (the interval excludes 0, i.e. p <
    1 - confidence, two-sided).

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
