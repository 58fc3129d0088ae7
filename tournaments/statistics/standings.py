"""Standings with confidence: each entry's mean score per deal, its interval and rank chances."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from functools import cache

import numpy as np
from numpy.typing import NDArray
from scipy import special
from threadpoolctl import ThreadpoolController

from tournaments.statistics import CONFIDENCE
from tournaments.statistics.scores import EntryId, FloatArray, Results

#: Bootstrap replicates: their standard deviation is then within about 3% of its limit, and
#: each rank probability within about 1%.
RESAMPLES = 2000
#: The bootstrap's seed: the same results always give the same intervals.
SEED = 0


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
    """Each entry's sum of scores and number of deals in each block.

    ``(S, N)``: ``S[k, e]`` the sum of entry ``e``'s scores in block ``k``, ``N[k, e]`` the
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
    """The factor from the bootstrap's spread to the standard error, for ``n`` blocks.

    ``sqrt((n + 1) / (n - 1))`` (infinite below 2): the Bayesian bootstrap's standard deviation of a
    mean of ``n`` units is ``s * sqrt((n - 1) / (n * (n + 1)))``, ``s`` the units' sample standard
    deviation; times this factor it is the standard error ``s / sqrt(n)``."""
    n = blocks.astype(np.float64)
    out = np.full(n.shape, np.inf)
    ok = n >= 2
    out[ok] = np.sqrt((n[ok] + 1) / (n[ok] - 1))
    return out


def _rank_widening(blocks: NDArray[np.int64], confidence: float) -> FloatArray:
    """How much wider than the bootstrap's own spread each entry's interval is.

    For ``n`` blocks: the standard error's small-sample factor times Student's quantile over the
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
    """Rank the entries by mean score per deal, with intervals and rank chances.

    Each entry's mean score per deal with a ``confidence`` interval, the probability of each
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
