"""Speed of the statistics of a tournament (tournaments/statistics.py): standings with their
bootstrap intervals and rank probabilities, and the crosstable, from the rows a tournament
stores. Prints figures; asserts nothing.

    .venv/bin/python bench/standings.py                      # 64 entries, 10 rounds (issue 17)
    .venv/bin/python bench/standings.py --entries 128 --rounds 12 --repeat 9

The tournament is synthetic (no database): entries of random strength seated at random each
round at tables of ``--seats``, ``--deals`` deals a table, points drawn around each seat's
strength; in duplicate play every table of a round holds the same cards. Each figure is the
median of ``--repeat`` runs (and the fastest): ``rows`` is :func:`results_from_rows` from seat
and deal rows as the selectors fetch them, ``standings`` is :func:`standings_with_confidence`
with its default 2,000 replicates, ``crosstable`` is :func:`crosstable`. The goal (issue 17):
``rows + standings`` under 200 ms for 64 entries and 10 rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tournaments.statistics import (
    DealRow,
    Results,
    SeatRow,
    crosstable,
    results_from_rows,
    standings_with_confidence,
)


def synthetic_rows(
    *, entries: int, rounds: int, seats: int, deals: int, duplicate: bool, seed: int
) -> tuple[list[SeatRow], list[DealRow]]:
    """Seat and deal rows of a random tournament (house seats fill the last table)."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 1.0, entries + 1)
    tables = -(-entries // seats)
    seat_rows: list[SeatRow] = []
    deal_rows: list[DealRow] = []
    for round_number in range(1, rounds + 1):
        order = [int(e) for e in rng.permutation(entries) + 1]
        order += [0] * (tables * seats - entries)  # 0: a house seat
        cards = rng.normal(0.0, 6.0, (deals, seats))
        for table in range(1, tables + 1):
            seated = order[(table - 1) * seats : table * seats]
            for position, entry in enumerate(seated):
                seat_rows.append(SeatRow(round_number, table, position, entry or None))
            luck = cards if duplicate else rng.normal(0.0, 6.0, (deals, seats))
            points = np.rint(luck + strength[seated] + rng.normal(0.0, 3.0, (deals, seats)))
            for index in range(deals):
                deal_rows.append(DealRow(round_number, table, index, tuple(points[index].tolist())))
    return seat_rows, deal_rows


def timed(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and fastest wall time of ``run``, in milliseconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times)


def measure(seats: list[SeatRow], deals: list[DealRow], *, duplicate: bool, repeat: int) -> None:
    def rows() -> Results:
        return results_from_rows(
            seats=seats, deals=deals, duplicate=duplicate, lower_is_better=True
        )

    results = rows()
    standings_with_confidence(results)  # warm up (imports, thread pools)
    figures = {
        "rows": timed(rows, repeat),
        "standings": timed(lambda: standings_with_confidence(results), repeat),
        "crosstable": timed(lambda: crosstable(results), repeat),
        "rows + standings": timed(lambda: standings_with_confidence(rows()), repeat),
    }
    kind = "duplicate" if duplicate else "normal"
    print(f"  {kind} play: {len(results.blocks)} blocks")
    for name, (median, fastest) in figures.items():
        print(f"    {name:17} {median:7.1f} ms  (fastest {fastest:.1f} ms)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seats", type=int, default=4, help="seats a table")
    parser.add_argument("--deals", type=int, default=8, help="deals a table")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure")
    args = parser.parse_args()
    print(
        f"{args.entries} entries, {args.rounds} rounds, {args.seats} seats a table, "
        f"{args.deals} deals a table (median / fastest of {args.repeat} runs)"
    )
    for duplicate in (False, True):
        seats, deals = synthetic_rows(
            entries=args.entries,
            rounds=args.rounds,
            seats=args.seats,
            deals=args.deals,
            duplicate=duplicate,
            seed=1,
        )
        measure(seats, deals, duplicate=duplicate, repeat=args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
