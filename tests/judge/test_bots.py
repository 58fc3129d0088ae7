"""Built-in bots: every one plays every registered game and preset without a fault, and the
heuristic beats random and lowest (a modest version of bench/bots.py)."""

from __future__ import annotations

import statistics

import pytest

import games
from judge import run_table
from judge.bots import builtin_names, heuristic_for, make_builtin, replacement_name

CASES = [(name, preset) for name in games.game_names() for preset in games.game_class(name).presets]
DEALS = {"hearts": 4, "roi": 10, "dutch": 2}


@pytest.mark.parametrize(("game", "preset"), CASES)
def test_every_built_in_bot_plays_every_preset(game: str, preset: str) -> None:
    engine = games.load(game, preset)
    names = builtin_names(game)
    assert "heuristic" in names, f"{game} has no heuristic bot"
    bots = [f"builtin:{names[i % len(names)]}" for i in range(engine.players)]
    for shift in range(len(names)):
        seats = bots[shift:] + bots[:shift]
        result = run_table(
            game=game, preset=preset, bots=seats, deals=DEALS.get(game), seed=shift, sandbox="none"
        )
        assert result.faults == (), result.faults
        assert games.verify(result.log).ok


def test_the_registry() -> None:
    for game in games.game_names():
        assert heuristic_for(game) is not None
        assert replacement_name(game) == "heuristic"
        bot = make_builtin("random", game=game, seat=1, players=4, seed=3)
        assert bot.seat == 1
    assert replacement_name("no-such-game") == "random"
    with pytest.raises(ValueError, match="built-in bots are: random, lowest"):
        make_builtin("heuristic", game="no-such-game", seat=0, players=4, seed=0)


def test_random_bots_are_reproducible() -> None:
    def totals() -> list[int]:
        return run_table(
            game="hearts", bots=["builtin:random"] * 4, deals=3, seed=9, sandbox="none"
        ).totals

    assert totals() == totals()


def _mean_points(game: str, tested: str, field: str, tables: int, deals: int | None) -> float:
    """The tested bot's mean points per deal, one seat against ``field``, seats rotated."""
    players = games.load(game).players
    points: list[float] = []
    for table in range(tables):
        seat = table % players
        bots = [f"builtin:{field}"] * players
        bots[seat] = f"builtin:{tested}"
        result = run_table(game=game, bots=bots, deals=deals, seed=table, sandbox="none")
        points += [p[seat] for p in result.deal_points]
    return statistics.fmean(points)


@pytest.mark.parametrize(
    ("game", "tables", "deals"),
    [("hearts", 40, 5), ("roi", 12, None), ("dutch", 40, 3)],
)
def test_the_heuristic_beats_random_and_lowest(game: str, tables: int, deals: int | None) -> None:
    assert game in games.game_names(), f"{game} is not registered"
    lower = games.game_class(game).lower_is_better
    for field in ("random", "lowest"):
        heuristic = _mean_points(game, "heuristic", field, tables, deals)
        for other in ("random", "lowest"):
            baseline = _mean_points(game, other, field, tables, deals)
            better = heuristic < baseline if lower else heuristic > baseline
            assert better, (game, field, other, heuristic, baseline)
