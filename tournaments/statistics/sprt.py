"""The sequential test of a match: is v2 better than v1?"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy import special

from tournaments.statistics import CONFIDENCE
from tournaments.statistics.scores import FloatArray


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
    """The sequential test after ``deals`` paired deals.

    The running mean difference (v2's score minus v1's per deal) with Student's interval and the
    standard deviation, the log-likelihood ratio of H1 against H0 and its bounds, and the
    verdict."""

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
    """Wald's bounds on the log-likelihood ratio.

    Accept H0 at or below the first, H1 at or above the second.

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
    """The sequential test from running sums, which a match keeps batch after batch.

    :func:`sprt` from the number of deals, the sum and the sum of squares of the paired
    differences."""
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
    """Test whether v2 is better than v1, deal by deal (Wald's sequential test).

    The sequential probability ratio test of H0: the mean paired difference is ``d0`` points per
    deal, against H1: it is ``d1`` (``d1 > d0``), with error rates ``alpha`` (to accept H1 when H0
    holds) and ``beta`` (to accept H0 when H1 holds).

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
    """The mean number of deals the test takes (Wald's approximation).

    When ``hypothesis`` holds, with a spread ``sd`` of the paired differences per deal (the
    overshoot of the bounds makes it a little longer in practice).

    >>> round(sprt_expected_deals(d0=0.0, d1=1.0, sd=5.0))
    132
    """
    lower, upper = sprt_bounds(alpha=alpha, beta=beta)
    step = (d1 - d0) ** 2 / (2 * sd * sd)  # the mean LLR per deal, at d1 (minus it at d0)
    if hypothesis == "h1":
        return ((1 - beta) * upper + beta * lower) / step
    return -(alpha * upper + (1 - alpha) * lower) / step
