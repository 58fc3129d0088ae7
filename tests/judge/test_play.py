"""`tapis play` end to end: the results table, --json, --replay, bad bots and options."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import games
from judge.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_play_json(first_bot: Path, tmp_path: Path, capsys: Any) -> None:
    replay = tmp_path / "out.json"
    status = main(
        [
            "play", "--game", "hearts", "--preset", "whisthub", "--deals", "3", "--seed", "42",
            "--sandbox", "none", "--replay", str(replay), "--json",
            str(first_bot), "builtin:random", "builtin:lowest", "builtin:heuristic",
        ]
    )  # fmt: skip
    assert status == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["game"] == "hearts"
    assert out["seed"] == 42
    assert out["deals"] == 3
    seats = out["seats"]
    assert [s["bot"] for s in seats] == [
        "first.py",
        "builtin:random",
        "builtin:lowest",
        "builtin:heuristic",
    ]
    for seat in seats:
        assert {"total", "decisions", "mean_time", "p99_time", "faults"} <= set(seat)
        assert seat["faults"] == []
        assert seat["decisions"] > 0
    assert sum(s["total"] for s in seats) % 26 == 0
    log = json.loads(replay.read_text())
    assert games.verify(log).ok
    assert len(log["deals"]) == 3


def test_play_prints_a_table_and_fills_empty_seats(capsys: Any) -> None:
    assert main(["play", "--game", "roi", "--seed", "1", "builtin:lowest"]) == 0
    captured = capsys.readouterr()
    assert "3 empty seat(s) filled with builtin:heuristic" in captured.err
    lines = captured.out.splitlines()
    assert lines[0].startswith("roi/classic: 10 deal(s), seed 1")
    assert lines[1].split()[:4] == ["seat", "bot", "name", "total"]
    assert len(lines) == 6


def test_play_reports_faults_and_replacements(tmp_path: Path, capsys: Any) -> None:
    bot = tmp_path / "crash.py"
    bot.write_text("import sys\nprint('boom', file=sys.stderr)\nsys.exit(5)\n")
    status = main(["play", "--game", "roi", "--seed", "2", "--sandbox", "none", "--logs", str(bot)])
    assert status == 0
    out = capsys.readouterr().out
    assert "seat 1 start-up: crash: the bot exited with status 5" in out
    assert "seat 1 was played by builtin:heuristic at start-up" in out
    assert "from deal 1 on, seat 1 counts the worst points of each deal and its place is last" in (
        out
    )
    assert "boom" in out


@pytest.mark.parametrize(
    "example", ["c/bot.c", "go/main.go", "java/Bot.java", "javascript/bot.js", "python/bot.py"]
)
def test_play_runs_each_runtimes_example_unsandboxed(example: str, capsys: Any) -> None:
    """``--sandbox none`` runs a bot from its own folder, every path of its command mapped
    there (Java's class path ``gson.jar:/bot`` too; it found no class)."""
    source = REPO / "docs" / "examples" / example
    args = ["play", "--game", "hearts", "--deals", "1", "--seed", "3", "--sandbox", "none"]
    status = main([*args, "--json", str(source), "builtin:random"])
    assert status == 0
    seat = json.loads(capsys.readouterr().out)["seats"][0]
    assert seat["faults"] == [], seat
    assert seat["name"] == f"example-{source.parent.name}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "chess", "builtin:random"], "unknown game 'chess'"),
        (["--game", "hearts", "--option", "players=9", "builtin:random"], "players"),
        (["--game", "hearts", "--option", "nonsense", "builtin:random"], "NAME=VALUE"),
        (["--game", "hearts", "builtin:genius"], "no built-in bot 'genius'"),
        (["--game", "hearts", "--deals", "0", "builtin:random"], "--deals"),
        (["--game", "roi"] + ["builtin:random"] * 5, "seats 4, got 5"),
        (["--game", "roi", "/nonexistent/bot.py"], "cannot read the bot"),
    ],
)
def test_play_refuses_bad_arguments(args: list[str], message: str, capsys: Any) -> None:
    assert main(["play", *args]) == 2
    assert message in capsys.readouterr().err


def test_play_options_are_passed_to_the_rules(capsys: Any) -> None:
    args = ["play", "--game", "hearts", "--preset", "classic-fr", "--option", "players=3"]
    args += ["--option", "target_score=20", "--json", "--seed", "5", "builtin:lowest"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["seats"]) == 3
    assert max(out["totals"]) >= 20


def test_the_tapis_command(first_bot: Path) -> None:
    tapis = Path(sys.executable).parent / "tapis"
    command = [str(tapis)] if tapis.exists() else [sys.executable, "-m", "judge.cli"]
    done = subprocess.run(
        [*command, "play", "--game", "hearts", "--deals", "2", "--seed", "7", "--json",
         "--sandbox", "none", str(first_bot)],
        capture_output=True, text=True, timeout=120, cwd=REPO, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["seats"][0]["name"] == "first"
    assert out["seats"][0]["decisions"] > 0
    assert "\r[" not in done.stderr  # no progress bar when stderr is not a terminal
    assert done.stderr.count("WITHOUT A SANDBOX") == 1
