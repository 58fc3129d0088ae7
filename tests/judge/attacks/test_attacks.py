"""Hostile bots at real tables, under bubblewrap.

Each bot of ``bots/`` (one attack per file) sits at a real whisthub Hearts table run by
``judge.run_table(..., sandbox="bwrap")`` with sandboxed first-legal bots in the other seats.
For every attack: the table completes and its replay verifies; the attacking seat is recorded
(its faults, or its own evidence ``ATTACK <name> blocked`` in its log, never ``SUCCEEDED``);
the other seats are unaffected (no fault, same number of decisions, and when the attacker plays
on, the very same points as a table of well-behaved bots); and nothing leaks or changes outside:
the judge's secrets appear nowhere in the result, a world-writable host folder stays empty, the
host's /tmp gets no marker, a host port gets no connection, and no process of the attack
survives the table.

The same attacks run in other languages, judged by the same checks (``native/``: one program
per language, the attack named by a constant of its build; ``IN_C`` and the others below): C
all but the few that only Python has (``exec_shim``; its one network and one secrets attack try
what the Python variants try one by one), JavaScript, Java, and the core set in Go and Rust.
What a language cannot express is left out:

- JavaScript: no raw system call API (``ptrace``, ``int 0x80``, x32, ``keyctl``, ``unshare``
  and the other escape calls, ``setuid``) and no ``fork`` (``proc_mem`` reads a forked child);
  no System V IPC, POSIX message queue, ``sigqueue`` or ``flock``: its ``collude_shm`` tries
  POSIX shared memory only (a file in ``/dev/shm``, what ``shm_open`` opens), and it has no
  ``collude_lock``, nor the host-wide channels (``io_setup``, ``sysinfo``, ``mincore``,
  ``fadvise``: ``collude_counters``, ``collude_figures``, ``collude_cache``, in Python and C);
  a Worker thread is a V8 isolate of its own, so a thread bomb would test the
  memory limit, not the task limit.
- Java: no ``fork``, ``ptrace``, signal (``ProcessHandle.destroy`` only) or raw system call:
  none of the kernel attacks; no abstract unix socket, System V IPC or signal handler: none of
  the collusion attacks.
- Go and Rust: the core set (network, host files and secrets, written programs, fork and
  thread bombs, memory, kill -1, ptrace, a huge line). Go's runtime cannot survive a refused
  thread: its fork bomb kills its children once refused, and its thread bomb ends it.

Attacks only another language has: V8's and Go's own heaps full, Go's threads, the JVM's
direct buffers, and ``/proc/PID/mem`` of a child. An attack that gets through is a test marked
``xfail(strict=True)`` with the hole it shows (``KNOWN_HOLES``).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import os
import re
import shutil
import signal
import socket
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import games
from judge import FaultKind, Limits, TableResult, run_table
from judge.launchers import runtimes
from judge.launchers.package import prepare, remove
from judge.sandbox import SandboxLimits, sandbox_status
from judge.sandbox.cgroups import NO_CGROUP

HERE = Path(__file__).resolve().parent
BOTS = HERE / "bots"
NATIVE = HERE / "native"  # the attacks in C and JavaScript, built and run in the sandbox
REPO = HERE.parents[2]

GAME, PRESET, DEALS, SEED = "hearts", "whisthub", 2, 11
LIMITS = Limits(
    startup=5.0,
    decision=1.0,
    bank=2.0,
    closing=0.5,
    resources=SandboxLimits(cpu_seconds=20, memory_bytes=256 * 2**20, tmp_bytes=4 * 2**20),
)
VICTIM_BOT = """\
# VICTIM-SECRET {secret}: another author's code, which no other bot may read.
from tapis_bot import Bot, run


class First(Bot):
    name = "first"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
"""

T = FaultKind
SIGSYS = f"status {128 + signal.SIGSYS}"  # bubblewrap's status for a bot killed by SIGSYS


@dataclasses.dataclass(frozen=True)
class Attack:
    """An attack and what the judge must make of it."""

    name: str
    faults: frozenset[FaultKind] = frozenset()  # empty: blocked, the bot plays on, no fault
    replaced: bool | None = False  # the attacking seat handed to a built-in bot (None: either)
    seats: tuple[int, ...] = (0,)  # the seats that run the attack
    evidence: bool = True  # the bot's log must say "blocked"
    detail: str = ""  # in the first fault's detail
    log: str = ""  # in the attacking seat's log: the reason its author reads

    def __str__(self) -> str:
        return self.name


ATTACKS = [
    # the network
    Attack("net_postgres"),
    Attack("net_redis"),
    Attack("net_public"),
    Attack("net_listener"),
    Attack("net_dns"),
    Attack("net_vsock"),
    # secrets and other people's files
    Attack("read_project"),
    Attack("read_secret_key"),
    Attack("read_proc1_environ"),
    Attack("read_parent_env"),
    Attack("read_other_bot"),
    Attack("write_outside"),
    # executing a file it wrote: /tmp and every writable place are noexec, no executable memfd
    Attack("exec_written"),
    Attack(
        "exec_shim",
        frozenset({T.CRASH}),
        replaced=True,
        evidence=False,
        log='os.execv("/tmp/bot.py", ["/tmp/bot.py"])\n'
        "PermissionError: [Errno 13] Permission denied",
    ),
    # resources
    Attack("fill_tmp"),
    Attack("fork_bomb"),
    Attack("thread_bomb"),
    Attack("memory_balloon"),
    Attack("cpu_spin", frozenset({T.TIMEOUT}), replaced=True, evidence=False),
    Attack("sleep_forever", frozenset({T.TIMEOUT}), replaced=True, evidence=False),
    # the protocol
    # after the fault, skipping the rest of the line may take longer than a decision under load
    Attack("flood_stdout", frozenset({T.LINE_TOO_LONG}), replaced=None, evidence=False),
    Attack("flood_stderr", evidence=False),
    Attack("huge_line", frozenset({T.LINE_TOO_LONG}), replaced=None, evidence=False),
    Attack("invalid_utf8", frozenset({T.BAD_UTF8}), evidence=False),
    Attack("illegal_card", frozenset({T.ILLEGAL}), replaced=True, evidence=False),
    Attack("wrong_id", frozenset({T.WRONG_ID}), replaced=True, evidence=False),
    Attack("answer_early", frozenset({T.UNSOLICITED}), evidence=False),
    Attack("exit_at_once", frozenset({T.CRASH}), replaced=True, evidence=False),
    Attack("close_stdout", frozenset({T.TIMEOUT, T.CRASH}), replaced=True, evidence=False),
    # processes
    Attack("daemon"),
    Attack("kill_parent"),
    Attack("kill_all"),
    # the kernel
    Attack("ptrace"),
    Attack("int80", frozenset({T.CRASH}), replaced=True, evidence=False, detail=SIGSYS),
    Attack("x32", frozenset({T.CRASH}), replaced=True, evidence=False, detail=SIGSYS),
    Attack("keyctl"),
    Attack("escape_syscalls"),
    Attack("setuid_root"),
    # two bots of one author at the same table
    Attack("collude_socket", seats=(0, 1)),
    Attack("collude_shm", seats=(0, 1)),
    Attack("collude_tmp", seats=(0, 1)),
    Attack("collude_signals", seats=(0, 1)),
    Attack("collude_lock", seats=(0, 1)),
    # two bots anywhere on the host (at two tables of a duplicate round): host-wide counters,
    # figures and the page cache (docs/sandbox.md, "Host-wide channels")
    Attack("collude_counters", seats=(0, 1)),
    Attack("collude_figures", seats=(0, 1)),
    Attack("collude_cache", seats=(0, 1)),
    Attack("collude_futex", seats=(0, 1)),
    # what cannot be closed on a shared kernel: a known hole (KNOWN_HOLES), for which two tables
    # of one duplicate round never play at once on one kernel
    Attack("collude_numbers", seats=(0, 1)),
]


# What the attacks found that the sandbox lets through: each of these tests must fail.
KNOWN_HOLES = {
    "proc_mem": "a bot reads the memory of its own child processes through /proc/PID/mem, a "
    "file that seccomp cannot refuse (ptrace and process_vm_readv are refused): same uid, "
    "dumpable, in its own pid namespace; nothing of another seat or of the host is reachable",
    "collude_numbers": "numbers the kernel gives a process about its own objects come from "
    "counters of the whole host: eventfd ids (/proc/self/fdinfo), whether a page of a shared "
    "file is mapped elsewhere too (/proc/self/smaps), pipe and socket inode numbers; a bot "
    'needs them (docs/sandbox.md, "Host-wide channels")',
}


def marked(attack: Attack, runtime: str = "python3") -> object:
    """The test of an attack, expected to fail if it shows a known hole."""
    reason = KNOWN_HOLES.get(attack.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(
        *([] if runtime == "python3" else [runtime]),
        attack,
        marks=marks,
        id=(attack.name if runtime == "python3" else f"{runtime}-{attack.name}"),
    )


# The run-time attacks in other languages (native/: attack.c, attack.js, Attack.java, attack.go,
# attack.rs), with what the judge must make of each as in Python. One network attack tries
# every address and port, one environment attack every secret and /proc.
IN_C = (
    "net_postgres",
    "read_project",
    "read_secret_key",
    "read_other_bot",
    "write_outside",
    "exec_written",
    "fill_tmp",
    "fork_bomb",
    "thread_bomb",
    "memory_balloon",
    "cpu_spin",
    "sleep_forever",
    "flood_stdout",
    "flood_stderr",
    "huge_line",
    "invalid_utf8",
    "illegal_card",
    "wrong_id",
    "answer_early",
    "exit_at_once",
    "close_stdout",
    "daemon",
    "kill_parent",
    "kill_all",
    "ptrace",
    "int80",
    "x32",
    "keyctl",
    "escape_syscalls",
    "setuid_root",
    "collude_socket",
    "collude_shm",
    "collude_tmp",
    "collude_signals",
    "collude_lock",
    "collude_counters",
    "collude_figures",
    "collude_cache",
    "collude_futex",
    "collude_numbers",
    "proc_mem",
)
RAW_SYSCALLS = (
    "ptrace",
    "int80",
    "x32",
    "keyctl",
    "escape_syscalls",
    "setuid_root",
    "proc_mem",
)
# Node has no raw system call (nor fork: no child shares its memory) and no flock; a Worker
# thread is a V8 isolate of its own: a bomb of them would meet the memory limit first.
HOST_WIDE = (
    "collude_counters",
    "collude_figures",
    "collude_cache",
    "collude_futex",
    "collude_numbers",
)
IN_JAVASCRIPT = (
    *(
        name
        for name in IN_C
        if name not in (*RAW_SYSCALLS, *HOST_WIDE, "thread_bomb", "collude_lock")
    ),
    "heap_balloon",
)
# Go and Rust: the attacks a bot of theirs is likeliest to try (with the network, secrets and
# exec ones each covering the variants of their Python group).
IN_GO = (
    "net_postgres",
    "read_project",
    "read_secret_key",
    "read_proc1_environ",
    "write_outside",
    "exec_written",
    "fork_bomb",
    "go_thread_bomb",
    "memory_balloon",
    "go_heap_balloon",
    "huge_line",
    "kill_parent",
    "kill_all",
    "ptrace",
    "proc_mem",
)
IN_RUST = (
    "net_postgres",
    "read_project",
    "read_secret_key",
    "exec_written",
    "fork_bomb",
    "thread_bomb",
    "memory_balloon",
    "huge_line",
    "kill_all",
    "ptrace",
)
# Java: what the JVM can express. No fork, ptrace, signal or raw system call: its processes are
# ProcessBuilder's (a Python child where one must be named), its kills ProcessHandle's; no
# abstract unix socket, System V IPC or signal handler: none of the collusion attacks.
IN_JAVA = (
    "net_postgres",
    "read_project",
    "read_secret_key",
    "read_other_bot",
    "write_outside",
    "exec_written",
    "fill_tmp",
    "fork_bomb",
    "thread_bomb",
    "memory_balloon",
    "direct_balloon",
    "cpu_spin",
    "sleep_forever",
    "flood_stdout",
    "flood_stderr",
    "huge_line",
    "invalid_utf8",
    "illegal_card",
    "wrong_id",
    "answer_early",
    "exit_at_once",
    "daemon",
    "kill_parent",
    "kill_all",
)
# Attacks only other languages have: V8's own heap full (its limit from the memory limit).
NATIVE_ONLY = [
    Attack(
        "heap_balloon",
        frozenset({T.CRASH}),
        replaced=True,
        evidence=False,
        log="JavaScript heap out of memory",
    ),
    # The JVM's direct buffers: -XX:MaxDirectMemorySize, the heap's size by default
    Attack("direct_balloon"),
    # The memory of its own child through /proc/PID/mem (ptrace and process_vm_readv refused)
    Attack("proc_mem"),
    # Go: threads until refused; its runtime cannot go on without one and ends the process
    Attack(
        "go_thread_bomb",
        frozenset({T.CRASH}),
        replaced=True,
        evidence=False,
        log="failed to create new OS thread",
    ),
    # Go's own heap full: the runtime ends the process
    Attack(
        "go_heap_balloon",
        frozenset({T.CRASH}),
        replaced=True,
        evidence=False,
        log="out of memory",
    ),
]
NATIVE_ATTACKS = [
    marked(attack, runtime)
    for runtime, names in (
        ("c", IN_C),
        ("javascript", IN_JAVASCRIPT),
        ("java", IN_JAVA),
        ("go", IN_GO),
        ("rust", IN_RUST),
    )
    for attack in [*ATTACKS, *NATIVE_ONLY]
    if attack.name in names
]


@pytest.fixture(scope="module", autouse=True)
def _bwrap_works(bwrap_works: None) -> None:
    """Every test here needs a working sandbox (tests/judge/conftest.py)."""


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder for the table's packages and work directory, reachable by the sandbox uids."""
    root = Path(tempfile.mkdtemp(prefix="tapis-attacks-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def package(folder: Path, source: Path | str, params: dict[str, object] | None = None) -> Path:
    """A bot package folder: main.py (+ the attack helpers and params.json)."""
    folder.mkdir()
    main = folder / "main.py"
    if isinstance(source, Path):
        shutil.copyfile(source, main)
        for helper in ("_attack.py", "_raw.py"):
            shutil.copyfile(BOTS / helper, folder / helper)
    else:
        main.write_text(source)
    if params is not None:
        (folder / "params.json").write_text(json.dumps(params))
    (folder / "tapis.json").write_text(json.dumps({"entry": "main.py", "runtime": "python3"}))
    return folder


def native_package(folder: Path, runtime: str, params: dict[str, object]) -> Path:
    """A package of the attack in another language: the program of ``native/`` and
    params.json; in C the parameters are constants of the build instead (params.h beside it)."""
    folder.mkdir()
    manifest: dict[str, object]
    if runtime == "c":
        shutil.copyfile(NATIVE / "attack.c", folder / "main.c")
        header = [f"#define P_{key.upper()} {json.dumps(value)}" for key, value in params.items()]
        header.append(f'#define P_JUDGE_PID_S "{params["judge_pid"]}"')
        (folder / "params.h").write_text("\n".join(header) + "\n")
        manifest = {"entry": "main.c"}
    elif runtime == "javascript":
        shutil.copyfile(NATIVE / "attack.js", folder / "main.js")
        manifest = {"entry": "main.js"}
    else:
        manifest = shared_sources(folder, runtime)
    (folder / "params.json").write_text(json.dumps(params, separators=(",", ":")))
    (folder / "tapis.json").write_text(json.dumps({**manifest, "runtime": runtime}))
    return folder


# Java, Go and Rust read /bot/params.json: their program is built once (the same sources at
# every test and every run: the worker's build cache keeps it), and each test's package gets a
# copy of that build with its params.json added, handed to the judge as a stored artifact is
# (runtimes.artifact_for checks that it is of this package's files and this toolchain).
SHARED_BUILDS = ("java", "go", "rust")


def shared_sources(folder: Path, runtime: str) -> dict[str, object]:
    """The program of ``native/`` in Java, Go or Rust in ``folder``; its manifest."""
    if runtime == "java":
        shutil.copyfile(NATIVE / "Attack.java", folder / "Attack.java")
        return {"entry": "Attack.java"}
    if runtime == "go":
        shutil.copyfile(NATIVE / "attack.go", folder / "main.go")
        return {"entry": "main.go"}
    (folder / "src").mkdir()
    shutil.copyfile(NATIVE / "attack.rs", folder / "src" / "main.rs")
    # no dependency (serde_json would take most of the build): it reads JSON by hand
    (folder / "Cargo.toml").write_text(
        '[package]\nname = "attack"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    return {"entry": "src/main.rs", "sources": ["Cargo.toml", "src/main.rs"]}


@functools.cache
def shared_build(runtime: str, cache: Path) -> Path:
    """The program of ``native/`` built in the sandbox (or found in the build cache
    ``cache``): the folder the judge would bind at /bot."""
    root = Path(tempfile.mkdtemp(prefix="tapis-attack-build-"))
    root.chmod(0o711)
    try:
        source = root / "source"
        source.mkdir()
        manifest = shared_sources(source, runtime)
        (source / "tapis.json").write_text(json.dumps({**manifest, "runtime": runtime}))
        prepared = prepare(source, root / "bot")
        try:
            return runtimes.artifact_for(
                prepared.directory, runtime, prepared.entry, prepared.sources, cache
            )
        finally:
            remove(prepared.directory)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def seed_shared_build(package: Path, runtime: str, worker_cache: Path) -> None:
    """Put the shared build of ``runtime`` with the package's params.json into the build cache
    as the package's artifact."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(shared_build(runtime, worker_cache), arcname=".")
        params = (package / "params.json").read_bytes()
        member = tarfile.TarInfo("./params.json")
        member.size, member.mode = len(params), 0o444
        tar.addfile(member, io.BytesIO(params))
    root = Path(tempfile.mkdtemp(prefix="tapis-attack-seed-"))
    root.chmod(0o711)
    try:
        prepared = prepare(package, root / "bot")
        digest = runtimes.sources_digest(prepared.directory)
        toolchain = runtimes.toolchain(runtime)
        artifact = runtimes.Artifact(
            runtime, prepared.entry, digest, toolchain, buffer.getvalue(), "", 0
        )
        runtimes.artifact_for(
            prepared.directory,
            runtime,
            prepared.entry,
            prepared.sources,
            runtimes.build_cache(),
            stored=artifact,
        )
        remove(prepared.directory)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table(bots: list[str], workdir: Path, limits: Limits = LIMITS) -> TableResult:
    workdir.mkdir(mode=0o711)
    workdir.chmod(0o711)
    result = run_table(
        game=GAME,
        preset=PRESET,
        bots=bots,
        deals=DEALS,
        seed=SEED,
        limits=limits,
        sandbox="bwrap",
        workdir=workdir,
    )
    verdict = games.verify(result.log)
    assert verdict.ok, verdict
    assert len(result.deal_points) == DEALS
    return result


@pytest.fixture(scope="module")
def reference() -> Iterator[TableResult]:
    """The same table with well-behaved bots in every seat."""
    root = Path(tempfile.mkdtemp(prefix="tapis-attacks-reference-"))
    root.chmod(0o711)
    try:
        bots = [str(package(root / f"bot{i}", VICTIM_BOT.format(secret=i))) for i in range(4)]
        result = table(bots, root / "work")
        assert result.faults == ()
        yield result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def processes_named(name: str) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                comm = Path(entry.path, "comm").read_text().strip()
            except OSError:
                continue
            if comm == name:
                found.append(int(entry.name))
    return found


class Outside:
    """What a test watches outside the sandbox: a host folder anyone may write into, a marker
    path in the host's /tmp, a listening port on the host's loopback, a process name."""

    def __init__(self, arena: Path) -> None:
        self.token = os.urandom(6).hex()
        self.dropbox = arena / "dropbox"
        self.host_tmp_marker = Path(tempfile.gettempdir(), f"tapis-attack-{self.token}")
        self.process_name = f"tapis{self.token[:10]}"
        self.listener = socket.socket()
        self.arena = arena

    def __enter__(self) -> Outside:
        self.dropbox.mkdir()
        self.dropbox.chmod(0o777)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.listener.setblocking(False)
        return self

    def __exit__(self, *exc: object) -> None:
        self.listener.close()
        self.host_tmp_marker.unlink(missing_ok=True)

    def params(self, name: str) -> dict[str, object]:
        return {
            "name": name,
            "token": self.token,
            "repo": str(REPO),
            "port": self.listener.getsockname()[1],
            "dropbox": str(self.dropbox),
            "host_tmp_marker": str(self.host_tmp_marker),
            "judge_pid": os.getpid(),
            "workdir": str(self.arena / "work"),
            "process_name": self.process_name,
            "rare_file": str(rare_file()),
        }


def rare_file() -> Path:
    """A file of /usr that no program of the tests reads, of 20 pages at least: the page cache
    channel's carrier (collude_cache)."""
    for candidate in sorted(Path("/usr/lib").glob("python3*/pydoc_data/topics.py")):
        if candidate.stat().st_size >= 20 * 4096:
            return candidate
    raise AssertionError("no rarely read file of 80 KiB in /usr/lib/python3*/pydoc_data")


def seat_bots(
    attack: Attack,
    arena: Path,
    params: dict[str, object],
    runtime: str = "python3",
    worker_cache: Path | None = None,
) -> list[str]:
    """The attack in its seats, well-behaved bots (with a secret of their own) elsewhere."""
    bots = []
    for seat in range(4):
        if seat in attack.seats and runtime != "python3":
            bots.append(str(native_package(arena / f"seat{seat}", runtime, params)))
            if runtime in SHARED_BUILDS:
                assert worker_cache is not None
                seed_shared_build(Path(bots[-1]), runtime, worker_cache)
        elif seat in attack.seats:
            source: Path | str = BOTS / f"{attack.name}.py"
            bots.append(str(package(arena / f"seat{seat}", source, params)))
        else:
            victim = VICTIM_BOT.format(secret=os.urandom(8).hex())
            bots.append(str(package(arena / f"seat{seat}", victim)))
    return bots


@pytest.mark.parametrize("attack", [marked(attack) for attack in ATTACKS])
def test_attack(
    attack: Attack, arena: Path, reference: TableResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    play_attack(attack, arena, reference, monkeypatch)


@pytest.mark.parametrize(("runtime", "attack"), NATIVE_ATTACKS)
def test_attack_in_another_language(
    runtime: str,
    attack: Attack,
    arena: Path,
    reference: TableResult,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same attack, written in C, Java, Go or Rust (built by the real compiler in the build
    sandbox) or in JavaScript, judged by the same checks."""
    memory = LIMITS.resources.memory_bytes  # type: ignore[union-attr]
    go_memory = runtime == "go" and attack.name in ("memory_balloon", "go_heap_balloon")
    if go_memory and sandbox_status().memory_accounting != NO_CGROUP:
        # A Go bot may reserve more than its memory limit: the cgroup's limit kills it first.
        attack = dataclasses.replace(
            attack,
            faults=frozenset({T.CRASH}),
            replaced=True,
            evidence=False,
            detail=f"killed at its memory limit of {memory // 2**20} MiB",
            log="",
        )
    result = play_attack(attack, arena, reference, monkeypatch, runtime=runtime)
    if go_memory:  # held within its limit: the cgroup's, else its address space
        log = result.seats[0].log
        held = max(int(size) for size in re.findall(r"holding (\d+) MiB", log)) * 2**20
        if sandbox_status().memory_accounting != NO_CGROUP:
            assert held <= memory, log[-2000:]
        else:
            assert held <= memory + runtimes.RESERVED["go"], log[-2000:]
    if attack.name == "direct_balloon":  # within the JVM's heap size
        log = result.seats[0].log
        allocated = int(re.search(r"after (\d+) MiB", log).group(1)) * 2**20  # type: ignore[union-attr]
        assert allocated <= runtimes.heap_limit("java", memory) * 2**20, log
    if attack.name == "memory_balloon" and not go_memory:
        # Stopped within its memory limit and what its runtime reserves at start (the bound
        # without cgroup v2; docs/sandbox.md, "Memory per runtime"); the JVM within its heap.
        log = result.seats[0].log
        allocated = int(re.search(r"after (\d+) MiB", log).group(1)) * 2**20  # type: ignore[union-attr]
        assert allocated <= memory + runtimes.RESERVED.get(runtime, 0), log
        if runtime == "java":
            assert allocated <= runtimes.heap_limit("java", memory) * 2**20, log


def play_attack(
    attack: Attack,
    arena: Path,
    reference: TableResult,
    monkeypatch: pytest.MonkeyPatch,
    runtime: str = "python3",
) -> TableResult:
    secret = "judge-secret-" + os.urandom(8).hex()
    monkeypatch.setenv("SECRET_KEY", secret)
    monkeypatch.setenv("DATABASE_URL", f"postgres://tapis:{secret}@127.0.0.1:5432/tapis")
    # the worker's build cache keeps the shared builds; each table's builds go with the arena
    worker_cache = runtimes.build_cache()
    monkeypatch.setenv("TAPIS_BUILD_CACHE", str(arena / "builds"))
    with Outside(arena) as outside:
        bots = seat_bots(attack, arena, outside.params(attack.name), runtime, worker_cache)
        result = table(bots, arena / "work", LIMITS)
        with pytest.raises(BlockingIOError):
            outside.listener.accept()

    # The attacking seats: recorded (an attack that got through first, in any seat).
    for seat in attack.seats:
        log = result.seats[seat].log
        assert "SUCCEEDED" not in log, log[-2000:]
    for seat in attack.seats:
        log = result.seats[seat].log
        assert f"ATTACK {attack.name} ERROR" not in log, log[-2000:]
        if attack.evidence:
            assert f"ATTACK {attack.name} blocked" in log, log[-2000:]
        assert attack.log in log, log[-2000:]
    kinds = {fault.kind for fault in result.faults}
    assert {fault.seat for fault in result.faults} <= set(attack.seats), result.faults
    if attack.faults:
        assert kinds, "the attack should have been recorded as a fault"
        assert result.faults[0].kind in attack.faults, result.faults
        assert attack.detail in result.faults[0].detail
    else:
        assert result.faults == ()
    for seat in attack.seats:
        if attack.replaced is not None:
            assert result.seats[seat].replaced is attack.replaced, result.seats[seat]

    # The other seats: unaffected.
    for seat in set(range(4)) - set(attack.seats):
        other = result.seats[seat]
        assert other.faults == ()
        assert not other.replaced
        assert other.decisions == reference.seats[seat].decisions
    if not attack.faults:  # the attacker played on, as the well-behaved bot would
        assert result.deal_points == reference.deal_points

    # Outside: no secret in the result, no mark on the host, no survivor.
    assert secret not in json.dumps(result.as_json())
    assert list(outside.dropbox.iterdir()) == []
    assert not outside.host_tmp_marker.exists()
    assert processes_named(outside.process_name) == []
    return result


@pytest.mark.parametrize("runtime", ["python3", "c"])
def test_collude_pagecache(runtime: str, arena: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two tables one after the other on this machine (a duplicate round's): the first one's
    bot reads the pages of its bits of a rarely read file, loading them into the page cache;
    the second one's reads every page and tells the cached ones by their major faults. The
    file is out of the page cache before (as a rarely read file is). Blocked: a C bot's sandbox
    has no Python library, and every page a bot can open is cached before it starts."""
    monkeypatch.setenv("TAPIS_BUILD_CACHE", str(arena / "builds"))
    logs = []
    with Outside(arena) as outside:
        for role in ("write", "read"):
            folder = arena / role
            folder.mkdir(mode=0o711)
            params = {**outside.params("collude_pagecache"), "role": role}
            if runtime == "python3":
                attacker = package(folder / "seat0", BOTS / "collude_pagecache.py", params)
            else:
                attacker = native_package(folder / "seat0", runtime, params)
            victims = [
                package(folder / f"seat{seat}", VICTIM_BOT.format(secret=seat))
                for seat in (1, 2, 3)
            ]
            if role == "write":
                evict(rare_file())
            result = table([str(attacker), *map(str, victims)], folder / "work")
            assert result.faults == (), result.faults
            logs.append(result.seats[0].log)
    written, read = logs
    assert "ATTACK collude_pagecache blocked" in written, written[-2000:]
    assert "ATTACK collude_pagecache ERROR" not in written + read, (written + read)[-2000:]
    assert "SUCCEEDED" not in read, read[-2000:]
    assert "ATTACK collude_pagecache blocked" in read, read[-2000:]
    if runtime == "python3":  # every page cached before its table: no bit
        assert f"read {[1] * 16}" in read, read[-2000:]


def evict(path: Path) -> None:
    """Drop the pages of ``path`` from the page cache (those no process maps)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


@pytest.mark.parametrize("name", ["daemon", "net_listener"])
def test_the_outside_checks_see_an_unsandboxed_attack(name: str, arena: Path) -> None:
    """Control: without the sandbox the same checks catch the attack (they can fail)."""
    attack = next(a for a in ATTACKS if a.name == name)
    with Outside(arena) as outside:
        bots = seat_bots(attack, arena, outside.params(name))
        try:
            run_table(
                game=GAME,
                preset=PRESET,
                bots=bots,
                deals=1,
                seed=SEED,
                limits=LIMITS,
                sandbox="none",
            )
            if name == "daemon":
                deadline = time.monotonic() + 10
                while not outside.host_tmp_marker.exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert processes_named(outside.process_name) != []
                assert outside.host_tmp_marker.exists()
                assert list(outside.dropbox.iterdir()) != []
            else:
                connection, _ = outside.listener.accept()
                connection.close()
        finally:
            for pid in processes_named(outside.process_name):
                os.kill(pid, signal.SIGKILL)


def test_flood_stderr_keeps_a_capped_log(arena: Path) -> None:
    params: dict[str, object] = {"name": "flood_stderr", "token": "x"}
    bots = [str(package(arena / "seat0", BOTS / "flood_stderr.py", params))]
    bots += [str(package(arena / f"seat{i}", VICTIM_BOT.format(secret=i))) for i in (1, 2, 3)]
    result = table(bots, arena / "work")
    log = result.seats[0].log
    assert len(log.encode()) <= LIMITS.log_bytes + 200
    assert "log cut" in log


def test_there_are_at_least_25_attacks() -> None:
    files = {p.stem for p in BOTS.glob("*.py") if not p.name.startswith("_")}
    assert files == {attack.name for attack in ATTACKS} | {"collude_pagecache"}  # 2 tables
    assert len(ATTACKS) >= 25
