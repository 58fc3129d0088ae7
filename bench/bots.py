"""How well the built-in bots play: mean points per deal of each bot type, per game.

Run from the repository root::

    .venv/bin/python bench/bots.py                    # every game, 2,000 deals per line
    .venv/bin/python bench/bots.py --game hearts --deals 500

For each game, two set-ups (same deal seeds for every bot under test, seats rotated):

- ``vs random`` and ``vs lowest``: the bot under test in one seat, that bot in all the others;
  the figure is the tested bot's mean points per deal;
- ``mixed``: one table holding heuristic, random and lowest (the rest random), seats rotated
  table by table; the figure is each bot type's mean points per deal at those tables.

Lower is better for Hearts and Dutch, higher for the Jeu du Roi (``lower_is_better``). It
prints figures and asserts nothing (tests/judge/test_bots.py checks a small version).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import games  # noqa: E402
from judge import run_table  # noqa: E402
from judge.bots import builtin_names  # noqa: E402

DEALS_PER_TABLE = {"hearts": 8, "roi": 10, "dutch": 4}


def _deals_per_table(game: str) -> int:
    return DEALS_PER_TABLE.get(game, 4)


def vs_field(
    game: str, preset: str | None, tested: str, field: str, deals: int
) -> tuple[float, float]:
    """Mean (and standard error of) the tested bot's points per deal against ``field``."""
    engine = games.load(game, preset)
    players = engine.players
    per_table = _deals_per_table(game)
    points: list[float] = []
    table = 0
    while len(points) < deals:
        seat = table % players
        bots = [f"builtin:{field}"] * players
        bots[seat] = f"builtin:{tested}"
        result = run_table(
            game=game, preset=preset, bots=bots, deals=per_table, seed=table, sandbox="none"
        )
        points += [float(p[seat]) for p in result.deal_points]
        table += 1
    points = points[:deals]
    return statistics.fmean(points), statistics.stdev(points) / len(points) ** 0.5


def mixed(game: str, preset: str | None, names: list[str], deals: int) -> dict[str, float]:
    """Mean points per deal of each bot type at tables where they all sit together."""
    engine = games.load(game, preset)
    players = engine.players
    per_table = _deals_per_table(game)
    lineup = (names + ["random"] * players)[:players]
    sums = dict.fromkeys(names, 0.0)
    counts = dict.fromkeys(names, 0)
    table = 0
    played = 0
    while played < deals:
        shift = table % players
        seats = lineup[-shift:] + lineup[:-shift] if shift else list(lineup)
        result = run_table(
            game=game,
            preset=preset,
            bots=[f"builtin:{n}" for n in seats],
            deals=per_table,
            seed=10_000 + table,
            sandbox="none",
        )
        for points in result.deal_points:
            for seat, name in enumerate(seats):
                if name in sums:
                    sums[name] += points[seat]
                    counts[name] += 1
        played += len(result.deal_points)
        table += 1
    return {n: sums[n] / counts[n] for n in names if counts[n]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument("--preset", default=None, help="rules preset (default: each game's)")
    parser.add_argument("--deals", type=int, default=2000, help="deals per figure")
    args = parser.parse_args()
    names = args.game or games.game_names()
    for game in names:
        cls = games.game_class(game)
        better = "lower" if cls.lower_is_better else "higher"
        bots = builtin_names(game)
        preset = args.preset or cls.default_preset
        print(f"{game} ({preset}): mean points per deal, {better} is better")
        started = time.perf_counter()
        for field in ("random", "lowest"):
            for tested in bots:
                mean, err = vs_field(game, args.preset, tested, field, args.deals)
                print(
                    f"  vs {field:7} {tested:10} {mean:8.3f}  (+/- {err:.3f}, {args.deals} deals)"
                )
        together = mixed(game, args.preset, bots, args.deals)
        line = "  ".join(f"{n} {v:.3f}" for n, v in together.items())
        print(f"  mixed      {line}  ({args.deals} deals)")
        print(f"  ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
