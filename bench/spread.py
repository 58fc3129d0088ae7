"""The per-deal spread of each game and preset, and how much duplicate play narrows it: the
figures that tournaments/statistics/ plans with (tournaments/spread.json).

    .venv/bin/python bench/spread.py                      # every game and preset, 2,000 deals
    .venv/bin/python bench/spread.py --game hearts --deals 500
    .venv/bin/python bench/spread.py --write              # and store them in spread.json

The built-in bots play in-process (no sandbox: they are the judge's own code). The field is
``heuristic, lowest, random`` repeated to fill the table (four seats: heuristic, lowest, random,
heuristic). Every deal is played at as many tables as there are seats, the field rotated by
one seat at each, so that every bot holds every hand once: the duplicate set-up. Two scores per
seat and deal (higher is better, in the game's points):

- ``table``: the seat's points minus its table's average on that deal;
- ``duplicate``: the seat's points minus the average of the seats that held the same hand.

A figure is the pooled standard deviation of a score around each bot's own mean (so the gap
between the strong and the weak bots is not counted as noise), over every seat of every
table; ``heuristic`` is the same for the seats of the field's first bot alone (``--field``
measures another field, without writing it). ``narrows`` is
``table / duplicate``, and its square the factor by which duplicate play cuts the deals needed
for the same precision.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import games  # noqa: E402
from judge import run_table  # noqa: E402

FIELD = ("heuristic", "lowest", "random")
#: Deals a table: whole cycles of the games' deal patterns (Hearts' passes in four deals, the
#: Jeu du Roi's ten contracts).
DEALS_PER_TABLE = {"hearts": 8, "roi": 10, "dutch": 4}
SPREAD_FILE = REPO / "tournaments" / "spread.json"


def pooled_sd(scores: np.ndarray, bots: np.ndarray, only: str | None = None) -> float:
    """The standard deviation of ``scores`` around each bot's own mean, pooled."""
    squares = 0.0
    freedom = 0
    for name in np.unique(bots):
        if only is not None and name != only:
            continue
        values = scores[bots == name]
        squares += float(((values - values.mean()) ** 2).sum())
        freedom += values.size - 1
    return math.sqrt(squares / freedom)


def measure(
    game: str, preset: str, deals: int, field: tuple[str, ...] = FIELD
) -> dict[str, float | int]:
    engine = games.load(game, preset)
    players = engine.players
    sign = -1.0 if engine.lower_is_better else 1.0
    per_table = DEALS_PER_TABLE.get(game, 4)
    lineup = [field[i % len(field)] for i in range(players)]
    tables = -(-deals // per_table)
    # points[t, d, s]: rotation t of the field, deal d (of every table seed), seat s.
    points = np.zeros((players, tables * per_table, players))
    for seed in range(tables):
        for shift in range(players):
            bots = [f"builtin:{lineup[(s + shift) % players]}" for s in range(players)]
            result = run_table(
                game=game, preset=preset, bots=bots, deals=per_table, seed=seed, sandbox="none"
            )
            rows = slice(seed * per_table, (seed + 1) * per_table)
            points[shift, rows, :] = np.asarray(result.deal_points, dtype=np.float64)
    points = points[:, :deals, :]
    who = np.array(
        [[[lineup[(s + t) % players] for s in range(players)]] * deals for t in range(players)]
    )
    table = sign * (points - points.mean(axis=2, keepdims=True))
    duplicate = sign * (points - points.mean(axis=0, keepdims=True))
    flat_who = who.ravel()
    return {
        "table": round(pooled_sd(table.ravel(), flat_who), 3),
        "duplicate": round(pooled_sd(duplicate.ravel(), flat_who), 3),
        "duplicate_tables": players,
        "deals": deals,
        "deals_per_table": per_table,
        "heuristic_table": round(pooled_sd(table.ravel(), flat_who, lineup[0]), 3),
        "heuristic_duplicate": round(pooled_sd(duplicate.ravel(), flat_who, lineup[0]), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", help="only these games (repeatable)")
    parser.add_argument("--deals", type=int, default=2000, help="deals per preset")
    parser.add_argument(
        "--field",
        default=",".join(FIELD),
        help="the built-in bots, repeated to fill the table (default: %(default)s)",
    )
    parser.add_argument("--write", action="store_true", help=f"store the figures in {SPREAD_FILE}")
    args = parser.parse_args()
    field = tuple(args.field.split(","))
    if args.write and field != FIELD:
        parser.error("spread.json holds the default field's figures")
    measured: dict[str, dict[str, float | int]] = {}
    print(f"field: {', '.join(field)}; {args.deals} deals per preset, each at every rotation")
    print(f"  {'preset':28} {'table':>7} {'dupl.':>7} {'narrows':>7}  {field[0]}: table dupl.")
    for game in args.game or games.game_names():
        for preset in games.game_class(game).presets:
            started = time.perf_counter()
            row = measure(game, preset, args.deals, field)
            measured[f"{game}/{preset}"] = row
            narrows = float(row["table"]) / float(row["duplicate"])
            print(
                f"  {game + '/' + preset:28} {row['table']:7.3f} {row['duplicate']:7.3f} "
                f"{narrows:7.2f}  {row['heuristic_table']:16.3f} "
                f"{row['heuristic_duplicate']:6.3f}  ({time.perf_counter() - started:.0f} s)"
            )
    if args.write:
        command = " ".join(["bench/spread.py", *map(shlex.quote, sys.argv[1:])])
        document = {
            "command": f".venv/bin/python {command}",
            "field": list(FIELD),
            "presets": measured,
        }
        SPREAD_FILE.write_text(json.dumps(document, indent=2) + "\n")
        print(f"written to {SPREAD_FILE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
