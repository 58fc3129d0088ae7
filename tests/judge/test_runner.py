"""run_table against scripted fake bots: the protocol exchange, every fault kind, the fallback
action, replacement, the clock and the log. Most run unsandboxed for speed; the ``bwrap`` ones
at the end run the same bots in the real sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import games
from judge import BotSpec, FaultKind, Limits, run_table
from judge.runner import TableResult

from .conftest import FIRST_LEGAL_BOT, GAME, ScriptedBot, play

HELLO = {"type": "hello", "protocol": 1, "game": GAME, "preset": "classic", "players": 4}
READY = ["send", '{"type": "ready", "name": "scripted"}']

# The clock tests must hold on a loaded machine (other test runs, benchmarks: a load of 5 to 7
# on 2 cores), where a process may wait a few hundred milliseconds for a CPU. So every margin is
# wide: a bot that means to be late is late by 0.75 s or more, a bot that means to be on time
# has 1.5 s or more for a trivial answer, and no bound is put on how late the judge may notice.
CLOCK = Limits(decision=1.5, bank=0.5)  # a timeout at 2 s, then 1.5 s per decision (bank empty)
LATE = 2.75  # seconds a bot sleeps to time out under CLOCK, and to answer 0.75 s into the next


def fallback_played(result: TableResult, deal: int, step: int) -> bool:
    """Whether action ``step`` of ``deal`` was the first legal action then."""
    log: dict[str, Any] = result.log
    game = games.load(log["game"], log["preset"], **log["options"])
    entry = log["deals"][deal]
    state = game.deal_from_record(entry["index"], entry["deal"])
    for _, action in entry["actions"][:step]:
        state.apply_action(action)
    return bool(entry["actions"][step][1] == state.legal_actions()[0])


def only_fault(result: TableResult, kind: FaultKind) -> Any:
    assert [f.kind for f in result.faults] == [kind], result.faults
    return result.faults[0]


# -------------------------------------------------------------------------- the exchange


def test_a_scripted_bot_sees_protocol_v1_messages_in_order(scripted_bot: ScriptedBot) -> None:
    script: list[list[Any]] = [["expect", {**HELLO, "seat": 0}], READY]
    for request in range(1, 14):  # the 13 decisions of the first deal, ids counting from 1
        script += [["expect", {"type": "act", "id": request, "deal": 0, "bank": 20.0}]]
        script += [["answer"]]
    script += [["expect", {"type": "deal_end", "deal": 0}]]
    script += [["expect", {"type": "act", "id": 14, "deal": 1}], ["answer"], ["play"]]
    result = play([scripted_bot(script)])
    assert result.faults == ()
    seat = result.seats[0]
    assert seat.name == "scripted"
    assert seat.log == ""
    assert seat.decisions == 130
    assert not seat.replaced
    assert 0 < seat.mean_time <= seat.p99_time
    assert seat.mean_time * seat.decisions <= result.elapsed  # seconds, within the table's time


def test_the_act_message_carries_the_observation_and_the_legal_actions(tmp_path: Path) -> None:
    bot = tmp_path / "echo.py"
    bot.write_text(
        "import json, sys\n"
        "from tapis_bot import Bot, run\n"
        "class Echo(Bot):\n"
        "    def on_hello(self, hello):\n"
        "        self.log('HELLO ' + json.dumps(hello))\n"
        "    def act(self, observation, legal_actions):\n"
        "        if self.deal == 0 and not hasattr(self, 'seen'):\n"
        "            self.seen = True\n"
        "            self.log('ACT ' + json.dumps([observation, legal_actions, self.bank]))\n"
        "        return legal_actions[-1]\n"
        "    def on_deal_end(self, notice):\n"
        "        self.log('DEAL_END ' + json.dumps(notice))\n"
        "    def on_game_end(self, notice):\n"
        "        self.log('GAME_END ' + json.dumps(notice))\n"
        "run(Echo())\n"
    )
    result = play([bot])
    lines = result.seats[0].log.splitlines()
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds == ["HELLO", "ACT"] + ["DEAL_END"] * 10 + ["GAME_END"]
    hello = json.loads(lines[0].split(" ", 1)[1])
    assert hello["limits"] == {"startup": 5.0, "decision": 1.0, "bank": 20.0}
    assert hello["options"] == games.load(GAME).options()
    observation, legal, bank = json.loads(lines[1].split(" ", 1)[1])
    assert observation["seat"] == 0
    assert len(observation["hand"]) == 13
    assert legal
    assert set(legal) <= set(observation["hand"])
    assert bank == 20.0
    deal_end = json.loads(lines[2].split(" ", 1)[1])
    assert deal_end["deal"] == 0
    assert deal_end["points"] == list(result.deal_points[0])
    assert deal_end["totals"] == list(result.deal_points[0])
    assert len(deal_end["summary"]["tricks"]) == 13
    game_end = json.loads(lines[-1].split(" ", 1)[1])
    assert game_end == {"type": "game_end", "scores": result.scores, "places": result.places}


def test_built_in_bots_need_no_process_and_the_log_verifies() -> None:
    result = play(["builtin:random", "builtin:lowest", "builtin:random", "builtin:lowest"])
    assert len(result.deal_points) == 10
    assert [s.decisions for s in result.seats] == [130] * 4
    assert result.log["judge"]["seats"][0]["bot"] == "builtin:random"  # type: ignore[index]
    assert games.verify(result.log).ok


def test_fixed_deals_and_progress() -> None:
    seen: list[tuple[int, int | None]] = []
    result = run_table(
        game=GAME,
        bots=["builtin:lowest"] * 4,
        deals=20,
        seed=3,
        sandbox="none",
        on_progress=lambda done, total: seen.append((done, total)),
    )
    assert len(result.deal_points) == 20
    assert seen == [(i, 20) for i in range(1, 21)]


def test_bad_arguments_raise_before_any_bot_starts(first_bot: Path) -> None:
    with pytest.raises(ValueError, match="4 players"):
        run_table(game=GAME, bots=[first_bot.as_posix()] * 3, seed=1, sandbox="none")
    with pytest.raises(ValueError, match="no built-in bot 'genius'"):
        run_table(game=GAME, bots=["builtin:genius"] * 4, seed=1, sandbox="none")
    with pytest.raises(games.OptionError):
        run_table(game="no-such-game", bots=[], seed=1, sandbox="none")
    with pytest.raises(ValueError, match=r"Limits\.decision"):
        Limits(decision=0)


# -------------------------------------------------------------------------- faults


def test_a_timeout_plays_the_fallback_drains_the_bank_and_drops_the_late_answer(
    scripted_bot: ScriptedBot,
) -> None:
    # Times out at 2 s (1.5 + the 0.5 bank), answers at 2.75 s: while the judge waits for the
    # next decision (1.5 s from about 2 s, the bank being empty), which the late answer must not
    # spoil.
    script = [READY, ["expect_act"], ["sleep", LATE], ["answer"], ["play"]]
    result = play([scripted_bot(script)], limits=CLOCK)
    fault = only_fault(result, FaultKind.TIMEOUT)
    assert (fault.seat, fault.deal, fault.decision) == (0, 0, 0)
    assert fallback_played(result, 0, fault.step)
    seat = result.seats[0]
    assert seat.bank_left == 0.0
    assert not seat.replaced
    waited = result.log["deals"][0]["times"][fault.step]  # type: ignore[index]
    assert waited >= CLOCK.decision + CLOCK.bank - 1e-6  # never a timeout before the limit


def test_time_over_the_decision_limit_is_drawn_from_the_bank(scripted_bot: ScriptedBot) -> None:
    script = [READY, ["expect_act"], ["sleep", 1.5], ["answer"], ["play"]]
    result = play([scripted_bot(script)], limits=Limits(decision=1.0, bank=5.0))
    assert result.faults == ()
    # 5 - (1.5 - 1): at most, since the answer took 1.5 s or more; at least with a second
    # of scheduling delays over the whole table.
    assert 3.5 < result.seats[0].bank_left <= 4.5


def test_with_the_bank_empty_the_decision_limit_is_hard(scripted_bot: ScriptedBot) -> None:
    # Late by 0.75 s, and so 0.75 s before the end of the next decision, asked at once.
    script = [READY, ["expect_act"], ["sleep", CLOCK.decision + 0.75], ["answer"], ["play"]]
    result = play([scripted_bot(script)], limits=Limits(decision=CLOCK.decision, bank=0.0))
    fault = only_fault(result, FaultKind.TIMEOUT)
    assert fault.decision == 0
    waited = result.log["deals"][0]["times"][fault.step]  # type: ignore[index]
    assert waited >= CLOCK.decision - 1e-6


def test_a_startup_timeout_replaces_the_seat(scripted_bot: ScriptedBot) -> None:
    result = play([scripted_bot([["sleep", 2], READY, ["play"]])], limits=Limits(startup=0.3))
    fault = only_fault(result, FaultKind.TIMEOUT)
    assert (fault.deal, fault.decision) == (None, None)
    seat = result.seats[0]
    assert seat.replaced
    assert seat.replaced_by == "builtin:" + _replacement()
    assert seat.replaced_at == {"deal": None, "decision": None}
    assert seat.decisions == 0


def test_a_crash_replaces_the_seat_at_once(scripted_bot: ScriptedBot) -> None:
    script = [READY, ["expect_act"], ["answer"], ["expect_act"], ["log", "bye!\n"], ["exit", 7]]
    result = play([scripted_bot(script)])
    fault = only_fault(result, FaultKind.CRASH)
    assert (fault.deal, fault.decision) == (0, 1)
    assert "exited with status 7" in fault.detail
    assert fallback_played(result, 0, fault.step)
    seat = result.seats[0]
    assert seat.replaced
    assert seat.replaced_at == {"deal": 0, "decision": 1}
    assert seat.decisions == 2
    assert seat.log == "bye!\n"
    assert result.replaced == [0]


def test_exiting_at_once_is_a_startup_crash(scripted_bot: ScriptedBot) -> None:
    result = play([scripted_bot([["exit", 0]])])
    fault = only_fault(result, FaultKind.CRASH)
    assert fault.deal is None
    assert result.seats[0].replaced


def test_closing_stdout_is_a_crash(scripted_bot: ScriptedBot) -> None:
    result = play([scripted_bot([READY, ["close_stdout"], ["hang"]])])
    assert only_fault(result, FaultKind.CRASH).deal == 0
    assert "closed its stdout" in result.faults[0].detail


def test_closing_stdin_is_a_crash(scripted_bot: ScriptedBot) -> None:
    result = play([scripted_bot([["close_stdin"], READY, ["hang"]])], limits=CLOCK)
    fault = only_fault(result, FaultKind.CRASH)
    assert fault.decision == 0
    assert "closed its stdin" in fault.detail


@pytest.mark.parametrize(
    ("line", "kind", "detail"),
    [
        ("this is not json", FaultKind.MALFORMED, "not JSON"),
        ("[1, 2, 3]", FaultKind.MALFORMED, "JSON object"),
        ('{"id": "one", "action": {first}}', FaultKind.MALFORMED, "integer"),
        ('{"id": {id}}', FaultKind.MALFORMED, '"action"'),
        ('{"type": "ready", "id": {id}, "action": {first}}', FaultKind.MALFORMED, "type"),
        ('{"id": 999, "action": {first}}', FaultKind.WRONG_ID, "999"),
        ('{"id": {id}, "action": "ZZ"}', FaultKind.ILLEGAL, "ZZ"),
        ('{"id": {id}, "action": {"deep": [[[1]]]}}', FaultKind.ILLEGAL, "deep"),
        ('{"id": {id}, "action": null}', FaultKind.ILLEGAL, "None"),
        ("[" * 50000 + "]" * 50000, FaultKind.LINE_TOO_LONG, "65536"),
        ("[" * 30000 + "]" * 30000, FaultKind.MALFORMED, "not JSON"),
        ('{"id": {id}, "action": 1' + "0" * 5000 + "}", FaultKind.MALFORMED, "not JSON"),
    ],
)
def test_each_bad_answer_is_a_typed_fault_with_the_fallback_played(
    scripted_bot: ScriptedBot, line: str, kind: FaultKind, detail: str
) -> None:
    script = [READY, ["expect_act"], ["answer"], ["expect_act"], ["send", line], ["play"]]
    result = play([scripted_bot(script)])
    fault = only_fault(result, kind)
    assert (fault.seat, fault.deal, fault.decision) == (0, 0, 1)
    assert detail in fault.detail
    assert len(fault.detail) <= 300
    assert fallback_played(result, 0, fault.step)
    assert not result.seats[0].replaced
    assert result.log["deals"][0]["faults"] == [fault.as_json()]  # type: ignore[index]


def test_invalid_utf8_is_a_fault(scripted_bot: ScriptedBot) -> None:
    script = [READY, ["expect_act"], ["send_raw", "7b226964223a20ff7d0a"], ["play"]]
    fault = only_fault(play([scripted_bot(script)]), FaultKind.BAD_UTF8)
    assert fault.decision == 0


def test_a_huge_line_is_cut_off_without_waiting_for_its_end(scripted_bot: ScriptedBot) -> None:
    # 20 MB with no newline, then a proper newline and normal play.
    script = [READY, ["expect_act"], ["flood", 20_000_000], ["send", ""], ["play"]]
    result = play([scripted_bot(script)])
    fault = only_fault(result, FaultKind.LINE_TOO_LONG)
    assert fault.decision == 0
    assert not result.seats[0].replaced


def test_answering_before_being_asked_is_a_fault(scripted_bot: ScriptedBot) -> None:
    script = [
        READY,
        ["expect_act"],
        # The answer and a second one nobody asked for, in one write: both are surely there
        # before the next request, whatever the load.
        ["send", '{"id": {id}, "action": {first}}\n{"id": {id}, "action": {first}}'],
        ["play"],
    ]
    result = play([scripted_bot(script)])
    fault = only_fault(result, FaultKind.UNSOLICITED)
    assert fault.decision == 1
    assert fallback_played(result, 0, fault.step)


def test_a_message_before_the_first_request_is_unsolicited(scripted_bot: ScriptedBot) -> None:
    # In the same write as ready, so that it is surely there before the first request.
    script = [["send", '{"type": "ready"}\n{"id": 1, "action": "2C"}'], ["play"]]
    result = play([scripted_bot(script)])
    assert only_fault(result, FaultKind.UNSOLICITED).decision == 0


def test_a_bad_ready_replaces_the_seat(scripted_bot: ScriptedBot) -> None:
    result = play([scripted_bot([["send", '{"type": "hi"}'], ["play"]])])
    assert only_fault(result, FaultKind.MALFORMED).deal is None
    assert result.seats[0].replaced


def test_three_faults_hand_the_seat_to_a_built_in_bot(scripted_bot: ScriptedBot) -> None:
    script = [READY]
    for _ in range(3):
        script += [["expect_act"], ["send", "garbage"]]
    script += [["play"]]
    result = play([scripted_bot(script)])
    assert [f.decision for f in result.faults] == [0, 1, 2]
    seat = result.seats[0]
    assert seat.replaced
    assert seat.replaced_at == {"deal": 0, "decision": 2}
    assert seat.decisions == 3
    assert result.log["judge"]["seats"][0]["replaced_by"] == seat.replaced_by  # type: ignore[index]


def test_the_fault_limit_is_configurable(scripted_bot: ScriptedBot) -> None:
    script = [READY, ["expect_act"], ["send", "garbage"], ["play"]]
    result = play([scripted_bot(script)], limits=Limits(max_faults=1))
    assert result.seats[0].replaced
    assert len(result.faults) == 1


def test_a_bot_that_only_sends_garbage_still_gets_a_finished_table(
    scripted_bot: ScriptedBot,
) -> None:
    script = [["send", "x" * 100] for _ in range(50)] + [["hang"]]
    bots = [scripted_bot(script) for _ in range(4)]
    result = play(bots)
    assert len(result.deal_points) == 10
    assert result.replaced == [0, 1, 2, 3]


def test_a_refused_package_is_a_startup_crash(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tapis.json").write_text('{"entry": "missing.py"}')
    result = play([broken])
    fault = only_fault(result, FaultKind.CRASH)
    assert "missing.py" in fault.detail
    assert result.seats[0].replaced


def test_stderr_is_kept_and_capped_with_a_note(scripted_bot: ScriptedBot) -> None:
    script = [["log", "start\n" + "y" * 100_000], READY, ["play"]]
    result = play([scripted_bot(script)], limits=Limits(log_bytes=1000))
    log = result.seats[0].log
    assert log.startswith("start\nyyy")
    assert "log cut at 1000 bytes" in log
    assert len(log) < 1200


def test_a_bot_that_ignores_bye_is_killed(scripted_bot: ScriptedBot) -> None:
    # It plays the whole table, then neither exits at bye nor at the end of its input.
    script = [["log_pid"], READY, ["play_on"]]
    result = play([scripted_bot(script)], limits=Limits(closing=0.1))
    assert result.faults == ()
    assert not result.seats[0].replaced
    pid = int(result.seats[0].log)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped, after closing (0.1 s), not after its hour
    assert result.elapsed < 60


def _replacement() -> str:
    from judge.bots import replacement_name

    return replacement_name(GAME)


# -------------------------------------------------------------------------- in the sandbox


needs_bwrap = pytest.mark.usefixtures("bwrap_works")


@needs_bwrap
def test_an_sdk_bot_plays_a_whole_table_in_the_sandbox(first_bot: Path) -> None:
    result = play([first_bot, first_bot, "builtin:random", first_bot], sandbox="bwrap")
    assert result.faults == ()
    assert [s.name for s in result.seats] == ["first", "first", "random", "first"]
    assert all(s.decisions == 130 for s in result.seats)


@needs_bwrap
def test_faults_in_the_sandbox(scripted_bot: ScriptedBot) -> None:
    timeout = scripted_bot([READY, ["expect_act"], ["sleep", LATE], ["answer"], ["play"]])
    illegal = scripted_bot(
        [READY, ["expect_act"], ["send", '{"id": {id}, "action": "ZZ"}'], ["play"]]
    )
    crash = scripted_bot([READY, ["expect_act"], ["exit", 3]])
    result = play([timeout, illegal, crash], sandbox="bwrap", limits=CLOCK)
    kinds = [(f.seat, f.kind) for f in result.faults]
    assert sorted(kinds) == [(0, FaultKind.TIMEOUT), (1, FaultKind.ILLEGAL), (2, FaultKind.CRASH)]
    assert result.replaced == [2]
    assert result.seats[3].faults == ()


@needs_bwrap
def test_a_spec_with_a_label(first_bot: Path) -> None:
    spec = BotSpec(path=first_bot, label="mine")
    result = play([spec], sandbox="bwrap")
    assert result.seats[0].bot == "mine"


def affinity_bot(tmp_path: Path) -> Path:
    """A first-legal bot that writes the CPUs it may run on to its log (stderr)."""
    bot = tmp_path / "affinity.py"
    bot.write_text(
        "import os, sys\n"
        "print(sorted(os.sched_getaffinity(0)), file=sys.stderr, flush=True)\n"
        + "\n".join(FIRST_LEGAL_BOT.splitlines())
        + "\n"
    )
    return bot


def test_a_table_can_be_pinned_to_one_cpu(tmp_path: Path) -> None:
    import os

    from judge.cpus import current_cpu

    bot = affinity_bot(tmp_path)
    before = os.sched_getaffinity(0)
    target = max(before)
    result = play([bot], cpu=target)
    assert result.faults == ()
    assert result.seats[0].log == f"[{target}]\n"
    assert os.sched_getaffinity(0) == before
    assert current_cpu() in before


def test_a_free_cpu_is_one_no_other_table_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl
    import os

    from judge import cpus

    monkeypatch.setattr(cpus, "CPU_LOCK_DIR", tmp_path / "cpus")
    (tmp_path / "cpus").mkdir()
    bot = affinity_bot(tmp_path)
    allowed = sorted(os.sched_getaffinity(0))
    held = []
    try:
        for cpu in allowed[:-1]:  # other tables hold every CPU but the last
            fd = os.open(tmp_path / "cpus" / f"{cpu}.lock", os.O_RDWR | os.O_CREAT)
            fcntl.flock(fd, fcntl.LOCK_EX)
            held.append(fd)
        assert play([bot], cpu="free").seats[0].log == f"[{allowed[-1]}]\n"
        fd = os.open(tmp_path / "cpus" / f"{allowed[-1]}.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
        # Every CPU has its table: this one runs unpinned.
        assert play([bot], cpu="free").seats[0].log == f"{allowed}\n"
    finally:
        for fd in held:
            os.close(fd)
