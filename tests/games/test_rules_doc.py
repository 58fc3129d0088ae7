"""docs/rules.md documents every option and every preset of every registered game, and its
Hearts preset table says what the engine does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import games

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"


def sections() -> dict[str, str]:
    """The doc's ``## Title (name)`` sections by game name."""
    text = DOC.read_text()
    out = {}
    for match in re.finditer(r"^## [^\n]*\((\w+)\)\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        out[match.group(1)] = match.group(2)
    return out


def test_rules_doc_has_the_three_sections() -> None:
    # A game's section is titled with its name in brackets; other sections (what the platform
    # asks a game) sit beside them at the same level.
    titles = re.findall(r"^## (.*\(\w+\))$", DOC.read_text(), re.M)
    assert titles == ["Hearts family (hearts)", "Jeu du Roi (roi)", "Dutch (dutch)"]


@pytest.mark.parametrize("name", games.game_names())
def test_every_option_and_preset_is_documented(name: str) -> None:
    section = sections().get(name)
    assert section is not None, f"docs/rules.md has no '## ... ({name})' section"
    assert "To be written" not in section, f"docs/rules.md: the {name} section is a placeholder"
    cls = games.game_class(name)
    for info in cls.describe_options():
        assert f"`{info.name}`" in section, f"option {info.name} is not documented"
    for preset in cls.presets:
        assert f"`{preset}`" in section, f"preset {preset} is not documented"


def options_text(section: str) -> str:
    """The ``### Options`` subsection of a game's section."""
    match = re.search(r"^### Options\n(.*?)(?=^### |\Z)", section, re.M | re.S)
    assert match is not None, "no '### Options' subsection"
    return match.group(1)


@pytest.mark.parametrize("name", games.game_names())
def test_every_integer_option_has_its_bounds_documented(name: str) -> None:
    """Each integer option's entry (its bullet or table row) says 'MIN to MAX'."""
    text = options_text(sections()[name])
    for info in games.game_class(name).describe_options():
        if info.type != "int" or info.choices is not None:
            continue
        entry = next(
            (
                line
                for line in text.splitlines()
                if line.startswith((f"- **`{info.name}`**", f"| `{info.name}` |"))
            ),
            None,
        )
        assert entry is not None, f"{name}: option {info.name} has no entry under ### Options"
        assert f"{info.minimum} to {info.maximum}" in entry, (name, info.name, entry)


def test_hearts_preset_table_matches_the_engine() -> None:
    section = sections()["hearts"]
    header = next(line for line in section.splitlines() if line.startswith("| option |"))
    presets = re.findall(r"`([\w-]+)`", header)
    assert presets == list(games.game_class("hearts").presets)
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
        if line.startswith("| `"):
            rows[cells[0]] = cells[1:]
    options = [info.name for info in games.game_class("hearts").describe_options()]
    assert list(rows) == options
    for column, preset in enumerate(presets):
        rules = games.load("hearts", preset).rules
        for option in options:
            value = getattr(rules, option)
            text = str(value).lower() if isinstance(value, bool) else str(value)
            assert rows[option][column] == text, (preset, option)
