"""Speed of the statistics of a tournament (tournaments/statistics/): standings with their
bootstrap intervals and rank probabilities, and the crosstable, from the rows a tournament
stores. Prints figures; asserts nothing.

    .venv/bin/python bench/standings.py                      # 64 entries, 10 rounds (issue 17)
    .venv/bin/python bench/standings.py --entries 128 --rounds 12 --repeat 9
    DATABASE_URL=postgresql://... .venv/bin/python bench/standings.py --database

``--database`` also writes the same tournament's rows (entries, tables, seats, deals) into the
database of ``DATABASE_URL`` (migrated to the current schema), inside a transaction rolled back
at the end, and times what the API does for the standings' intervals:
:func:`tournaments.selectors.tournament_statistics` with the cache cleared (``selector``: the
standings version, the seat and deal queries, the ranked entries, the bootstrap and the
crosstable) and kept (``selector, kept``: a finished tournament's figures from the cache).

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

from tournaments.statistics.crosstable import crosstable
from tournaments.statistics.scores import DealRow, Results, SeatRow, results_from_rows
from tournaments.statistics.standings import standings_with_confidence


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


def measure_database(
    seats: list[SeatRow], deals: list[DealRow], *, entries: int, duplicate: bool, repeat: int
) -> None:
    """Write the tournament's rows, then time the selector on them (see the docstring)."""
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.db import transaction

    from tournaments import selectors
    from tournaments.models import Bot, BotVersion, Deal, Entry, Round, Seat, Table, Tournament

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            user = User.objects.create(username="bench-standings")
            bot = Bot.objects.create(owner=user, name="bench", game="hearts")
            versions = BotVersion.objects.bulk_create(
                BotVersion(bot=bot, number=i + 1, builtin="random", sha256="0" * 64)
                for i in range(entries)
            )
            cup = Tournament.objects.create(
                name="bench", organiser=user, game="hearts", preset="whisthub", table_size=4,
                rounds=max(s.round for s in seats), deals_per_table=8, duplicate=duplicate,
                status=Tournament.Status.FINISHED, seed="1", commitment="-",
            )  # fmt: skip
            made = Entry.objects.bulk_create(
                Entry(tournament=cup, version=v, user=user) for v in versions
            )
            entry_of = {i + 1: e.pk for i, e in enumerate(made)}
            rounds = {
                r.number: r
                for r in Round.objects.bulk_create(
                    Round(tournament=cup, number=n, status=Round.Status.DONE)
                    for n in sorted({s.round for s in seats})
                )
            }
            tables = {
                (t.round.number, t.number): t
                for t in Table.objects.bulk_create(
                    Table(
                        tournament=cup,
                        round=rounds[r],
                        number=n,
                        deal_seed=0,
                        status=Table.Status.DONE,
                    )
                    for r, n in sorted({(s.round, s.table) for s in seats})
                )
            }
            Seat.objects.bulk_create(
                Seat(table=tables[(s.round, s.table)], position=s.position,
                     entry_id=entry_of[s.entry] if s.entry else None)
                for s in seats
            )  # fmt: skip
            Deal.objects.bulk_create(
                Deal(table=tables[(d.round, d.table)], index=d.index, record={},
                     points=list(d.points), log={})
                for d in deals
            )  # fmt: skip

            def cold() -> object:
                cache.clear()
                return selectors.tournament_statistics(tournament=cup)

            cold()  # warm up
            figures = {
                "selector": timed(cold, repeat),
                "selector, kept": timed(
                    lambda: selectors.tournament_statistics(tournament=cup), repeat
                ),
            }
            for name, (median, fastest) in figures.items():
                print(f"    {name:17} {median:7.1f} ms  (fastest {fastest:.1f} ms)")
            raise Rollback
    except Rollback:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seats", type=int, default=4, help="seats a table")
    parser.add_argument("--deals", type=int, default=8, help="deals a table")
    parser.add_argument("--repeat", type=int, default=7, help="runs per figure")
    parser.add_argument(
        "--database", action="store_true", help="also through the selector on DATABASE_URL"
    )
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
        if args.database:
            measure_database(
                seats, deals, entries=args.entries, duplicate=duplicate, repeat=args.repeat
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
