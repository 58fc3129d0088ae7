"""Tapis's authoritative rules engine: Hearts family, Jeu du Roi and Dutch.

Plain Python: it never imports Django, the judge or the API.

>>> import games
>>> game = games.load("hearts", "whisthub", fixed_deals=8)
>>> state = game.new_deal(deal_index=0, seed=123)
>>> state.current_player() in range(4)
True

The hot modules run compiled by mypyc when ``make compile`` built them from exactly these
sources (see games/_native.py); ``games.COMPILED`` says whether they do and ``games.ENGINE``
why. ``TAPIS_PURE_PYTHON=1`` forces pure Python.
"""

from __future__ import annotations

import sys as _sys

# First: importing it puts the compiled engine modules in place when their build is current.
from games import _native  # isort: skip
from games.base import JSON, Action, Game, Match, State, Trick, places_for
from games.cards import Card, CardSet, card_name, parse_card
from games.errors import GameError, IllegalActionError, LogError, OptionError
from games.log import Verdict, verify
from games.registry import catalogue, game_class, game_names, load, register

# Importing the game modules registers them, in this order.
from games import hearts as _hearts  # noqa: F401  isort: skip
from games import roi as _roi  # noqa: F401  isort: skip
from games import dutch as _dutch  # noqa: F401  isort: skip

#: Whether the engine's hot modules (games._native.COMPILED_MODULES) run compiled by mypyc.
COMPILED: bool = _native.ACTIVE and all(
    _native.in_use(_sys.modules[name])
    for name in _native.COMPILED_MODULES
    if name in _sys.modules  # games.hearts_fast is imported on demand, by the same finder
)
#: Which engine is in use, and why, in words (bench/engine.py and ``tapis rules`` print it).
ENGINE: str = (
    _native.WHY if COMPILED or not _native.ACTIVE else "pure Python (a module did not load)"
)

__all__ = [
    "COMPILED",
    "ENGINE",
    "JSON",
    "Action",
    "Card",
    "CardSet",
    "Game",
    "GameError",
    "IllegalActionError",
    "LogError",
    "Match",
    "OptionError",
    "State",
    "Trick",
    "Verdict",
    "card_name",
    "catalogue",
    "game_class",
    "game_names",
    "load",
    "parse_card",
    "places_for",
    "register",
    "verify",
]
