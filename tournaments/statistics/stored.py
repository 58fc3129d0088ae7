"""The stored form of a finished tournament's figures: standings and crosstable as JSON."""

from __future__ import annotations

import math
from typing import Any

from tournaments.statistics.crosstable import Comparison, Crosstable, PairResult
from tournaments.statistics.standings import EntryStanding, Standings

#: The stored form: JSON values (lists and dicts of numbers, strings and booleans).
Stored = dict[str, Any]


def _finite_or_none(value: float) -> float | None:
    """``value``, or None if it is infinite.

    JSON (and PostgreSQL's jsonb) has no infinity: an interval without ends is stored as
    null."""
    return value if math.isfinite(value) else None


def _or_infinity(value: float | None, sign: float) -> float:
    return sign * math.inf if value is None else float(value)


def standings_as_json(standings: Standings) -> Stored:
    """``standings`` as JSON values, read back by :func:`standings_from_json` unchanged.

    >>> import json
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

    >>> import json
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
