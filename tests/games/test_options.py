"""Every integer rule option of every game is bounded, and the engine refuses a value outside
its bounds when the rules are built, naming the option (issue 11: ``call_penalty: 10**30``
reached the database and failed every table of a tournament)."""

from __future__ import annotations

import pytest

import games
from games.errors import OptionError
from games.options import MAX_DEALS, MAX_POINTS, OptionInfo, option
from games.roi import RoiGame

INT_OPTIONS = [
    pytest.param(name, info, id=f"{name}-{info.name}")
    for name in games.game_names()
    for info in games.game_class(name).describe_options()
    if info.type == "int"
]


@pytest.mark.parametrize(("name", "info"), INT_OPTIONS)
def test_every_integer_option_has_a_minimum_and_a_maximum(name: str, info: OptionInfo) -> None:
    if info.choices is None:
        assert info.minimum is not None, f"{name}: {info.name} has no minimum"
        assert info.maximum is not None, f"{name}: {info.name} has no maximum"
        assert info.minimum <= info.default <= info.maximum  # type: ignore[operator]
        assert info.allowed() == f"an integer from {info.minimum} to {info.maximum}"


@pytest.mark.parametrize(("name", "info"), INT_OPTIONS)
def test_a_value_above_the_maximum_is_refused_naming_the_option(
    name: str, info: OptionInfo
) -> None:
    top = info.maximum if info.choices is None else max(info.choices)  # type: ignore[type-var]
    assert isinstance(top, int)
    for value in (top + 1, 10**30):
        with pytest.raises(OptionError) as refused:
            games.load(name, **{info.name: value})
        assert refused.value.option == info.name
        assert f"option {info.name!r} of {name} must be" in str(refused.value)


@pytest.mark.parametrize(("name", "info"), INT_OPTIONS)
def test_a_value_below_the_minimum_is_refused(name: str, info: OptionInfo) -> None:
    low = info.minimum if info.choices is None else min(info.choices)  # type: ignore[type-var]
    assert isinstance(low, int)
    for value in (low - 1, -(10**30)):
        with pytest.raises(OptionError) as refused:
            games.load(name, **{info.name: value})
        assert refused.value.option == info.name


def test_the_reported_option_loads_at_its_maximum_and_not_above() -> None:
    assert games.load("dutch", call_penalty=1000).rules.call_penalty == 1000  # type: ignore[attr-defined]
    with pytest.raises(OptionError, match="an integer from 0 to 1000, not 1000000000000"):
        games.load("dutch", call_penalty=10**30)


def test_an_integer_option_cannot_be_declared_without_bounds() -> None:
    with pytest.raises(TypeError, match="minimum and a maximum"):
        option(5, doc="unbounded", minimum=0)
    with pytest.raises(TypeError, match="minimum and a maximum"):
        option(5, doc="unbounded")
    option(5, doc="bounded", minimum=0, maximum=9)
    option(5, doc="listed", choices=(4, 5))
    option(True, doc="a bool needs no bounds")


def test_a_match_at_every_maximum_fits_in_32_bits() -> None:
    """Roi at every scoring maximum (the game whose options weigh most), over MAX_DEALS deals,
    keeps every total inside a 32-bit signed integer (the database's score columns)."""
    scoring = [
        info.name
        for info in games.game_class("roi").describe_options()
        if info.type == "int" and info.choices is None and info.name != "fixed_deals"
    ]
    game = games.load("roi", **dict.fromkeys(scoring, MAX_POINTS))
    assert isinstance(game, RoiGame)
    # Every point of a contract goes the same way, so no seat scores more than its total.
    worst = max(abs(contract.total) for contract in game.contracts)
    assert worst * MAX_DEALS < 2**31
