"""``tapis rules`` and ``tapis verify`` (games/cli.py) on Hearts logs."""

from __future__ import annotations

import argparse
import json
import random
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import games
from judge.cli import build_parser, main
from judge.play import parse_options

ROOT = Path(__file__).resolve().parents[2]


def hearts_log(preset: str = "whisthub", seed: int = 4, **overrides: object) -> dict[str, Any]:
    game = games.load("hearts", preset, **overrides)
    match = game.new_match(seed)
    rng = random.Random(seed)
    while True:
        state = match.state
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        if match.is_over():
            break
        match.next_deal()
    log: dict[str, Any] = json.loads(json.dumps(match.log()))
    return log


def test_rules_lists_games_presets_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert "hearts: Hearts family" in out
    for preset in ("whisthub (default)", "classic-fr", "classic-fr-sourdine", "two-player"):
        assert f"preset {preset}" in out
    for option in games.game_class("hearts").describe_options():
        assert f"--option {option.name}=" in out


@pytest.mark.parametrize("game", games.game_names())
def test_rules_prints_options_the_way_tapis_play_takes_them(
    game: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every option and preset line of `tapis rules`, fed back to `tapis play`'s own parser,
    gives the option's default and the preset's values."""
    assert main(["rules", game]) == 0
    lines = capsys.readouterr().out.splitlines()
    cls = games.game_class(game)
    play = build_parser()

    def parsed(words: list[str]) -> argparse.Namespace:
        return play.parse_args(["play", *words, "builtin:random"])

    defaults: dict[str, object] = {}
    for previous, line in zip(["", *lines], lines, strict=False):
        if line.startswith("  --option "):
            args = parsed(shlex.split(line.partition("  (")[0]))
            defaults.update(parse_options(args.option))
        elif line.startswith("      sets "):
            preset = parsed(shlex.split(previous.partition(":")[0].removesuffix(" (default)")))
            sets = parse_options(parsed(shlex.split(line.removeprefix("      sets "))).option)
            assert sets == cls.presets[preset.preset]
    assert defaults == {o.name: o.default for o in cls.describe_options()}
    games.load(game, **defaults)  # the engine takes them as printed


def test_rules_json_for_one_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "hearts", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == ["hearts"]
    options = {o["name"]: o for o in entries[0]["options"]}
    assert options["moon"]["choices"] == ["others-plus-26", "self-minus-26", "none"]
    assert options["players"]["allowed"] == "an integer from 2 to 6"
    presets = {p["name"]: p["values"] for p in entries[0]["presets"]}
    assert presets["two-player"]["leftover_cards"] == "stock"


def test_rules_unknown_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "bridge"]) == 2
    assert "unknown game 'bridge'" in capsys.readouterr().err


@pytest.mark.parametrize("preset", ["whisthub", "classic-fr", "classic-fr-sourdine", "two-player"])
def test_verify_accepts_a_true_log(
    preset: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = hearts_log(preset)
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {len(log['deals'])} deal(s) re-played")


def test_verify_names_the_first_illegal_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = hearts_log()
    actions = log["deals"][1]["actions"]
    step = next(i for i, (_, a) in enumerate(actions) if isinstance(a, str))  # the first card: 2C
    actions[step][1] = "AH"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    assert main(["verify", str(path), "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] is False
    assert (verdict["deal"], verdict["step"]) == (1, step)
    assert "illegal action 'AH'" in verdict["message"]


def test_verify_names_a_wrong_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = hearts_log("classic-fr")
    log["deals"][0]["points"][2] += 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    assert main(["verify", str(path)]) == 1
    assert "FAILED (deal 1)" in capsys.readouterr().out


def test_verify_rejects_a_deal_that_is_not_its_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = hearts_log()
    hands = log["deals"][0]["deal"]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(log))
    assert main(["verify", str(path)]) == 1
    assert "is not the deal its seed gives" in capsys.readouterr().out


def test_verify_unreadable_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nonsense.json"
    path.write_text("{not json")
    assert main(["verify", str(path)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_tapis_command_line(tmp_path: Path) -> None:
    """The real command line: ``python -m judge.cli`` is what the ``tapis`` script runs."""
    path = tmp_path / "log.json"
    path.write_text(json.dumps(hearts_log("two-player")))
    done = subprocess.run(
        [sys.executable, "-m", "judge.cli", "verify", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok:")
    rules = subprocess.run(
        [sys.executable, "-m", "judge.cli", "rules", "hearts"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert rules.returncode == 0, rules.stderr
    assert "--option hearts_broken_by=" in rules.stdout
