"""Tapis's authoritative rules engine: Hearts family, Jeu du Roi and Dutch.

Plain Python: it never imports Django, the judge or the API.

>>> import games
>>> game = games.load("hearts", "whisthub", fixed_deals=8)
>>> state = game.new_deal(deal_index=0, seed=123)
>>> state.current_player() in range(4)
True
"""

from __future__ import annotations

from games.base import JSON, Action, Game, Match, State, Trick, places_for
from games.cards import Card, CardSet, card_name, parse_card
from games.errors import GameError, IllegalActionError, LogError, OptionError
from games.log import Verdict, verify
from games.registry import catalogue, game_class, game_names, load, register

# Importing the game modules registers them, in this order.
from games import hearts as _hearts  # noqa: F401  isort: skip
from games import roi as _roi  # noqa: F401  isort: skip
from games import dutch as _dutch  # noqa: F401  isort: skip

__all__ = [
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
