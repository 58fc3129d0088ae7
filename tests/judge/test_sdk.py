"""The one-file SDK (judge/sdk/tapis_bot.py): the loop, its error handling, standard library
only, and a full table played by SDK bots."""

from __future__ import annotations

import ast
import io
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import games
from judge.runner import SDK_DIR
from judge.sdk import tapis_bot

from .conftest import FIRST_LEGAL_BOT, play


def exchange(bot: tapis_bot.Bot, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stdin = io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    stdout = io.BytesIO()
    bot.run(stdin, stdout)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


HELLO = {
    "type": "hello",
    "protocol": 1,
    "game": "hearts",
    "preset": "whisthub",
    "options": {"players": 4},
    "seat": 2,
    "players": 4,
    "limits": {"startup": 5.0, "decision": 1.0, "bank": 20.0},
}


class Recorder(tapis_bot.Bot):
    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
        self.seen.append((observation, legal_actions, self.bank, self.deal))
        return legal_actions[-1]

    def on_deal_end(self, notice: dict[str, Any]) -> None:
        self.seen.append(notice["type"])

    def on_game_end(self, notice: dict[str, Any]) -> None:
        self.seen.append(notice["type"])


def test_the_sdk_loop_answers_with_the_request_id() -> None:
    bot = Recorder()
    out = exchange(
        bot,
        [
            HELLO,
            {
                "type": "act",
                "id": 5,
                "deal": 1,
                "observation": {"x": 1},
                "legal_actions": ["2C", "3C"],
                "bank": 19.5,
            },
            {"type": "deal_end", "deal": 1, "points": [0], "totals": [0], "summary": {}},
            {"type": "future_notice"},
            {"type": "game_end", "scores": [0], "places": [1]},
            {"type": "bye"},
            {
                "type": "act",
                "id": 6,
                "deal": 1,
                "observation": {},
                "legal_actions": ["2C"],
                "bank": 1,
            },
        ],
    )
    assert out == [{"type": "ready", "name": "recorder"}, {"id": 5, "action": "3C"}]
    assert (bot.game, bot.seat, bot.players, bot.options) == ("hearts", 2, 4, {"players": 4})
    assert bot.seen == [({"x": 1}, ["2C", "3C"], 19.5, 1), "deal_end", "game_end"]


def test_a_failing_act_logs_and_plays_the_first_legal_action(capsys: Any) -> None:
    class Broken(tapis_bot.Bot):
        def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
            raise ZeroDivisionError("oops")

    out = exchange(
        Broken(),
        [
            HELLO,
            {
                "type": "act",
                "id": 1,
                "deal": 0,
                "observation": {},
                "legal_actions": [["2C", "3C", "4C"]],
                "bank": 1,
            },
        ],
    )
    assert out == [{"type": "ready"}, {"id": 1, "action": ["2C", "3C", "4C"]}]
    err = capsys.readouterr().err
    assert "ZeroDivisionError: oops" in err
    assert "answering the first legal action" in err


def test_the_sdk_uses_the_standard_library_only() -> None:
    tree = ast.parse((SDK_DIR / "tapis_bot.py").read_text())
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".")[0])
    assert modules
    assert modules <= set(sys.stdlib_module_names) | {"__future__"}


def test_sdk_bots_play_a_whole_hearts_table(first_bot: Path) -> None:
    result = play([first_bot] * 4, game="hearts", deals=4)
    assert result.faults == ()
    assert len(result.deal_points) == 4
    assert all(seat.name == "first" for seat in result.seats)
    assert games.verify(result.log).ok


def test_a_zipped_bot_with_its_own_copy_of_the_sdk(tmp_path: Path) -> None:
    source = tmp_path / "bot.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("tapis.json", json.dumps({"entry": "main.py", "runtime": "python3"}))
        archive.writestr("main.py", FIRST_LEGAL_BOT.replace('"first"', '"zipped"'))
        archive.write(SDK_DIR / "tapis_bot.py", "tapis_bot.py")
    result = play([source], game="hearts", deals=2, sdk_dir=None)
    assert result.faults == ()
    assert result.seats[0].name == "zipped"
