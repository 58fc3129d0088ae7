"""A bot cannot starve its table-mates, widen its CPUs, or fail for a busy host (issue 23).

Real sandboxes at real tables, with the host's cgroups (docs/sandbox.md, "CPU"): a hog of 12
processes (Python) or 13 threads (C) at a table pinned to one CPU no longer makes its opponents
time out (they were all replaced before: the hog spun while they decided); every bot is frozen
while another decides; bots that need CPU to start are not refused beside spinning host
processes (the wall clock refused them all); a bot's ``sched_setaffinity`` to every CPU keeps it
on its table's CPU, also for a bot forked by a zygote whose tables move between CPUs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge import BotSpec, Limits, TableResult, clock, run_table
from judge.launchers import zygote
from judge.sandbox import SandboxLimits
from judge.sandbox.cgroups import _own_prefix, cgroup_parents

GAME, PRESET, SEED = "hearts", "whisthub", 23
RESOURCES = SandboxLimits(cpu_seconds=60, memory_bytes=256 * 2**20)

# Needs 20 ms of CPU per decision: on one CPU beside 12 spinning processes, over 0.25 s.
VICTIM = """\
import time
from tapis_bot import Bot, run


class Victim(Bot):
    name = "victim"

    def act(self, observation, legal_actions):
        end = time.process_time() + 0.02
        while time.process_time() < end:
            pass
        return legal_actions[0]


run(Victim())
"""

PYTHON_HOG = """\
import os
from tapis_bot import Bot, run


class Hog(Bot):
    name = "hog"

    def on_hello(self, hello):
        for _ in range(12):
            if os.fork() == 0:
                while True:
                    pass


    def act(self, observation, legal_actions):
        return legal_actions[0]


run(Hog())
"""

# A C bot: "hog" starts 13 spinning threads at hello; "widen" asks for every CPU at hello and
# says on stderr which it has then. Plays the first legal action.
C_BOT = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *spin(void *arg) { for (;;) {} return arg; }

static void widen(void) {
    cpu_set_t all, now;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &all);
    int rc = sched_setaffinity(0, sizeof all, &all);
    sched_getaffinity(0, sizeof now, &now);
    fprintf(stderr, "widen rc %d cpus", rc);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &now)) fprintf(stderr, " %d", cpu);
    fprintf(stderr, "\n");
    fflush(stderr);
}

int main(void) {
    static char line[1 << 20];
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"hello\"")) {
            if (strcmp(MODE, "hog") == 0) {
                pthread_t thread;
                for (int i = 0; i < 13; i++) pthread_create(&thread, NULL, spin, NULL);
            } else {
                widen();
            }
            printf("{\"type\":\"ready\",\"name\":\"%s\"}\n", MODE);
        } else if (strstr(line, "\"act\"")) {
            char *legal = strchr(strstr(line, "\"legal_actions\""), '[') + 1, *end;
            while (*legal == ' ') legal++;
            end = *legal == '[' ? strchr(legal, ']') + 1 : strpbrk(legal, ",]");
            printf("{\"id\":%d,\"action\":%.*s}\n", atoi(strstr(line, "\"id\":") + 5),
                   (int)(end - legal), legal);
        }
    }
    return 0;
}
"""

PYTHON_WIDEN = """\
import os, sys
from tapis_bot import Bot, run


class Widen(Bot):
    name = "widen"

    def on_hello(self, hello):
        try:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))
            rc = 0
        except OSError:
            rc = -1
        cpus = " ".join(map(str, sorted(os.sched_getaffinity(0))))
        print(f"widen rc {rc} cpus {cpus}", file=sys.stderr, flush=True)

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(Widen())
"""

# Needs 0.2 s of CPU before it says ready.
SLOW_START = """\
import time
end = time.process_time() + 0.2
while time.process_time() < end:
    pass
from tapis_bot import Bot, run


class Slow(Bot):
    name = "slow"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(Slow())
"""


@pytest.fixture(scope="module", autouse=True)
def _with_cgroups(bwrap_works: None) -> None:
    """Every test here needs a working sandbox and the host's CPU cgroups."""
    parents = cgroup_parents()
    if parents is None or parents.freezer is None or parents.cpuacct is None:
        pytest.fail(f"no freezer and cpuacct cgroups on this host: {parents}")


@pytest.fixture
def arena() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="tapis-cpu-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def python_bot(folder: Path, source: str) -> Path:
    folder.mkdir()
    (folder / "main.py").write_text(source)
    (folder / "tapis.json").write_text(json.dumps({"entry": "main.py", "runtime": "python3"}))
    return folder


def c_bot(folder: Path, mode: str) -> Path:
    folder.mkdir()
    (folder / "main.c").write_text(f'#define MODE "{mode}"\n' + C_BOT)
    (folder / "tapis.json").write_text(json.dumps({"entry": "main.c", "runtime": "c"}))
    return folder


def play(
    arena: Path, bots: list[BotSpec], limits: Limits, *, cpu: int = 0, **options: object
) -> TableResult:
    workdir = arena / f"table-{uuid.uuid4().hex[:8]}"
    workdir.mkdir(mode=0o711)
    workdir.chmod(0o711)
    return run_table(
        game=GAME,
        preset=PRESET,
        bots=bots,
        deals=1,
        seed=SEED,
        limits=limits,
        workdir=workdir,
        cpu=cpu,
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("hog", ["python", "c"])
def test_a_hog_does_not_make_its_table_mates_time_out(hog: str, arena: Path) -> None:
    """Before: every victim timed out three times and was replaced (the hog spun on their
    CPU while they decided); now the hog is frozen while they decide."""
    hog_bot = c_bot(arena / "hog", "hog") if hog == "c" else python_bot(arena / "hog", PYTHON_HOG)
    victims = [python_bot(arena / f"victim{i}", VICTIM) for i in range(3)]
    limits = Limits(decision=0.15, bank=0.0, startup=10.0, resources=RESOURCES)
    result = play(arena, [BotSpec(path=hog_bot), *(BotSpec(path=v) for v in victims)], limits)
    for seat in result.seats[1:]:
        assert seat.faults == (), seat.faults
        assert not seat.replaced
        assert seat.decisions > 0


@pytest.mark.parametrize("zygotes", [False, True])
def test_every_bot_is_frozen_while_another_plays(zygotes: bool, arena: Path) -> None:
    """After each deal (and so between decisions) the four bots' cgroups are frozen."""
    bots = [
        BotSpec(path=python_bot(arena / f"bot{i}", VICTIM), instance=f"cpu-test-{uuid.uuid4()}")
        for i in range(4)
    ]
    states: list[list[str]] = []

    def frozen_now(done: int, total: int | None) -> None:
        parents = cgroup_parents()
        assert parents is not None
        assert parents.freezer is not None
        states.append(
            sorted(
                (folder / "freezer.state").read_text().strip()
                for folder in parents.freezer.glob(f"{_own_prefix()}*")
            )
        )

    limits = Limits(decision=1.0, bank=1.0, resources=RESOURCES)
    try:
        result = play(arena, bots, limits, zygotes=zygotes, on_progress=frozen_now)
    finally:
        zygote.retire_all()
    assert not result.faults
    assert states
    for state in states:  # idle zygotes of earlier tests, if any, are thawed
        assert len([s for s in state if s != "THAWED"]) == 4, state


def test_bots_that_need_cpu_to_start_are_not_refused_on_a_busy_host(
    arena: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four bots that need 0.2 s of CPU to start, a start-up limit of 1 s, and four host
    processes spinning on the table's CPU: before, all four were refused (no ready within the
    start-up limit: they had the CPU a fifth of the time); now they are charged what they ran.

    The wall-clock cap (``clock.WALL_CAP`` times the limit, tested in test_clock.py) is raised
    here: this test is about the charge, and the load of a test run beside it (other test
    processes on the same CPU) could otherwise reach the cap and refuse them (a CI run did)."""
    monkeypatch.setattr(clock, "WALL_CAP", 20.0)
    bots = [BotSpec(path=python_bot(arena / f"slow{i}", SLOW_START)) for i in range(4)]
    cpu = min(os.sched_getaffinity(0))
    spin = f"import os\nos.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"
    spinners = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(4)]
    try:
        limits = Limits(startup=1.0, decision=1.0, bank=5.0, resources=RESOURCES)
        result = play(arena, bots, limits, cpu=cpu)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    assert result.faults == ()
    assert [seat.name for seat in result.seats] == ["slow"] * 4


def widened_to(result: TableResult) -> list[int]:
    line = next(line for line in result.seats[0].log.splitlines() if line.startswith("widen"))
    return [int(cpu) for cpu in line.split("cpus", 1)[1].split()]


@pytest.fixture
def two_cpus() -> list[int]:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: no other CPU to widen to")
    return cpus[:2]


@pytest.mark.parametrize("language", ["c", "python"])
def test_a_bot_cannot_widen_its_cpus(language: str, arena: Path, two_cpus: list[int]) -> None:
    """A bot of a table pinned to one CPU asks for every CPU: it keeps its table's."""
    bot = c_bot(arena / "widen", "widen") if language == "c" else None
    bot = bot or python_bot(arena / "widen", PYTHON_WIDEN)
    others = [python_bot(arena / f"other{i}", VICTIM) for i in range(3)]
    limits = Limits(resources=RESOURCES)
    specs = [BotSpec(path=bot), *(BotSpec(path=o) for o in others)]
    result = play(arena, specs, limits, cpu=two_cpus[1])
    assert widened_to(result) == [two_cpus[1]]


def test_a_forked_bot_cannot_widen_its_cpus_and_its_zygote_follows_the_tables(
    arena: Path, two_cpus: list[int]
) -> None:
    """The same zygote serves a table on one CPU, then a table on another: each time its bot
    asks for every CPU and keeps its table's."""
    bot = python_bot(arena / "widen", PYTHON_WIDEN)
    specs = [BotSpec(path=bot, instance=f"cpu-test-{uuid.uuid4()}")]
    specs += [BotSpec(path=python_bot(arena / f"other{i}", VICTIM)) for i in range(3)]
    limits = Limits(resources=RESOURCES)
    try:
        for cpu in (two_cpus[0], two_cpus[1], two_cpus[0]):
            result = play(arena, specs, limits, cpu=cpu, zygotes=True)
            assert widened_to(result) == [cpu]
    finally:
        zygote.retire_all()
