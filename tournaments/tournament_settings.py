"""A tournament's settings as one frozen value, with their defaults and bounds.

Every entry point that creates or changes a tournament (the services, the API's serializers, the
admin's form, the pages' forms) takes its field names, defaults and bounds from here, and the
services check every value against them (:meth:`TournamentSettings.bound_problems`), so that no
entry point accepts what another refuses. The rules themselves (preset and options) are checked
by the engine, in the services.

>>> settings = TournamentSettings(name="Club night", game="hearts", rounds=3, deals_per_table=8)
>>> settings.decision_seconds, settings.seating
(1.0, 'random')
>>> settings.bound_problems()
[]
>>> TournamentSettings(name="x", game="hearts", rounds=0, deals_per_table=8).bound_problems()
[('rounds', 'rounds must be from 1 to 100')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from judge.runner import Limits

_JUDGE_DEFAULTS: Final = Limits()


@dataclasses.dataclass(frozen=True, slots=True)
class Bound:
    """The inclusive range of a numeric setting, and its unit in messages."""

    low: float
    high: float
    unit: str = ""

    def message(self, name: str) -> str:
        label = name.replace("_", " ")
        unit = f" {self.unit}" if self.unit else ""
        return f"{label} must be from {_number(self.low)} to {_number(self.high)}{unit}"

    def help(self) -> str:
        """The range as a form's help says it, before anything is refused.

        >>> Bound(0.05, 60, "s").help()
        'From 0.05 to 60 s.'
        """
        unit = f" {self.unit}" if self.unit else ""
        return f"From {_number(self.low)} to {_number(self.high)}{unit}."


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


NAME_MAX_LENGTH: Final = 120
# The engine's options that a tournament sets through a setting of its own, by that setting's
# name (the form has no field for them; a refusal of one names the setting).
OPTIONS_AS_SETTINGS: Final[Mapping[str, str]] = {
    "players": "table_size",
    "fixed_deals": "deals_per_table",
}
PLACE_POINTS: Final = Bound(-1000, 1000)
"""The range of each value of a place-points scale."""

BOUNDS: Final[Mapping[str, Bound]] = {
    "rounds": Bound(1, 100),
    "deals_per_table": Bound(1, 1000),
    "table_size": Bound(2, 10, "seats"),
    "decision_seconds": Bound(0.01, 60.0, "seconds"),
    "bank_seconds": Bound(0.0, 3600.0, "seconds"),
    "startup_seconds": Bound(0.1, 120.0, "seconds"),
    "max_faults": Bound(1, 1000),
}
"""The bounds of every numeric setting (``place_points``: :data:`PLACE_POINTS` per value)."""


@dataclasses.dataclass(frozen=True, slots=True)
class TournamentSettings:
    """What an organiser chooses for a tournament. ``None`` means "the engine's default"
    (preset, table size) or "the default for the table size" (place points)."""

    name: str
    game: str
    rounds: int
    deals_per_table: int
    preset: str | None = None
    options: Mapping[str, object] = dataclasses.field(default_factory=dict)
    table_size: int | None = None
    seating: str = "random"
    duplicate: bool = False
    place_points: Sequence[int] | None = None
    decision_seconds: float = _JUDGE_DEFAULTS.decision
    bank_seconds: float = _JUDGE_DEFAULTS.bank
    startup_seconds: float = _JUDGE_DEFAULTS.startup
    max_faults: int = _JUDGE_DEFAULTS.max_faults
    house_bot: str = _JUDGE_DEFAULTS.replacement
    allow_multiple_entries: bool = False
    registration_opens_at: datetime | None = None
    registration_closes_at: datetime | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every setting's name, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def of(cls, source: object) -> TournamentSettings:
        """The settings of an object that has them as attributes (a Tournament)."""
        return cls(**{name: getattr(source, name) for name in cls.names()})

    def replace(self, **changes: Any) -> TournamentSettings:
        """These settings with some changed (unknown names raise TypeError)."""
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}

    def bound_problems(self) -> list[tuple[str, str]]:
        """(setting, message) for every value outside its bounds, in declaration order."""
        problems = []
        if len(self.name) > NAME_MAX_LENGTH:
            problems.append(("name", f"a name has at most {NAME_MAX_LENGTH} characters"))
        for name, bound in BOUNDS.items():
            value = getattr(self, name)
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not bound.low <= value <= bound.high
            ):
                problems.append((name, bound.message(name)))
        if self.place_points is not None and any(
            isinstance(v, int) and not PLACE_POINTS.low <= v <= PLACE_POINTS.high
            for v in self.place_points
        ):
            problems.append(("place_points", PLACE_POINTS.message("each place points value")))
        return problems


DEFAULTS: Final[Mapping[str, Any]] = {
    f.name: f.default
    for f in dataclasses.fields(TournamentSettings)
    if f.default is not dataclasses.MISSING
}
"""The default of every setting that has one (for model fields and forms)."""
