"""The engine's errors. All are ValueErrors: they always mean bad input, never a bug."""

from __future__ import annotations


class GameError(ValueError):
    """Base class of every error the engine raises on bad input."""


class OptionError(GameError):
    """An unknown game, preset or option, or an option value out of range."""

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class IllegalActionError(GameError):
    """An action that the rules do not allow now; the state is left unchanged."""


class LogError(GameError):
    """A replay log that is malformed (not one that records an illegal game: see verify)."""
