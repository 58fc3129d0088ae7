"""Built-in bots by name: ``random`` and ``lowest`` for every game, ``heuristic`` per game.

>>> "random" in builtin_names("hearts")
True
"""

from __future__ import annotations

import importlib

from judge.bots.base import BuiltinBot, LowestBot, RandomBot

GENERIC: dict[str, type[BuiltinBot]] = {"random": RandomBot, "lowest": LowestBot}

# game name -> module holding its ``HeuristicBot``; imported on first use.
HEURISTIC_MODULES: dict[str, str] = {
    "hearts": "judge.bots.hearts",
    "roi": "judge.bots.roi",
    "dutch": "judge.bots.dutch",
}


def heuristic_for(game: str) -> type[BuiltinBot] | None:
    """The heuristic bot of a game, or None when it has none (yet)."""
    module_name = HEURISTIC_MODULES.get(game)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        return None
    bot: type[BuiltinBot] = module.HeuristicBot
    return bot


def builtin_names(game: str) -> list[str]:
    """The built-in bots that can play ``game``."""
    names = list(GENERIC)
    if heuristic_for(game) is not None:
        names.append("heuristic")
    return names


def builtin_class(name: str, game: str) -> type[BuiltinBot]:
    """The class of built-in bot ``name`` for ``game``; ValueError naming the choices."""
    if name in GENERIC:
        return GENERIC[name]
    if name == "heuristic":
        bot = heuristic_for(game)
        if bot is not None:
            return bot
    raise ValueError(
        f"no built-in bot {name!r} for {game}; built-in bots are: " + ", ".join(builtin_names(game))
    )


def make_builtin(name: str, *, game: str, seat: int, players: int, seed: int) -> BuiltinBot:
    return builtin_class(name, game)(game=game, seat=seat, players=players, seed=seed)


def replacement_name(game: str, preferred: str = "heuristic") -> str:
    """The built-in bot that takes over a faulty seat: ``preferred`` if the game has it, else
    ``random``."""
    try:
        builtin_class(preferred, game)
    except ValueError:
        return "random"
    return preferred


__all__ = [
    "GENERIC",
    "BuiltinBot",
    "LowestBot",
    "RandomBot",
    "builtin_class",
    "builtin_names",
    "heuristic_for",
    "make_builtin",
    "replacement_name",
]
