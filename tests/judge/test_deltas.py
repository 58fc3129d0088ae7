"""The append-only lists of observations (``history``, ``tricks``) go out as deltas
(docs/protocol.md, "Lists sent as deltas"): the engines' lists really are append-only, and
both the SDK and the recipe the doc gives a bot without the SDK rebuild exactly the engine's
observation, at a real table too (faults and a new deal included)."""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

import games
from judge import FaultKind, Limits
from judge.protocol import APPEND_ONLY, ObservationDeltas, act_line, encode
from judge.sdk import tapis_bot

from .conftest import play

REPO = Path(__file__).resolve().parents[2]
PROTOCOL_DOC = REPO / "docs" / "protocol.md"

GAME_PRESETS = [
    (name, preset) for name in games.game_names() for preset in games.game_class(name).presets
]


def digest(observation: Any) -> str:
    text = json.dumps(observation, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def doc_recipe() -> str:
    """The Python block after ``<!-- reassemble -->`` in docs/protocol.md."""
    text = PROTOCOL_DOC.read_text()
    found = re.search(r"<!-- reassemble -->\n```python\n(.*?)```", text, re.S)
    assert found, "docs/protocol.md lost its reassembly recipe"
    return found.group(1)


def test_deltas_send_new_entries_with_their_start_and_reset_at_each_deal() -> None:
    deltas = ObservationDeltas()
    first = {"hand": ["2C"], "tricks": [], "trick": {"cards": []}}
    assert deltas.wire(0, first) == {
        "hand": ["2C"],
        "tricks_start": 0,
        "tricks": [],
        "trick": {"cards": []},
    }
    assert deltas.wire(0, {"tricks": [1, 2], "history": ["a"]}) == {
        "tricks_start": 0,
        "tricks": [1, 2],
        "history_start": 0,
        "history": ["a"],
    }
    assert deltas.wire(0, {"tricks": [1, 2], "history": ["a", "b"]}) == {
        "tricks_start": 2,
        "tricks": [],
        "history_start": 1,
        "history": ["b"],
    }
    assert deltas.wire(1, {"tricks": [9]}) == {"tricks_start": 0, "tricks": [9]}
    # A list that shrank (no engine does that) is sent whole; a non-list is left alone.
    assert deltas.wire(1, {"tricks": []}) == {"tricks_start": 0, "tricks": []}
    assert deltas.wire(1, {"history": None}) == {"history": None}
    assert first == {"hand": ["2C"], "tricks": [], "trick": {"cards": []}}  # not changed


def test_the_sdk_and_the_judge_agree_on_the_delta_lists() -> None:
    assert tapis_bot.APPEND_ONLY == APPEND_ONLY
    namespace: dict[str, Any] = {}
    exec(doc_recipe(), namespace)  # the doc's own code
    assert tuple(namespace["DELTA_LISTS"]) == APPEND_ONLY


def playout(game: games.Game[Any], seed: int, deals: int) -> list[tuple[int, int, Any, Any]]:
    """(deal, seat, observation, legal actions) of every decision of playouts that mostly
    take the first legal action (long Dutch rounds) and else a random one."""
    rng = random.Random(seed)
    out = []
    for deal in range(deals):
        state = game.new_deal(deal, seed)
        while not state.is_terminal():
            seat = state.current_player()
            legal = state.legal_actions()
            out.append((deal, seat, state.observation(seat), legal))
            state.apply_action(legal[0] if rng.random() < 0.9 else rng.choice(legal))
    return out


@pytest.mark.parametrize(("name", "preset"), GAME_PRESETS)
def test_the_engines_delta_lists_only_grow_within_a_deal(name: str, preset: str) -> None:
    """What the judge relies on: in every observation of every seat, each list it sends as a
    delta starts with the whole list that seat saw before in the same deal."""
    game = games.load(name, preset)
    for seed in range(6):
        rng = random.Random(seed)
        state = game.new_deal(seed, seed)
        seen: dict[tuple[int, str], list[Any]] = {}
        while True:
            for seat in range(game.players):
                observation = state.observation(seat)
                for key in APPEND_ONLY:
                    if key in observation:
                        value = observation[key]
                        assert isinstance(value, list)
                        before = seen.get((seat, key), [])
                        assert value[: len(before)] == before, (name, preset, seed, key)
                        seen[seat, key] = value
            if state.is_terminal():
                break
            state.apply_action(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(
    ("name", "preset", "deals"),
    [("dutch", "classic", 3), ("hearts", "whisthub", 2), ("roi", "classic", 2)],
)
def test_the_sdk_gives_act_the_engines_whole_observation(
    name: str, preset: str, deals: int
) -> None:
    game = games.load(name, preset)
    decisions = [d for d in playout(game, 5, deals) if d[1] == 1]
    deltas = ObservationDeltas()
    lines = [encode({"type": "hello", "protocol": 1, "seat": 1})]
    for request, (deal, _, observation, legal) in enumerate(decisions, 1):
        lines.append(act_line(request, deal, deltas.wire(deal, observation), legal, 1.0))
    sent = sum(map(len, lines))

    class Recorder(tapis_bot.Bot):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def act(self, observation: dict[str, Any], legal_actions: list[Any]) -> Any:
            self.seen.append(digest(observation))
            observation.get("history", []).append("the bot's own note")  # its own copy
            return legal_actions[0]

    bot = Recorder()
    bot.run(io.BytesIO(b"".join(lines)), io.BytesIO())
    assert bot.seen == [digest(d[2]) for d in decisions]
    if name == "dutch":  # a long history: the deltas are much smaller than the whole
        whole = sum(len(act_line(1, d[0], d[2], d[3], 1.0)) for d in decisions)
        assert sent * 3 < whole


RECORDING_BOT = """\
import hashlib, json, sys, time
from tapis_bot import Bot, run


def digest(observation):
    text = json.dumps(observation, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Recording(Bot):
    asked = 0

    def act(self, observation, legal_actions):
        self.asked += 1
        self.log(digest(observation))
        if self.asked == 3:
            time.sleep(SLEEP)  # a timeout: this act was received all the same
        return legal_actions[0]


run(Recording())
"""

RAW_BOT = """\
import hashlib, json, sys

{recipe}

def digest(observation):
    text = json.dumps(observation, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


kept = {{}}
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        print(json.dumps({{"type": "ready"}}), flush=True)
    elif message["type"] == "act":
        if "{key}_start" not in message["observation"]:
            sys.exit("no {key}_start: the list came whole")
        observation = whole_observation(message["observation"], kept)
        print(digest(observation), file=sys.stderr, flush=True)
        answer = {{"id": message["id"], "action": message["legal_actions"][0]}}
        print(json.dumps(answer), flush=True)
    elif message["type"] == "bye":
        break
"""


def seat_observations(log: dict[str, Any], seat: int) -> list[str]:
    """Digests of the engine's observation at every decision of ``seat``, from the replay."""
    game = games.load(log["game"], log["preset"], **log["options"])
    out = []
    for entry in log["deals"]:
        state = game.deal_from_record(entry["index"], entry["deal"])
        for actor, action in entry["actions"]:
            if actor == seat:
                out.append(digest(state.observation(seat)))
            state.apply_action(action)
    return out


@pytest.mark.parametrize(("game", "deals"), [("dutch", 2), ("hearts", 2)])
def test_bots_at_a_table_rebuild_every_observation(game: str, deals: int, tmp_path: Path) -> None:
    """At a real table, an SDK bot that times out once and a bot using the doc's recipe see
    exactly the engine's observations, over several deals."""
    sdk_bot = tmp_path / "sdk_bot.py"
    sdk_bot.write_text(RECORDING_BOT.replace("SLEEP", "3.0"))
    key = "history" if game == "dutch" else "tricks"
    raw_bot = tmp_path / "raw_bot.py"
    raw_bot.write_text(RAW_BOT.format(recipe=doc_recipe(), key=key))
    # Wide margins (the machine may be loaded): the deliberate sleep is 1 s past the limit, and
    # the late answer comes 1 s before the end of the next decision; only it times out.
    limits = Limits(decision=2.0, bank=0.0)
    result = play([sdk_bot, raw_bot], game=game, deals=deals, limits=limits)
    assert [(f.seat, f.kind, f.decision) for f in result.faults] == [(0, FaultKind.TIMEOUT, 2)]
    for seat in (0, 1):
        logged = result.seats[seat].log.split()
        assert logged == seat_observations(result.log, seat), f"seat {seat}"
