"""The engine's errors. All are ValueErrors: they always mean bad input, never a bug."""

from __future__ import annotations


class GameError(ValueError):
    """Base class of every error the engine raises on bad input."""


class OptionError(GameError):
    """An unknown game, preset or option, or an option value out of range.

    A refusal of one option's value names it first: ``option 'name' of game ...`` (the engine's
    words, for the command line and bot authors); :attr:`predicate` is what follows, for
    callers that name the option in words of their own (the tournament pages).

    >>> OptionError("option 'slots' of dutch must be 4, not 9", option="slots").predicate
    'must be 4, not 9'
    """

    def __init__(self, message: str, *, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option

    @property
    def predicate(self) -> str | None:
        """What the message says of its option after ``option 'name' of game``, or None
        when it does not begin so (an unknown game, preset or option)."""
        subject = f"option {self.option!r} of "
        message = str(self)
        if self.option is None or not message.startswith(subject):
            return None
        _game, _, rest = message[len(subject) :].partition(" ")
        return rest or None


class IllegalActionError(GameError):
    """An action that the rules do not allow now; the state is left unchanged."""


class LogError(GameError):
    """A replay log that is malformed (not one that records an illegal game: see verify)."""
