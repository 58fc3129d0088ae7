"""Declared rule options: frozen dataclasses whose fields carry their documentation.

A game's rules are a frozen dataclass whose every field is made by :func:`option`. Presets are
named dicts of values; :func:`build_rules` checks a preset plus overrides (unknown names, wrong
types, values out of range) and raises :class:`~games.errors.OptionError` with a message naming
the option and what it allows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from games.errors import OptionError

R = TypeVar("R")

OptionValue = int | bool | str

# The bounds shared by the games' integer options. Together they keep every figure of a match
# far inside a 32-bit signed integer (what the database stores points and totals in): the
# longest match is MAX_DEALS deals, and no deal can give any seat more than a few dozen times
# MAX_POINTS (Roi's trump deal at every maximum: 13 tricks and 13 trumps at MAX_POINTS each).
#: The most deals a match may be fixed to (``fixed_deals``).
MAX_DEALS = 10_000
#: The highest score a game may be played to (``target_score``).
MAX_TARGET_SCORE = 10_000
#: The most points one scoring option (a penalty, a bonus per trick or card) may be worth.
MAX_POINTS = 1_000


@dataclasses.dataclass(frozen=True, slots=True)
class OptionInfo:
    """What a rule option is: for `tapis rules`, the API and docs/rules.md."""

    name: str
    type: str  # "int", "bool" or "str"
    default: OptionValue
    doc: str
    choices: tuple[OptionValue, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    @property
    def label(self) -> str:
        """The option's name as words for people: capitalised, card names upper case.

        >>> OptionInfo("td_bonus", "bool", False, "").label
        'TD bonus'
        """
        return option_label(self.name)

    def allowed(self) -> str:
        """The allowed values, in words."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type == "bool":
            return "true or false"
        if self.type == "int":
            if self.minimum is not None and self.maximum is not None:
                return f"an integer from {self.minimum} to {self.maximum}"
            return "an integer"
        return "a string"

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "label": self.label,
            "type": self.type,
            "default": self.default,
            "doc": self.doc,
            "choices": list(self.choices) if self.choices is not None else None,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "allowed": self.allowed(),
        }


_CARD_RANKS = "23456789tjqka"
_CARD_SUITS = "cdhs"


def option_label(name: str) -> str:
    """An option's name as words: ``king_of_hearts_penalty`` is "King of hearts penalty", and
    a word that is a card's name (``td``: the ten of diamonds) is written as the rules write
    cards ("TD bonus")."""
    words = [
        word.upper()
        if len(word) == 2 and word[0] in _CARD_RANKS and word[1] in _CARD_SUITS
        else word
        for word in name.split("_")
    ]
    text = " ".join(words)
    return text[:1].upper() + text[1:]


def option(
    default: OptionValue,
    *,
    doc: str,
    choices: Sequence[OptionValue] | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> Any:
    """Declare a rule option (a dataclass field with its documentation and allowed values).

    An integer option needs its ``choices`` or both bounds: the values of a match (points,
    totals, deal counts) are stored in 32-bit columns and a table's time budget follows its
    length, so no option may be unbounded.
    """
    unbounded = minimum is None or maximum is None
    if isinstance(default, int) and not isinstance(default, bool) and choices is None and unbounded:
        raise TypeError("an integer option declares its choices or a minimum and a maximum")
    meta = {
        "doc": doc,
        "choices": tuple(choices) if choices is not None else None,
        "minimum": minimum,
        "maximum": maximum,
    }
    # Returns a dataclasses.Field, which the class body assigns to a field typed as its value
    # (``players: int = option(4, ...)``). Any, not the value's type: compiled by mypyc, a
    # class body checks at run time that what it assigns has the declared type.
    return dataclasses.field(default=default, metadata=meta)


def describe_options(rules_type: type[object]) -> list[OptionInfo]:
    """Every option of a rules dataclass, in declaration order."""
    infos = []
    for f in dataclasses.fields(rules_type):  # type: ignore[arg-type]
        default = f.default
        assert isinstance(default, int | str), f"option {f.name} needs a plain default"
        kind = "bool" if isinstance(default, bool) else type(default).__name__
        infos.append(
            OptionInfo(
                name=f.name,
                type=kind,
                default=default,
                doc=f.metadata.get("doc", ""),
                choices=f.metadata.get("choices"),
                minimum=f.metadata.get("minimum"),
                maximum=f.metadata.get("maximum"),
            )
        )
    return infos


def check_option(info: OptionInfo, value: object, *, game: str) -> OptionValue:
    """Check one value against its option; return it, or raise OptionError."""
    wrong = OptionError(
        f"option {info.name!r} of {game} must be {info.allowed()}, not {value!r}",
        option=info.name,
    )
    if info.type == "bool":
        if not isinstance(value, bool):
            raise wrong
        return value
    if info.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
        if info.minimum is not None and value < info.minimum:
            raise wrong
        if info.maximum is not None and value > info.maximum:
            raise wrong
    elif info.type == "str" and not isinstance(value, str):
        raise wrong
    if info.choices is not None and value not in info.choices:
        raise wrong
    assert isinstance(value, int | str)
    return value


def build_rules(
    rules_type: type[R],
    *,
    game: str,
    preset: Mapping[str, object],
    overrides: Mapping[str, object],
) -> R:
    """The rules of a preset with overrides applied, every value checked."""
    infos = {info.name: info for info in describe_options(rules_type)}
    values: dict[str, OptionValue] = {}
    for source in (preset, overrides):
        for name, value in source.items():
            info = infos.get(name)
            if info is None:
                raise OptionError(
                    f"unknown option {name!r} for {game}; its options are: "
                    + ", ".join(sorted(infos)),
                    option=name,
                )
            values[name] = check_option(info, value, game=game)
    return rules_type(**values)


def rules_as_json(rules: object) -> dict[str, OptionValue]:
    """Every option of a rules object, by name (JSON-safe)."""
    return {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)}  # type: ignore[arg-type]
