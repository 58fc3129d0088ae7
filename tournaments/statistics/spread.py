"""The spread of a score per deal: measured per preset, or from recorded results."""

from __future__ import annotations

import dataclasses
import json
import math
from collections import defaultdict
from functools import cache
from pathlib import Path

import numpy as np

from tournaments.statistics.scores import EntryId, Results

#: Where the measured per-deal spreads of the presets are kept (written by bench/spread.py).
SPREAD_FILE = Path(__file__).parents[1] / "spread.json"


@dataclasses.dataclass(frozen=True, slots=True)
class Spread:
    """The standard deviation of one seat's score per deal for a preset.

    Measured by bench/spread.py: ``table`` relative to its table's average, ``duplicate`` relative
    to the seats that held the same cards at ``duplicate_tables`` tables. Measured from ``deals``
    deals."""

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
        """The spread of a paired difference: two seats that held the same cards.

        The difference between two seats that held the same cards at two tables is what the
        sequential test compares; its spread is ``sqrt(2 v)``, ``v`` the variance of one seat's
        play, ``duplicate ** 2 / (1 - 1 / duplicate_tables)``.

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
    """The measured spread of ``game``/``preset``.

    Read from tournaments/spread.json; ValueError for a preset that was not measured."""
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
    """The spread of a score per deal in recorded results.

    The results are e.g. the finished tournaments of a preset; the spread is the pooled standard
    deviation of each entry's scores around its own mean (house seats pooled as one), so that
    differences between entries do not count as noise."""
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
