"""How many deals a tournament needs: the smallest difference its settings tell apart."""

from __future__ import annotations

import dataclasses
import math

from scipy import special

from tournaments.statistics import CONFIDENCE
from tournaments.statistics.spread import Spread


@dataclasses.dataclass(frozen=True, slots=True)
class Resolution:
    """What a tournament's settings tell apart.

    ``difference``: the smallest difference between two entries' mean scores per deal detected with
    the given power by a two-sided test at level ``1 - confidence``; ``half_width``, the expected
    half-width of an entry's interval; from ``deals_per_entry`` deals of spread ``spread`` each, in
    ``units`` independent blocks."""

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
    """The fewest rounds that tell ``difference`` points per deal apart.

    The :func:`resolution` of those rounds; its ``deals_per_entry`` is the deals needed. ValueError
    past ``max_rounds``.

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
