"""Zygotes (judge/launchers/zygote.py, judge/sdk/_tapis_zygote.py): a bot forked for each table
from a sandbox kept per version must see what a bot started alone sees, and nothing of earlier
tables."""

from __future__ import annotations

import os
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge import BotSpec, TableResult, run_table
from judge.launchers import zygote
from judge.runner import SDK_DIR
from judge.sandbox import SandboxLimits

pytestmark = pytest.mark.usefixtures("bwrap_works")

# A bot whose name reports what it finds at its start: whether /tmp holds anything, how many
# other processes its sandbox has, its uid, and how it was started.
PROBE = """\
import os, sys
from tapis_bot import Bot, run

others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
state = "%d %d %d %d %d %s" % (  # a bot's name is short: tmp procs uid main argv path0
    len(os.listdir("/tmp")), len(others), os.getuid(), __name__ == "__main__",
    sys.argv == [__file__], sys.path[0],
)
with open("/tmp/left-behind", "w") as f:
    f.write("x")
os.mkdir("/tmp/dir")
os.chmod("/tmp/dir", 0)
if os.fork() == 0:  # a daemon that would outlive the table
    try:
        os.setsid()  # refused (docs/sandbox.md, "Host-wide channels")
    except OSError:
        pass
    os.execv("/usr/bin/sleep", ["sleep", "600"])


class Probe(Bot):
    name = state

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(Probe())
"""


@pytest.fixture(autouse=True)
def no_idle_zygotes() -> Iterator[None]:
    zygote.retire_all()
    yield
    zygote.retire_all()


def write_bot(tmp_path: Path, source: str, name: str = "bot.py") -> Path:
    tmp_path.chmod(0o755)
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def spec(bot: Path | str) -> BotSpec | str:
    """A package as one instance of its own (zygotes serve an instance), a built-in as is."""
    return BotSpec(path=bot, instance=f"instance {bot}") if isinstance(bot, Path) else bot


def table(bots: list[Path | str], *, seed: int = 1, zygotes: bool = True) -> TableResult:
    return run_table(
        game="hearts",
        preset="whisthub",
        bots=[spec(b) for b in bots],
        deals=2,
        seed=seed,
        sandbox="bwrap",
        sdk_dir=SDK_DIR,
        zygotes=zygotes,
    )


def test_a_forked_bot_plays_exactly_as_a_bot_started_alone(tmp_path: Path) -> None:
    first = write_bot(
        tmp_path,
        "from tapis_bot import Bot, run\n"
        "class F(Bot):\n    name = 'f'\n"
        "    def act(self, o, legal):\n        return legal[-1]\n"
        "run(F())\n",
    )
    alone = table([first, first, "builtin:lowest", "builtin:random"], zygotes=False)
    forked = table([first, first, "builtin:lowest", "builtin:random"])
    again = table([first, first, "builtin:lowest", "builtin:random"])
    assert forked.faults == alone.faults == ()
    assert forked.deal_points == alone.deal_points == again.deal_points
    assert [d["actions"] for d in forked.log["deals"]] == [d["actions"] for d in alone.log["deals"]]
    assert zygote.idle_count() == 2  # one per seat of the version, kept for the next table


def test_each_table_starts_clean_in_a_reused_zygote(tmp_path: Path) -> None:
    probe = write_bot(tmp_path, PROBE)
    names = []
    for seed in (1, 2, 3):
        result = table([probe, "builtin:lowest", "builtin:lowest", "builtin:lowest"], seed=seed)
        assert result.faults == ()
        names.append(result.seats[0].name)
    assert zygote.idle_count() == 1
    assert len(set(names)) == 1  # the same uid each time: the same zygote
    tmp, procs, uid, main, argv, path0 = names[0].split()
    assert tmp == "0"  # the file and the unreadable folder of the last table: gone
    assert procs == "0"  # the daemon of the last table: killed
    assert int(uid) >= 1_100_000 or os.geteuid() != 0
    assert main == argv == "1"  # run as __main__, sys.argv as python3 would set it
    assert path0 == "/bot"


def test_a_package_without_an_instance_is_started_alone(tmp_path: Path) -> None:
    probe = write_bot(tmp_path, PROBE)
    result = table([str(probe), "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    assert result.faults == ()
    assert zygote.idle_count() == 0


def test_one_version_at_two_seats_gets_two_zygotes(tmp_path: Path) -> None:
    probe = write_bot(tmp_path, PROBE)
    result = table([probe, probe, "builtin:lowest", "builtin:lowest"])
    uids = {seat.name.split()[2] for seat in result.seats[:2] if seat.name}
    assert len(uids) == 2  # never two seats in one sandbox
    assert zygote.idle_count() == 2


def test_a_tables_new_zygotes_start_side_by_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = write_bot(tmp_path, PROBE)
    events: list[str] = []
    launch, await_ready = zygote.Zygote.launch.__func__, zygote.Zygote.await_ready  # type: ignore[attr-defined]

    def recorded_launch(cls: type[zygote.Zygote], *args: object, **kwargs: object) -> object:
        events.append("launch")
        return launch(cls, *args, **kwargs)

    def recorded_await(self: zygote.Zygote, deadline: float) -> None:
        events.append("ready")
        await_ready(self, deadline)

    monkeypatch.setattr(zygote.Zygote, "launch", classmethod(recorded_launch))
    monkeypatch.setattr(zygote.Zygote, "await_ready", recorded_await)
    result = table([probe, probe, probe, "builtin:lowest"])
    assert result.faults == ()
    assert events == ["launch"] * 3 + ["ready"] * 3  # none waited for before all are started
    assert len({seat.name.split()[2] for seat in result.seats[:3] if seat.name}) == 3
    events.clear()
    table([probe, probe, probe, "builtin:lowest"], seed=2)
    assert events == []  # the next table: the three idle zygotes, each one seat's


def test_a_seat_whose_zygote_fails_is_started_alone_and_the_others_are_forked(
    tmp_path: Path,
) -> None:
    probe = write_bot(tmp_path, PROBE)
    loans = [
        zygote.Loan(probe, "one"),
        zygote.Loan(tmp_path / "missing.py", "two"),
        zygote.Loan(probe, "three"),
    ]
    bots = zygote.lend_all(loans, sdk_dir=SDK_DIR, limits=SandboxLimits(), startup=5.0)
    assert isinstance(bots[1], OSError)
    assert isinstance(bots[0], zygote.ForkedBot)
    assert isinstance(bots[2], zygote.ForkedBot)
    assert bots[0].zygote is not bots[2].zygote
    for bot in (bots[0], bots[2]):
        bot.kill()
    assert zygote.idle_count() == 2


# Reports whether heapq (which it imports) was imported before its code ran, whether json (which
# it does not import) is there, and where its random module comes from.
IMPORTS = """\
import sys
ahead = "heapq" in sys.modules
import heapq
import random
from tapis_bot import Bot, run


class Imports(Bot):
    name = "%d %d %s" % (ahead, "json" in sys.modules, random.__file__)

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(Imports())
"""


def test_the_zygote_imports_what_the_bots_entry_imports_and_no_more(tmp_path: Path) -> None:
    bot = write_bot(tmp_path, IMPORTS)
    forked = table([bot, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    alone = table([bot, "builtin:lowest", "builtin:lowest", "builtin:lowest"], zygotes=False)
    assert forked.faults == alone.faults == ()
    assert forked.seats[0].name == "1 0 /usr/lib/python3.11/random.py"  # heapq ahead, no json
    assert alone.seats[0].name == "0 0 /usr/lib/python3.11/random.py"


def test_a_module_of_the_bots_own_is_not_shadowed_by_the_zygotes(tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "tapis.json").write_text('{"entry": "main.py", "runtime": "python3"}')
    (package / "main.py").write_text(IMPORTS)
    (package / "random.py").write_text("def random():\n    return 0.5\n")
    for path in (tmp_path, package):
        path.chmod(0o755)
    forked = table([package, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    assert forked.faults == ()
    assert forked.seats[0].name == "1 0 /bot/random.py"  # its own, as when started alone


def test_a_crash_is_the_bots_and_the_zygote_serves_the_next_table(tmp_path: Path) -> None:
    crash = write_bot(tmp_path, "import sys\nsys.stderr.write('boom\\n')\nsys.exit(3)\n")
    alone = table([crash, "builtin:lowest", "builtin:lowest", "builtin:lowest"], zygotes=False)
    result = table([crash, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    assert [f.kind.value for f in result.faults] == ["crash"]
    assert result.faults[0].detail == alone.faults[0].detail == "the bot exited with status 3"
    assert result.seats[0].log == alone.seats[0].log == "boom\n"
    assert zygote.idle_count() == 1
    again = table([crash, "builtin:lowest", "builtin:lowest", "builtin:lowest"], seed=2)
    assert [f.kind.value for f in again.faults] == ["crash"]
    assert zygote.idle_count() == 1


def test_a_bot_that_hangs_after_bye_is_killed_and_the_zygote_kept(tmp_path: Path) -> None:
    hang = write_bot(
        tmp_path,
        "import time\nfrom tapis_bot import Bot, run\n"
        "class H(Bot):\n    name = 'h'\n    def act(self, o, legal):\n        return legal[0]\n"
        "run(H())\nwhile True:\n    time.sleep(1)\n",
    )
    result = table([hang, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    assert result.faults == ()
    assert zygote.idle_count() == 1


def test_a_dead_zygote_is_replaced(tmp_path: Path) -> None:
    probe = write_bot(tmp_path, PROBE)
    table([probe, "builtin:lowest", "builtin:lowest", "builtin:lowest"])
    (idle,) = zygote._idle
    pid = idle.process.sandbox_pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    idle.process.wait()  # dead, with the zygote proper that its pid namespace held
    result = table([probe, "builtin:lowest", "builtin:lowest", "builtin:lowest"], seed=2)
    assert result.faults == ()
    assert zygote.idle_count() == 1
    assert zygote._idle[0] is not idle


def test_a_changed_package_gets_a_new_zygote(tmp_path: Path) -> None:
    bot = write_bot(
        tmp_path,
        "from tapis_bot import Bot, run\nclass A(Bot):\n    name = 'a'\n"
        "    def act(self, o, legal):\n        return legal[0]\nrun(A())\n",
    )
    assert table([bot, "builtin:lowest", "builtin:lowest", "builtin:lowest"]).seats[0].name == "a"
    bot.write_text(bot.read_text().replace("'a'", "'bb'"))
    assert table([bot, "builtin:lowest", "builtin:lowest", "builtin:lowest"]).seats[0].name == "bb"


def test_the_zygote_refuses_to_run_outside_a_pid_namespace() -> None:
    # Its clean kills every process it may signal: outside a sandbox that would be the host's.
    done = subprocess.run(
        ["/usr/bin/python3", "-S", str(SDK_DIR / "_tapis_zygote.py"), "0"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode != 0
    assert "refusing to run outside a pid namespace" in done.stderr


def test_a_forked_bot_runs_on_the_tables_cpu(tmp_path: Path) -> None:
    bot = write_bot(
        tmp_path,
        "import os, sys\nprint(sorted(os.sched_getaffinity(0)), file=sys.stderr, flush=True)\n"
        "from tapis_bot import Bot, run\nclass F(Bot):\n    name = 'f'\n"
        "    def act(self, o, legal):\n        return legal[0]\nrun(F())\n",
    )
    allowed = sorted(os.sched_getaffinity(0))
    target = allowed[-1]
    # The zygote starts unpinned (it keeps every CPU), then serves a table pinned to one CPU.
    for cpu, shown in ((None, allowed), (target, [target])):
        result = run_table(
            game="hearts",
            preset="whisthub",
            bots=[spec(bot), "builtin:lowest", "builtin:lowest", "builtin:lowest"],
            deals=1,
            seed=1,
            sandbox="bwrap",
            sdk_dir=SDK_DIR,
            zygotes=True,
            cpu=cpu,
        )
        assert result.seats[0].log == f"{shown}\n"
    assert zygote.idle_count() == 1
