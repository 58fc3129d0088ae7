"""The interface of built-in bots: the same calls as the SDK's ``Bot``, run inside the judge.

Built-in bots are trusted code run in-process (no subprocess, no JSON): they fill empty seats,
stand in for faulty bots and serve as sparring partners. They see exactly what a bot process
sees: the ``hello`` message, each decision's observation and legal actions, and the notices.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import ClassVar

from games.base import JSON, Action


class BuiltinBot:
    """Base class of built-in bots. ``act`` must return one of ``legal_actions``."""

    name: ClassVar[str] = "builtin"

    def __init__(self, *, game: str, seat: int, players: int, seed: int) -> None:
        self.game = game
        self.seat = seat
        self.players = players
        self.options: Mapping[str, JSON] = {}
        # A bot's own randomness: reproducible per table and seat, never used for deals.
        self.rng = random.Random(f"tapis-bot/{self.name}/{seed}/{seat}")

    def on_hello(self, hello: Mapping[str, JSON]) -> None:
        options = hello.get("options")
        if isinstance(options, dict):
            self.options = options

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        raise NotImplementedError

    def on_deal_end(self, notice: Mapping[str, JSON]) -> None:
        """The end of a deal: its points, the totals and what the deal made public."""

    def on_game_end(self, notice: Mapping[str, JSON]) -> None:
        """The end of the table: scores and places."""


class RandomBot(BuiltinBot):
    """Plays a legal action chosen uniformly at random (its own seeded generator)."""

    name = "random"

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        return legal_actions[self.rng.randrange(len(legal_actions))]


class LowestBot(BuiltinBot):
    """Plays the first legal action in the game's order (the lowest card, the judge's fallback)."""

    name = "lowest"

    def act(self, observation: Mapping[str, JSON], legal_actions: Sequence[Action]) -> Action:
        return legal_actions[0]
