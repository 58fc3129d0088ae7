"""A cgroup of its own per sandbox (judge/sandbox/cgroups.py), on the real kernel.

The memory limit of a bot is exact in a cgroup: balloons in C, JavaScript (off-heap Buffers)
and Go (past GOMEMLIMIT) that ``RLIMIT_AS`` would let through are killed by the cgroup at the
memory limit, the seat gets a crash fault that says so, and the other seats play on. The host
must offer a usable cgroup (v2, or v1's memory hierarchy as on the development machine and CI):
on a host without one these tests fail, unless ``TAPIS_TEST_NO_CGROUP=1`` says it has none.
The parsers and the detection are unit-tested on both layouts' texts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import games
from judge import BotSpec, FaultKind, Limits, TableResult, run_table
from judge.launchers import runtimes, zygote
from judge.runner import SDK_DIR
from judge.sandbox import (
    SandboxError,
    SandboxLimits,
    cgroups,
    parse_cgroup_v1,
    parse_cgroup_v2,
    sandbox_status,
    spawn_bot,
)
from judge.sandbox.cgroups import (
    CGROUP_ENV,
    V1,
    V2,
    CgroupParents,
    _Cgroup,
    cgroup_parents,
    detect_cgroup_parents,
)

from .conftest import FIRST_LEGAL_BOT, sandbox_unavailable

ATTACK_JS = Path(__file__).resolve().parent / "attacks" / "native" / "attack.js"
NO_CGROUP_ENV = "TAPIS_TEST_NO_CGROUP"  # "1": this host has no usable cgroup (tests skipped)
MIB = 2**20
MEMORY = 64 * MIB  # small, to keep the balloons fast

# ----------------------------------------------------------------------------- the layouts

# The development machine's and CI's: cgroup v1 hierarchies and an empty cgroup2.
HYBRID_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_CGROUP = """\
9:name=systemd:/
8:pids:/
4:memory:/process_api/685d4e
2:cpu,cpuacct:/
0::/
"""
# A systemd host with cgroup v2 only.
UNIFIED_MOUNTINFO = (
    "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
)
UNIFIED_CGROUP = "0::/system.slice/tapis-worker.service\n"


def test_cgroup_v1_and_v2_locations_are_parsed_on_both_layouts() -> None:
    memory = Path("/sys/fs/cgroup/memory/process_api/685d4e")
    assert parse_cgroup_v1(HYBRID_MOUNTINFO, HYBRID_CGROUP, "memory") == memory
    assert parse_cgroup_v1(HYBRID_MOUNTINFO, HYBRID_CGROUP, "pids") == Path("/sys/fs/cgroup/pids")
    cpu = parse_cgroup_v1(HYBRID_MOUNTINFO, HYBRID_CGROUP, "cpuacct")
    assert cpu == Path("/sys/fs/cgroup/cpu,cpuacct")  # one hierarchy of two controllers
    assert parse_cgroup_v2(HYBRID_MOUNTINFO, HYBRID_CGROUP) == Path("/sys/fs/cgroup/unified")
    assert parse_cgroup_v1(HYBRID_MOUNTINFO, HYBRID_CGROUP, "hugetlb") is None

    worker = Path("/sys/fs/cgroup/system.slice/tapis-worker.service")
    assert parse_cgroup_v2(UNIFIED_MOUNTINFO, UNIFIED_CGROUP) == worker
    assert parse_cgroup_v1(UNIFIED_MOUNTINFO, UNIFIED_CGROUP, "memory") is None

    # A container's mount shows only its own subtree; a sibling's prefix is not it.
    container = "50 40 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"
    own = "4:memory:/docker/abc/worker\n"
    assert parse_cgroup_v1(container, own, "memory") == Path("/sys/fs/cgroup/memory/worker")
    assert parse_cgroup_v1(container, "4:memory:/docker/abcdef\n", "memory") is None


def stand_in(root: Path, mountinfo: str) -> str:
    """``mountinfo`` with its mount points moved under ``root``."""
    return mountinfo.replace(" /sys/fs/cgroup", f" {root}")


def test_detection_prefers_a_usable_v2_then_v1_then_none(tmp_path: Path) -> None:
    """On stand-in folders (the texts above, mounted under tmp_path): the hybrid layout's v2
    has no memory controller, so its v1 memory and pids hierarchies are used, with its cpu and
    cpuacct hierarchy; a v2 that delegates both is preferred, with the CPU's (the freezer and
    cpu.stat are in every cgroup v2); with neither usable, the rlimits alone apply."""
    unified, memory, pids = tmp_path / "unified", tmp_path / "memory", tmp_path / "pids"
    cpu = tmp_path / "cpu,cpuacct"
    (memory / "process_api" / "685d4e").mkdir(parents=True)
    pids.mkdir()
    cpu.mkdir()
    (cpu / "cgroup.procs").write_text("")
    unified.mkdir()
    (unified / "cgroup.subtree_control").write_text("hugetlb\n")
    (memory / "process_api" / "685d4e" / "memory.limit_in_bytes").write_text("0\n")
    (pids / "cgroup.procs").write_text("")
    hybrid = stand_in(tmp_path, HYBRID_MOUNTINFO)

    found = detect_cgroup_parents(hybrid, HYBRID_CGROUP)
    own = memory / "process_api" / "685d4e"
    assert found == CgroupParents(V1, own, pids, cpuacct=cpu, cpu=cpu)

    (unified / "cgroup.subtree_control").write_text("memory pids\n")
    found = detect_cgroup_parents(hybrid, HYBRID_CGROUP)
    assert found == CgroupParents(V2, unified, unified, unified, unified)
    (unified / "cgroup.subtree_control").write_text("cpuset cpu memory pids\n")
    found = detect_cgroup_parents(hybrid, HYBRID_CGROUP)
    assert found == CgroupParents(V2, *[unified] * 6)

    (unified / "cgroup.subtree_control").write_text("hugetlb\n")
    (pids / "cgroup.procs").unlink()  # not a pids cgroup: RLIMIT_NPROC only
    (cpu / "cgroup.procs").unlink()  # nor a CPU one: the wall clock (judge/clock.py)
    found = detect_cgroup_parents(hybrid, HYBRID_CGROUP)
    assert found == CgroupParents(V1, memory / "process_api" / "685d4e", None)

    (memory / "process_api" / "685d4e" / "memory.limit_in_bytes").unlink()
    assert detect_cgroup_parents(hybrid, HYBRID_CGROUP) is None
    assert detect_cgroup_parents(stand_in(tmp_path, UNIFIED_MOUNTINFO), UNIFIED_CGROUP) is None


# ----------------------------------------------------------------------------- on this host


@pytest.fixture
def cgroup(bwrap_works: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[CgroupParents]:
    """The host's cgroups, found as a worker finds them; after the test, no cgroup of this
    process is left behind."""
    monkeypatch.delenv(CGROUP_ENV, raising=False)
    parents = cgroup_parents()
    if parents is None:
        if os.environ.get(NO_CGROUP_ENV) == "1":
            sandbox_unavailable(f"{NO_CGROUP_ENV}=1: this host has no usable cgroup")
        pytest.fail(
            "no usable cgroup v2 or v1 memory hierarchy on this host (docs/operations.md); "
            f"set {NO_CGROUP_ENV}=1 if the host truly has none"
        )
    before = leftovers(parents)
    yield parents
    assert leftovers(parents) <= before


def leftovers(parents: CgroupParents) -> set[Path]:
    """The cgroups this process has made under ``parents`` that are still there."""
    found: set[Path] = set()
    for parent in parents.all():
        found |= set(parent.glob(f"{cgroups._own_prefix()}*"))
    return found


def own_cgroups() -> tuple[str, str]:
    return Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text()


def test_detection_on_this_host(cgroup: CgroupParents) -> None:
    """cgroup v2 where it delegates memory and pids, else the judge's own v1 memory (and pids)
    cgroup: the development machine and CI have a v2 without controllers, so v1."""
    mountinfo, own = own_cgroups()
    v2 = parse_cgroup_v2(mountinfo, own)
    delegated = v2 is not None and {"memory", "pids"} <= set(
        (v2 / "cgroup.subtree_control").read_text().split()
    )
    if delegated and os.access(v2, os.W_OK):
        assert v2 is not None
        assert (cgroup.version, cgroup.memory, cgroup.pids) == (V2, v2, v2)
    else:
        memory = parse_cgroup_v1(mountinfo, own, "memory")
        assert cgroup.version is V1
        assert cgroup.memory == memory
        assert cgroup.pids in (parse_cgroup_v1(mountinfo, own, "pids"), None)
    status = sandbox_status()
    assert status.memory_accounting == cgroup.version.name
    assert status.cgroup_parent is not None
    assert str(cgroup.memory) in status.cgroup_parent


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder the sandbox uids can reach (mode 711 all the way)."""
    root = Path(tempfile.mkdtemp(prefix="tapis-cgroups-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_a_sandbox_is_in_cgroups_of_its_own_until_it_is_killed(
    cgroup: CgroupParents, arena: Path
) -> None:
    bot = arena / "bot"
    bot.mkdir(mode=0o755)
    (bot / "main.py").write_text("import sys\nsys.stdin.read()\n")
    (bot / "main.py").chmod(0o644)
    limits = SandboxLimits(memory_bytes=MEMORY, max_processes=12)
    with spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot, limits=limits) as process:
        assert process.sandbox_pid is not None
        lines = Path(f"/proc/{process.sandbox_pid}/cgroup").read_text().splitlines()
        memory = cgroup.memory / _member(lines, "memory" if cgroup.version is V1 else "")
        assert memory.parent == cgroup.memory
        assert memory.name.startswith("tapis-bot-")
        assert (memory / cgroup.version.memory_limit).read_text().strip() == str(MEMORY)
        swap = memory / cgroup.version.swap_limit
        if swap.exists():  # memory + swap (v1), swap alone (v2)
            assert swap.read_text().strip() == cgroup.version.swap_value(MEMORY)
        if cgroup.pids is not None:
            pids = cgroup.pids / _member(lines, "pids" if cgroup.version is V1 else "")
            assert (pids / "pids.max").read_text().strip() == "12"
            assert str(process.sandbox_pid) in (pids / "cgroup.procs").read_text().split()
        assert str(process.sandbox_pid) in (memory / "cgroup.procs").read_text().split()
    assert not memory.exists()
    assert not leftovers(cgroup)


def _member(proc_cgroup_lines: list[str], controller: str) -> str:
    """The name of the sandbox's cgroup under its parent, from /proc/PID/cgroup."""
    for line in proc_cgroup_lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or controller == controllers:
            return path.rstrip("/").rsplit("/", 1)[-1]
    raise AssertionError(f"no {controller or 'v2'} cgroup in {proc_cgroup_lines}")


def test_kill_and_remove_end_what_is_left_in_the_cgroups(cgroup: CgroupParents) -> None:
    """Processes still in the cgroups (here a plain ``sleep`` of the judge's, no bot) are
    killed (v1 has no cgroup.kill: each listed process through a pidfd), then the cgroups
    removed."""
    made = _Cgroup.create(SandboxLimits(memory_bytes=MEMORY))
    assert made is not None
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        made.attach(sleeper.pid)
        assert str(sleeper.pid) in (made.path / "cgroup.procs").read_text().split()
        made.kill()
        assert sleeper.wait(10) == -9
        made.remove()
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not any(folder.exists() for folder in made.folders)


def test_the_cgroups_of_processes_gone_are_swept(cgroup: CgroupParents) -> None:
    """Cgroups left by judges gone (killed with their guardian, or before there were guardians)
    are removed by the next judge's sweep: named for a pid no process has, or for a pid reused
    (another start time), or in the older names; those of a process still there (its pid and
    start time) or of another pid namespace are left."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid is free now
    parent_start = cgroups._start_time(os.getppid())
    assert parent_start is not None
    stale = cgroups._prefix(gone.pid, 12345) + "1"
    reused = cgroups._prefix(os.getppid(), parent_start + 1) + "1"  # the pid, another process
    alive = cgroups._prefix(os.getppid(), parent_start) + "1"
    mine = cgroups._own_prefix() + "999"
    elsewhere = f"tapis-bot-1-{gone.pid}at1-1"  # pid namespace inode 1: not ours
    legacy = f"tapis-bot-{gone.pid}-2"  # as named before the pid namespace was in the names
    legacy_ns = f"tapis-bot-{cgroups._pid_namespace()}-{gone.pid}-3"  # before start times
    names = (stale, reused, alive, mine, elsewhere, legacy, legacy_ns)
    parents = cgroup.all()
    for parent in parents:
        for name in names:
            (parent / name).mkdir()
    try:
        removed = cgroups.sweep_stale_cgroups(cgroup)
        # other processes gone (a worker killed by another test) may have left theirs too
        ours = {parent / n for parent in parents for n in (stale, reused, legacy, legacy_ns)}
        assert ours <= set(removed)
        assert all(path.name not in (alive, mine, elsewhere) for path in removed)
        for name in (alive, mine, elsewhere):
            assert all((parent / name).is_dir() for parent in parents)
    finally:
        for parent in parents:
            for name in names:
                if (parent / name).exists():
                    (parent / name).rmdir()


def test_the_sweep_logs_one_line_in_all(
    cgroup: CgroupParents, caplog: pytest.LogCaptureFixture
) -> None:
    """Stale cgroups it cannot remove (here: each has a cgroup inside) cost one line of log in
    all, not one per cgroup and hierarchy: 77 leaked cgroups once filled the stderr pipe of a
    judge started by a test (70 KB), which hung."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    names = [cgroups._prefix(gone.pid, 1) + str(n) for n in (1, 2, 3)]
    parents = cgroup.all()
    for parent in parents:
        for name in names:
            (parent / name / "inner").mkdir(parents=True)
    try:
        with caplog.at_level(logging.WARNING, logger="judge.sandbox.cgroups"):
            cgroups.sweep_stale_cgroups(cgroup, timeout=0.05)
        lines = [r for r in caplog.records if r.name == "judge.sandbox.cgroups"]
        assert len(lines) == 1, [r.getMessage() for r in lines]
        assert f"{len(names) * len(parents)} stale cgroups" in lines[0].getMessage()
    finally:
        for parent in parents:
            for name in names:
                (parent / name / "inner").rmdir()
                (parent / name).rmdir()


# ----------------------------------------------------------------------------- balloons

C_BALLOON = r"""
/* Holds 16 MiB blocks, touched, saying how much it holds after each (up to 256 MiB). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    static char line[1 << 16];
    int done = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"hello\"")) {
            printf("{\"type\":\"ready\",\"name\":\"balloon\"}\n");
        } else if (strstr(line, "\"act\"")) {
            if (!done) {
                done = 1;
                for (long held = 16; held <= 256; held += 16) {
                    char *block = malloc(16 << 20);
                    if (!block) { fprintf(stderr, "refused at %ld MiB\n", held); break; }
                    memset(block, 1, 16 << 20);
                    fprintf(stderr, "held %ld MiB\n", held);
                }
            }
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

GO_BALLOON = """\
// Holds 16 MiB slices, touched, past GOMEMLIMIT, saying how much it holds after each.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type message struct {
	Type         string            `json:"type"`
	ID           json.RawMessage   `json:"id"`
	LegalActions []json.RawMessage `json:"legal_actions"`
}

var held [][]byte

func main() {
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadBytes('\\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "hello":
			fmt.Println(`{"type":"ready","name":"balloon"}`)
		case "act":
			for len(held) < 16 {
				block := make([]byte, 16<<20)
				for i := range block {
					block[i] = 1
				}
				held = append(held, block)
				fmt.Fprintf(os.Stderr, "held %d MiB\\n", 16*len(held))
			}
			fmt.Printf("{\\"id\\":%s,\\"action\\":%s}\\n", m.ID, m.LegalActions[0])
		}
	}
}
"""


def balloon_table(
    arena: Path, bot: Path | BotSpec, memory: int = MEMORY, *, zygotes: bool = False
) -> TableResult:
    """One deal of Hearts: the balloon at seat 0, sandboxed first-legal Python bots elsewhere."""
    first = arena / "first.py"
    first.write_text(FIRST_LEGAL_BOT)
    workdir = arena / "work"
    workdir.mkdir(mode=0o711)
    result = run_table(
        game="hearts",
        preset="whisthub",
        bots=[bot if isinstance(bot, BotSpec) else str(bot), *[str(first)] * 3],
        deals=1,
        seed=3,
        limits=Limits(
            startup=30.0,  # a build, under load
            decision=5.0,
            bank=10.0,
            resources=SandboxLimits(
                memory_bytes=memory, address_space_bytes=8 * memory, tmp_bytes=memory
            ),
        ),
        sandbox="bwrap",
        workdir=workdir,
        sdk_dir=SDK_DIR,
        zygotes=zygotes,
    )
    verdict = games.verify(result.log)
    assert verdict.ok, verdict
    return result


def assert_killed_at_the_memory_limit(
    result: TableResult, cgroup: CgroupParents, memory: int = MEMORY
) -> None:
    """Seat 0 died by the cgroup's memory limit, with a fault that says so, below what it
    tried to hold and below its RLIMIT_AS; the other seats played the whole deal."""
    assert [fault.seat for fault in result.faults] == [0], result.faults
    fault = result.faults[0]
    assert fault.kind is FaultKind.CRASH
    reason = f"killed at its memory limit of {memory // MIB} MiB"
    assert f"{reason} (out of memory in its {cgroup.version.name})" in fault.detail, fault
    assert result.seats[0].replaced
    held = [int(n) for n in re.findall(r"held (\d+) MiB", result.seats[0].log)]
    assert max(held, default=0) * MIB < memory, result.seats[0].log
    assert "refused" not in result.seats[0].log
    assert "blocked" not in result.seats[0].log
    others = result.seats[1:]
    assert all(not seat.replaced and seat.decisions == others[0].decisions for seat in others)
    assert others[0].decisions > 0


def test_a_c_bot_past_its_memory_limit_is_killed_by_the_cgroup(
    cgroup: CgroupParents, arena: Path
) -> None:
    """RLIMIT_AS is 8 times the memory limit here: only the cgroup stops the balloon at 64 MiB
    (it would hold 256 MiB)."""
    source = arena / "balloon.c"
    source.write_text(C_BALLOON)
    assert_killed_at_the_memory_limit(balloon_table(arena, source), cgroup)


def node_balloon(arena: Path) -> Path:
    """The JavaScript memory balloon of tests/judge/attacks/ as a package."""
    package = arena / "node"
    package.mkdir()
    shutil.copyfile(ATTACK_JS, package / "main.js")
    (package / "params.json").write_text(json.dumps({"name": "memory_balloon"}))
    (package / "tapis.json").write_text(json.dumps({"entry": "main.js", "runtime": "javascript"}))
    return package


def test_node_buffers_are_stopped_at_the_memory_limit_not_at_rlimit_as(
    cgroup: CgroupParents, arena: Path
) -> None:
    """The JavaScript memory balloon of the attacks (16 MiB Buffers, off V8's heap) with the
    runtime's own RLIMIT_AS (memory + 768 MiB): without a cgroup it holds 112 MiB before
    Node refuses one, with one it dies at 64 MiB."""
    result = balloon_table(arena, node_balloon(arena))
    assert_killed_at_the_memory_limit(result, cgroup)
    assert "ATTACK memory_balloon" not in result.seats[0].log  # neither blocked nor SUCCEEDED


def test_a_go_bot_holding_memory_past_gomemlimit_is_killed_at_the_memory_limit(
    cgroup: CgroupParents, arena: Path
) -> None:
    """GOMEMLIMIT (48 MiB here) is a soft limit: a bot that holds what it allocates passes it;
    without a cgroup only RLIMIT_AS (memory + 768 MiB) stops it."""
    source = arena / "main.go"
    source.write_text(GO_BALLOON)
    result = balloon_table(arena, source)
    assert_killed_at_the_memory_limit(result, cgroup)


PYTHON_TMP_BALLOON = """\
import sys

from tapis_bot import Bot, run


class TmpBalloon(Bot):
    # Fills /tmp (its pages count in the cgroup, never in RLIMIT_AS), then holds 56 MiB.
    name = "tmp-balloon"
    held = []

    def act(self, observation, legal_actions):
        if not self.held:
            for n in range(FILES):  # 8 MiB each, RLIMIT_FSIZE
                with open(f"/tmp/fill{n}", "wb") as out:
                    out.write(b"x" * (8 << 20))
            while len(self.held) < 7:
                self.held.append(bytearray(b"y") * (8 << 20))
                print(f"held {8 * len(self.held)} MiB", file=sys.stderr)
        return legal_actions[0]


run(TmpBalloon())
"""


@pytest.fixture
def no_idle_zygotes() -> Iterator[None]:
    zygote.retire_all()
    yield
    zygote.retire_all()


@pytest.mark.parametrize("tmp_mib", [40, 0])
def test_a_forked_python_bot_is_killed_with_the_reason_its_tmp_counted(
    cgroup: CgroupParents, arena: Path, no_idle_zygotes: None, tmp_mib: int
) -> None:
    """A bot forked by a zygote shares the zygote's cgroup (96 MiB here): an out-of-memory kill
    is still its seat's fault with the reason. Its /tmp counts: 56 MiB held fit with the
    zygote, not with 40 MiB written in /tmp as well."""
    source = arena / "tmp_balloon.py"
    source.write_text(PYTHON_TMP_BALLOON.replace("FILES", str(tmp_mib // 8)))
    spec = BotSpec(path=source, instance=f"tmp balloon {tmp_mib}")
    memory = 96 * MIB
    result = balloon_table(arena, spec, memory, zygotes=True)
    held = [int(n) for n in re.findall(r"held (\d+) MiB", result.seats[0].log)]
    if tmp_mib == 0:
        assert result.faults == ()
        assert max(held) == 56
        return
    assert [fault.seat for fault in result.faults] == [0], result.faults
    reason = f"killed at its memory limit of 96 MiB (out of memory in its {cgroup.version.name})"
    assert reason in result.faults[0].detail
    assert (tmp_mib + max(held, default=0)) * MIB < memory, result.seats[0].log


# ----------------------------------------------------------------------------- without


@pytest.fixture(params=["configured", "detected"])
def no_cgroup(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A worker without cgroups: told so (TAPIS_SANDBOX_CGROUP=none), or finding none usable
    (its /proc/self/{mountinfo,cgroup} the hybrid layout's, its cgroup file systems stand-in
    folders without the controllers' files)."""
    if request.param == "configured":
        monkeypatch.setenv(CGROUP_ENV, "none")
        yield
        return
    monkeypatch.delenv(CGROUP_ENV, raising=False)
    for folder in ("unified", "memory/process_api/685d4e", "pids"):
        (tmp_path / folder).mkdir(parents=True)
    texts = (stand_in(tmp_path, HYBRID_MOUNTINFO), HYBRID_CGROUP)
    monkeypatch.setattr(cgroups, "_proc_self", lambda: texts)
    cgroups._detected_cgroup_parents.cache_clear()
    yield
    cgroups._detected_cgroup_parents.cache_clear()


def test_without_a_cgroup_rlimits_and_runtime_flags_bound_memory(
    bwrap_works: None, no_cgroup: None, arena: Path
) -> None:
    """The status says so, and the Node balloon is stopped by its RLIMIT_AS (past which Node
    refuses a Buffer), not killed, and plays on."""
    status = sandbox_status()
    assert (status.memory_accounting, status.cgroup_parent, status.problems) == ("none", None, ())
    result = balloon_table(arena, node_balloon(arena))
    assert result.faults == ()
    held = re.search(r"ATTACK memory_balloon blocked: \w+ after (\d+) MiB", result.seats[0].log)
    assert held is not None, result.seats[0].log
    assert int(held.group(1)) * MIB <= MEMORY + runtimes.RESERVED["javascript"]


def test_a_configured_parent_that_is_not_usable_is_an_error(
    bwrap_works: None, arena: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed: a worker told to use a cgroup that it cannot use refuses to start bots
    (the status names the problem) rather than run them with the rlimits alone."""
    monkeypatch.setenv(CGROUP_ENV, str(arena))  # a folder, not a cgroup
    status = sandbox_status()
    assert any(CGROUP_ENV in problem for problem in status.problems), status
    with pytest.raises(SandboxError, match="not a cgroup v2 directory"):
        cgroup_parents()


# ----------------------------------------------------------------------------- frozen bots

# A judge with one bot, frozen (as a bot waiting for its turn is); it says where, then waits.
FROZEN_JUDGE = """\
import json, sys, time
from pathlib import Path
from judge.sandbox import spawn_bot
from judge.sandbox.cgroups import _Cgroup
loop = "import time\\nwhile True: time.sleep(0.01)"
process = spawn_bot(["python3", "-S", "-c", loop], bot_dir=Path(sys.argv[1]))
process.freeze()
cgroup, guardian = process._cgroup, _Cgroup._guardian
assert cgroup is not None and cgroup.freezer is not None and guardian is not None
where = {"bot": process.sandbox_pid, "guardian": guardian.pid, "freezer": str(cgroup.freezer)}
print(json.dumps({**where, "folders": [str(f) for f in cgroup.folders]}), flush=True)
time.sleep(600)
"""
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def frozen_judge(
    cgroup: CgroupParents, arena: Path
) -> Iterator[tuple[subprocess.Popen[str], dict]]:
    """Another judge process with a frozen bot: (the judge, where its bot and cgroups are)."""
    bot = arena / "bot"
    bot.mkdir(mode=0o755)
    judge = subprocess.Popen(
        [sys.executable, "-c", FROZEN_JUDGE, str(bot)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert judge.stdout is not None
        line = judge.stdout.readline()
        assert line, "the judge did not start its bot"
        where = json.loads(line)
        wait_for(lambda: Path(where["freezer"], "freezer.state").read_text().strip() == "FROZEN")
        yield judge, where
    finally:
        judge.kill()
        judge.wait()


def wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    """Wait until ``condition()`` holds (fails past ``seconds``: it never came)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never came"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether process ``pid`` is there and not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def all_gone(where: dict) -> bool:
    return not alive(where["bot"]) and not any(Path(f).exists() for f in where["folders"])


def test_a_judge_killed_while_its_bot_is_frozen_leaves_nothing_behind(
    frozen_judge: tuple[subprocess.Popen[str], dict],
) -> None:
    """A frozen process dies of SIGKILL only once thawed: the judge's guardian, which waits on
    a pidfd of it, thaws, kills and removes its cgroups when it is SIGKILLed."""
    judge, where = frozen_judge
    judge.kill()
    judge.wait()
    wait_for(lambda: not alive(where["guardian"]))
    assert all_gone(where)


def test_a_frozen_sandbox_of_a_judge_gone_is_swept(
    frozen_judge: tuple[subprocess.Popen[str], dict], cgroup: CgroupParents
) -> None:
    """A judge killed with its guardian leaves its frozen bot and its cgroups; the next
    judge's sweep kills, thaws and removes them."""
    judge, where = frozen_judge
    os.kill(where["guardian"], signal.SIGKILL)
    wait_for(lambda: not alive(where["guardian"]))
    judge.kill()
    judge.wait()
    assert alive(where["bot"])  # frozen, with its SIGKILL pending
    assert all(Path(f).is_dir() for f in where["folders"])
    removed = cgroups.sweep_stale_cgroups(cgroup)
    assert {Path(f) for f in where["folders"]} <= set(removed)
    wait_for(lambda: all_gone(where))


def test_the_sweep_never_touches_a_live_judges_cgroups(
    frozen_judge: tuple[subprocess.Popen[str], dict], cgroup: CgroupParents
) -> None:
    judge, where = frozen_judge
    removed = cgroups.sweep_stale_cgroups(cgroup)
    assert not {Path(f) for f in where["folders"]} & set(removed)
    assert all(Path(f).is_dir() for f in where["folders"])
    assert Path(where["freezer"], "freezer.state").read_text().strip() == "FROZEN"
    assert alive(where["bot"])
    judge.kill()
    judge.wait()
    wait_for(lambda: all_gone(where))
