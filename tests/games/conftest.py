"""Fixtures for the engine tests (tests/games): no database, plain pytest."""

from __future__ import annotations

from collections.abc import Callable

import pytest

import games
from games.hearts import HeartsGame


@pytest.fixture
def hearts() -> Callable[..., HeartsGame]:
    """``hearts(preset, **overrides)``: a Hearts game."""

    def make(preset: str = "whisthub", **overrides: object) -> HeartsGame:
        game = games.load("hearts", preset, **overrides)
        assert isinstance(game, HeartsGame)
        return game

    return make
