"""The registry of games: ``games.load(name, preset, **overrides)``."""

from __future__ import annotations

from typing import TypeVar

from games.base import Game
from games.errors import OptionError

_GAMES: dict[str, type[Game[object]]] = {}

G = TypeVar("G", bound=type[Game[object]])


def register(cls: G) -> G:
    """Class decorator: make a game loadable by its name."""
    if cls.name in _GAMES:
        raise ValueError(f"game {cls.name!r} is registered twice")
    if cls.default_preset not in cls.presets:
        raise ValueError(f"{cls.name}: default preset {cls.default_preset!r} is not a preset")
    _GAMES[cls.name] = cls
    return cls


def game_names() -> list[str]:
    """The names of every registered game, in registration order."""
    return list(_GAMES)


def game_class(name: str) -> type[Game[object]]:
    try:
        return _GAMES[name]
    except (KeyError, TypeError):
        raise OptionError(
            f"unknown game {name!r}; games are: {', '.join(_GAMES)}", option="game"
        ) from None


def load(name: str, preset: str | None = None, /, **overrides: object) -> Game[object]:
    """A game with the rules of a named preset (its default one if None) and overrides.

    >>> load("hearts", "whisthub", fixed_deals=8).players
    4
    """
    cls = game_class(name)
    chosen = cls.default_preset if preset is None else preset
    if chosen not in cls.presets:
        raise OptionError(
            f"unknown preset {chosen!r} for {name}; presets are: {', '.join(cls.presets)}",
            option="preset",
        )
    return cls.from_preset(chosen, overrides)


def catalogue() -> list[dict[str, object]]:
    """Every game, its presets (with their values) and its options: JSON-safe."""
    out: list[dict[str, object]] = []
    for name, cls in _GAMES.items():
        out.append(
            {
                "name": name,
                "title": cls.title,
                "default_preset": cls.default_preset,
                "lower_is_better": cls.lower_is_better,
                "presets": [
                    {"name": p, "doc": cls.preset_docs.get(p, ""), "values": dict(values)}
                    for p, values in cls.presets.items()
                ],
                "options": [info.as_json() for info in cls.describe_options()],
            }
        )
    return out
