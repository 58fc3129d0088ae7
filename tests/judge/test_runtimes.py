"""The bot runtimes: each example bot of docs/examples/ plays a real sandboxed table of each game.

The example bots check themselves: at each deal's end they compare the ``tricks`` list they
rebuilt from the deltas with the deal's summary and write ``ok`` or ``MISMATCH`` on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge import run_table

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"

# (game, preset, options, deals): every game, with as few deals as make a whole table
TABLES = [
    ("hearts", "whisthub", {}, 2),
    ("roi", "classic", {}, 10),
    ("dutch", "classic", {"players": 2}, 2),
]


@pytest.mark.parametrize(("game", "preset", "options", "deals"), TABLES, ids=lambda v: str(v))
def test_python_example_plays_every_game(
    bwrap_works: None, game: str, preset: str, options: dict[str, int], deals: int
) -> None:
    players = options.get("players", 4)
    result = run_table(
        game=game,
        preset=preset,
        options=options,
        bots=[str(EXAMPLES / "python" / "bot.py"), *["builtin:heuristic"] * (players - 1)],
        deals=deals,
        seed=7,
        sandbox="bwrap",
    )
    seat = result.seats[0]
    assert not result.faults, result.faults
    assert not seat.replaced
    assert seat.name == "example-python"
    lines = seat.log.splitlines()
    assert len(lines) == deals, seat.log
    assert all(line.endswith(", ok") for line in lines), seat.log
    if game == "dutch":
        assert all(" 0 tricks" in line and " 0 history" not in line for line in lines)
    else:
        assert all(" 0 tricks" not in line for line in lines)
