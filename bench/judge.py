"""Benchmarks of the judge: what the sandbox costs, and how fast a sandboxed table plays.

Run from the repository root::

    .venv/bin/python bench/judge.py            # all three
    .venv/bin/python bench/judge.py --quick    # fewer repetitions

It prints figures; it asserts nothing (see DESIGN.md: benchmarks live in bench/).

1. Decision round trip: the judge writes one ``act``-sized JSON line to a trivial bot that
   answers one line, and waits for the answer; the same bot on a bare pipe
   (``python3 -S`` started by ``subprocess``) against under the sandbox (``spawn_bot``).
   Measured with the judge and the bot free to run on any core, then with both pinned to one
   core (the cost of a wake-up across cores dominates a round trip). Goal: sandbox within 10%.
   "bare+setsid" is the bare bot in a session of its own, as ``bwrap --new-session`` put the
   sandboxed bot until session 5: with the scheduler's autogroups on
   (``kernel.sched_autogroup_enabled``), a session is a scheduling group, and a wake-up across
   groups costs more than the sandbox (docs/sandbox.md, "Cost").
2. Start-up: from starting the process to reading the bot's first line, for a bare
   ``python3 -S`` and under the sandbox; plus what ``kill()`` takes. Goal: within +10 ms.
3. A whisthub Hearts table of 4 sandboxed trivial bots (the SDK's first-legal bot) through
   ``judge.run_table``: deals per second. Goal: at least 150.
4. A Dutch round (``classic``, 4 seats) of the same bots: first-legal bots never call Dutch, so
   the round runs to its turn cap, the longest history there is. Seconds per round, the
   judge's round trip, and the bytes of the ``act`` messages: as sent (the append-only lists
   as deltas, docs/protocol.md) against whole observations, recomputed from the replay log.
   The Hearts table's bytes are shown too.
6. CPU (``--cpu``, or ``--only-cpu``; docs/sandbox.md, "CPU"): what the judge adds to each
   decision to keep bots from starving each other: the echo bot's round trip in the sandbox,
   pinned to one core, bare, with a thaw before and a freeze after each, with two CPU readings
   (the charge's start and end: run_delay of each thread, cpuacct), and with both, as the
   runner does; then the whisthub table of (3) pinned to one core with the host's cgroups and
   with ``TAPIS_SANDBOX_CGROUP=none`` (no cgroup at all: the wall clock, no freezing).
5. Runtimes (``--runtimes``, or ``--only-runtimes``): for the example bot of each runtime
   (docs/examples/), the build's time in the sandbox (no cache), the cold start-up in the
   sandbox (process start to the answer to ``hello``), the decision round trip in the sandbox
   against a bare pipe (the example bots are trusted code), and the deals per second of a
   whisthub table of four of them pinned to one core. Goals: C, C++, Rust and Go at least as
   fast per table as Python; no start-up over 500 ms; the sandbox within 10% of a bare pipe.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from judge.sandbox import BotProcess, sandbox_status, spawn_bot  # noqa: E402

PYTHON = "/usr/bin/python3"

ECHO_BOT = """\
import sys
out = sys.stdout.buffer
out.write(b'{"type": "ready"}\\n')
out.flush()
for line in sys.stdin.buffer:
    out.write(b'{"id": 1, "action": "2C"}\\n')
    out.flush()
"""

# The least a bot that follows the protocol does: parse the request, answer its id.
JSON_BOT = """\
import json, sys
out = sys.stdout.buffer
out.write(b'{"type": "ready"}\\n')
out.flush()
for line in sys.stdin.buffer:
    request = json.loads(line)
    out.write(json.dumps({"id": request["id"], "action": request["legal"][0]}).encode() + b"\\n")
    out.flush()
"""

TABLE_BOT = """\
from tapis_bot import Bot, run


class First(Bot):
    name = "first"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
"""

# About the size of a Hearts ``act`` request.
REQUEST = (
    json.dumps(
        {
            "type": "act",
            "id": 17,
            "deal": 3,
            "observation": {
                "seat": 2,
                "hand": ["2C", "7C", "QC", "3D", "9D", "KD", "5H", "JH", "AH", "4S", "TS", "KS"],
                "trick": [{"seat": 0, "card": "8C"}, {"seat": 1, "card": "AC"}],
                "points": [0, 0, 0, 0],
                "hearts_broken": False,
            },
            "legal": ["2C", "7C", "QC"],
            "bank": 19.87,
        }
    ).encode()
    + b"\n"
)


class Pipe:
    """A started bot: its pipes, and how to stop it."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, stop: Callable[[], None]) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.stop = stop
        self.pending = b""

    def read_line(self) -> bytes:
        while b"\n" not in self.pending:
            chunk = os.read(self.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the bot closed its stdout")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line


def start_bare(bot_dir: Path, *, new_session: bool = False) -> Pipe:
    popen = subprocess.Popen(
        [PYTHON, "-S", str(bot_dir / "main.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        cwd=bot_dir,
        start_new_session=new_session,
    )
    assert popen.stdin is not None
    assert popen.stdout is not None

    def stop() -> None:
        popen.kill()
        popen.wait()
        popen.stdin.close()  # type: ignore[union-attr]
        popen.stdout.close()  # type: ignore[union-attr]

    return Pipe(popen.stdin, popen.stdout, stop)  # type: ignore[arg-type]


def start_sandboxed(bot_dir: Path) -> Pipe:
    process: BotProcess = spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot_dir)
    return Pipe(process.stdin, process.stdout, process.kill)


@contextmanager
def bot_directory(source: str) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="tapis-bench-"))
    try:
        root.chmod(0o755)
        (root / "main.py").write_text(source)
        (root / "main.py").chmod(0o644)
        yield root
    finally:
        shutil.rmtree(root)


@contextmanager
def pinned(cpus: set[int] | None) -> Iterator[None]:
    """Run the judge (and the bots it starts, which inherit it) on ``cpus``."""
    before = os.sched_getaffinity(0)
    if cpus is not None:
        os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def round_trips(pipe: Pipe, count: int) -> float:
    """Mean seconds per round trip over ``count`` round trips."""
    write = pipe.stdin.write
    started = time.perf_counter()
    for _ in range(count):
        write(REQUEST)
        pipe.read_line()
    return (time.perf_counter() - started) / count


def bench_round_trip(bot_dir: Path, count: int, batches: int, cpus: set[int] | None) -> None:
    starters: dict[str, Callable[[Path], Pipe]] = {
        "bare": start_bare,
        "bare+setsid": lambda path: start_bare(path, new_session=True),
        "sandbox": start_sandboxed,
    }
    results: dict[str, list[float]] = {name: [] for name in starters}
    with pinned(cpus):
        pipes = {name: start(bot_dir) for name, start in starters.items()}
        try:
            for pipe in pipes.values():
                pipe.read_line()  # ready
                round_trips(pipe, count // 10)  # warm up
            for _ in range(batches):  # interleaved, so that drift hits all alike
                for name, pipe in pipes.items():
                    results[name].append(round_trips(pipe, count))
        finally:
            for pipe in pipes.values():
                pipe.stop()
    # The best batch of each: the least disturbed by whatever else runs on the machine
    # (as timeit does); the medians follow in brackets.
    best = {name: min(times) for name, times in results.items()}
    median = {name: statistics.median(times) for name, times in results.items()}
    where = "one core" if cpus is not None else "any core"
    figures = "   ".join(
        f"{name} {best[name] * 1e6:6.2f} us ({median[name] * 1e6:.2f})" for name in best
    )
    print(f"  {where:9} {figures}   sandbox/bare {best['sandbox'] / best['bare']:5.3f}", end="")
    print(f"   sandbox/(bare+setsid) {best['sandbox'] / best['bare+setsid']:5.3f}")


def bench_startup(bot_dir: Path, count: int) -> None:
    times: dict[str, list[float]] = {"bare": [], "sandbox": [], "spawn": [], "kill": []}
    for _ in range(count):
        started = time.perf_counter()
        pipe = start_bare(bot_dir)
        pipe.read_line()
        times["bare"].append(time.perf_counter() - started)
        pipe.stop()

        started = time.perf_counter()
        process = spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot_dir)
        spawned = time.perf_counter()
        pipe = Pipe(process.stdin, process.stdout, process.kill)
        pipe.read_line()
        ready = time.perf_counter()
        process.kill()
        times["sandbox"].append(ready - started)
        times["spawn"].append(spawned - started)
        times["kill"].append(time.perf_counter() - ready)
    bare = statistics.median(times["bare"])
    boxed = statistics.median(times["sandbox"])
    print(f"  bare python3 -S   {bare * 1e3:6.2f} ms  (start to first line, median of {count})")
    print(f"  sandboxed         {boxed * 1e3:6.2f} ms  (+{(boxed - bare) * 1e3:.2f} ms)")
    print(f"    spawn_bot()     {statistics.median(times['spawn']) * 1e3:6.2f} ms  (returns)")
    print(f"    kill()          {statistics.median(times['kill']) * 1e3:6.2f} ms")


def bench_table(bot_dir: Path, deals: int) -> None:
    """Part (3), owned by the judge's runner: a whole sandboxed table through run_table,
    free on any core and then pinned to one core (``run_table(cpu="auto")``)."""
    try:
        import resource

        from judge import run_table
    except ImportError as exc:
        print(f"  skipped: judge.run_table is not available ({exc})")
        return
    (bot_dir / "main.py").write_text(TABLE_BOT)
    bot = str(bot_dir / "main.py")
    for label, cpu in (("any core", None), ("one core", "auto")):
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        result = run_table(
            game="hearts",
            preset="whisthub",
            bots=[bot] * 4,
            deals=deals,
            seed=1,
            sandbox="bwrap",
            cpu=cpu,  # type: ignore[arg-type]
        )
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        judge_cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        played = len(result.deal_points)
        decisions = sum(seat.decisions for seat in result.seats)
        mean = statistics.fmean(seat.mean_time for seat in result.seats)
        p99 = max(seat.p99_time for seat in result.seats)
        print(
            f"  {label:9}  {played} deals in {elapsed:.2f} s: {played / elapsed:6.1f} deals/s "
            f"(4 sandboxes started and stopped; {len(result.faults)} faults)"
        )
        print(
            f"             {decisions} decisions: {elapsed / decisions * 1e6:.1f} us each overall, "
            f"judge CPU {judge_cpu / decisions * 1e6:.1f} us; bot round trip as the judge "
            f"measures it: mean {mean * 1e6:.1f} us, p99 {p99 * 1e6:.1f} us"
        )
    acts, sent, whole, _ = act_bytes(result.log)
    print(
        f"  act messages: {sent / played / 1e3:.1f} KB per deal as sent, "
        f"{whole / played / 1e3:.1f} KB with whole observations ({acts} acts)"
    )


def bench_cpu(bot_dir: Path, count: int, batches: int, deals: int) -> None:
    """Part (6): the cost of freezing and of the CPU readings per decision, and per table."""
    from judge.clock import Stopwatch
    from judge.sandbox.cgroups import CGROUP_ENV

    with pinned({min(os.sched_getaffinity(0))}):
        process = spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot_dir)
        pipe = Pipe(process.stdin, process.stdout, process.kill)
        # At a table the other bots are frozen meanwhile: with none frozen anywhere, the
        # kernel would switch its freezer code on and off (a static key) at each freeze.
        other = spawn_bot(["python3", "-S", "/bot/main.py"], bot_dir=bot_dir)
        other.freeze()
        write = pipe.stdin.write

        def bare() -> None:
            write(REQUEST)
            pipe.read_line()

        def frozen() -> None:
            process.thaw()
            bare()
            process.freeze()

        def read() -> None:
            watch = Stopwatch(process.cpu_reading)
            bare()
            watch.charged()

        def both() -> None:
            watch = Stopwatch(process.cpu_reading)
            process.thaw()
            bare()
            watch.charged()
            process.freeze()

        ways: dict[str, Callable[[], None]] = {
            "bare": bare,
            "thaw+freeze": frozen,
            "2 readings": read,
            "both": both,
        }
        results: dict[str, list[float]] = {name: [] for name in ways}
        try:
            pipe.read_line()  # ready
            if process.cpu_reading() is None:
                print("  no CPU cgroups on this host: nothing to measure")
                return
            for _ in range(batches):
                for name, way in ways.items():
                    process.thaw()  # a way without thaws needs the bot running
                    started = time.perf_counter()
                    for _ in range(count):
                        way()
                    results[name].append((time.perf_counter() - started) / count)
        finally:
            process.thaw()
            pipe.stop()
            other.kill()
    best = {name: min(times) for name, times in results.items()}
    for name, time_ in best.items():
        extra = time_ - best["bare"]
        median = statistics.median(results[name])
        print(f"  {name:12} {time_ * 1e6:7.2f} us ({median * 1e6:.2f})  +{extra * 1e6:.2f} us")
    if deals <= 0:
        return
    (bot_dir / "main.py").write_text(TABLE_BOT)
    from judge import run_table

    for label, setting in (("cgroups", None), ("no cgroup", "none")):
        saved = os.environ.get(CGROUP_ENV)
        if setting is not None:
            os.environ[CGROUP_ENV] = setting
        try:
            started = time.perf_counter()
            result = run_table(
                game="hearts",
                preset="whisthub",
                bots=[str(bot_dir / "main.py")] * 4,
                deals=deals,
                seed=1,
                cpu="auto",
            )
            elapsed = time.perf_counter() - started
        finally:
            if saved is None:
                os.environ.pop(CGROUP_ENV, None)
            else:
                os.environ[CGROUP_ENV] = saved
        played = len(result.deal_points)
        mean = statistics.fmean(seat.mean_time for seat in result.seats)
        print(
            f"  table, {label:9}  {played / elapsed:6.1f} deals/s, decision as charged: "
            f"mean {mean * 1e6:.1f} us ({len(result.faults)} faults)"
        )


def act_bytes(log: dict[str, Any]) -> tuple[int, int, int, int]:
    """(acts, bytes as sent, bytes with whole observations, the longest whole ``act``) of
    every ``act`` of a table, recomputed from its replay log."""
    import games
    from judge.protocol import ObservationDeltas, act_line

    game = games.load(log["game"], log["preset"], **log["options"])
    deltas = [ObservationDeltas() for _ in range(game.players)]
    acts = sent = whole = longest = 0
    for entry in log["deals"]:
        state = game.deal_from_record(entry["index"], entry["deal"])
        for seat, action in entry["actions"]:
            observation = state.observation(seat)
            legal = state.legal_actions()
            acts += 1
            size = len(act_line(acts, entry["index"], observation, legal, 20.0))
            whole += size
            longest = max(longest, size)
            wire = deltas[seat].wire(entry["index"], observation)
            sent += len(act_line(acts, entry["index"], wire, legal, 20.0))
            state.apply_action(action)
    return acts, sent, whole, longest


def bench_dutch(bot_dir: Path, rounds: int) -> None:
    """Part (4): whole Dutch rounds of 4 sandboxed first-legal SDK bots, pinned to one core."""
    from judge import run_table

    (bot_dir / "main.py").write_text(TABLE_BOT)
    bot = str(bot_dir / "main.py")
    times: list[float] = []
    for seed in range(1, rounds + 1):
        started = time.perf_counter()
        result = run_table(
            game="dutch", bots=[bot] * 4, deals=1, seed=seed, sandbox="bwrap", cpu="auto"
        )
        times.append(time.perf_counter() - started)
        decisions = sum(seat.decisions for seat in result.seats)
        mean = statistics.fmean(seat.mean_time for seat in result.seats)
        acts, sent, whole, longest = act_bytes(result.log)
        print(
            f"  seed {seed}: {decisions} decisions in {times[-1]:.3f} s "
            f"({len(result.faults)} faults), round trip mean {mean * 1e6:.0f} us; "
            f"act messages {sent / 1e6:.2f} MB as sent, {whole / 1e6:.2f} MB whole "
            f"(per act: mean {sent // acts} B against {whole // acts} B, "
            f"longest whole {longest / 1e3:.0f} KB)"
        )
    print(f"  median {statistics.median(times):.3f} s per round (4 sandboxes included)")


def _autogroup() -> str:
    try:
        return Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip()
    except OSError:
        return "n/a"


EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
EXAMPLE_SOURCES = {
    "python3": "python/bot.py",
    "c": "c/bot.c",
    "cpp": "cpp/bot.cpp",
    "rust": "rust",
    "go": "go/main.go",
    "java": "java/Bot.java",
    "javascript": "javascript/bot.js",
}
HELLO = b'{"type":"hello","protocol":1,"game":"hearts","seat":0,"players":4}\n'
EXAMPLE_ACT = (
    b'{"type":"act","id":1,"deal":0,"observation":{"tricks_start":0,"tricks":[]},'
    b'"legal_actions":["2C","7C","QC"],"bank":20.0}\n'
)


def bench_runtime(runtime: str, deals: int, starts: int, count: int) -> None:
    """Part (5), one runtime: build, start-up, round trip (sandbox and bare), a table."""

    from judge import run_table
    from judge.launchers import runtimes
    from judge.launchers.package import prepare, remove
    from judge.sandbox import SandboxLimits

    work = Path(tempfile.mkdtemp(prefix="tapis-bench-rt-"))
    work.chmod(0o711)
    source = EXAMPLES / EXAMPLE_SOURCES[runtime]
    try:
        prepared = prepare(source, work / "src")
        build = "-"
        bot_dir, limits = prepared.directory, SandboxLimits()
        if runtimes.RUNTIMES[runtime].compiled:
            started = time.perf_counter()
            artifact = runtimes.build(prepared.directory, runtime, prepared.entry, prepared.sources)
            build = f"{time.perf_counter() - started:5.1f} s"
            bot_dir = runtimes.unpack_artifact(artifact.data, work / "artifact")
        limits = runtimes.run_limits(runtime, limits)
        command = prepared.command_for(limits.memory_bytes)
        startups = []
        for _ in range(starts):
            started = time.perf_counter()
            process = spawn_bot(command, bot_dir=bot_dir, limits=limits)
            pipe = Pipe(process.stdin, process.stdout, process.kill)
            pipe.stdin.write(HELLO)
            pipe.read_line()
            startups.append(time.perf_counter() - started)
            process.kill()

        def bare() -> Pipe:
            # the bot's files at their host path instead of /bot (a classpath too)
            host = str(bot_dir)
            argv = [re.sub(r"(^|:)/bot(?=/|$)", rf"\g<1>{host}", arg) for arg in command]
            popen = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
            assert popen.stdin is not None
            assert popen.stdout is not None

            def stop() -> None:
                popen.kill()
                popen.wait()

            return Pipe(popen.stdin, popen.stdout, stop)  # type: ignore[arg-type]

        def boxed() -> Pipe:
            process = spawn_bot(command, bot_dir=bot_dir, limits=limits)
            return Pipe(process.stdin, process.stdout, process.kill)

        trips: dict[str, list[float]] = {"bare": [], "sandbox": []}
        with pinned({min(os.sched_getaffinity(0))}):
            pipes = {"bare": bare(), "sandbox": boxed()}
            try:
                for pipe in pipes.values():
                    pipe.stdin.write(HELLO)
                    pipe.read_line()
                    for _ in range(count // 5):  # warm up (JIT compilers too)
                        pipe.stdin.write(EXAMPLE_ACT)
                        pipe.read_line()
                for _ in range(3):
                    for name, pipe in pipes.items():
                        started = time.perf_counter()
                        for _ in range(count):
                            pipe.stdin.write(EXAMPLE_ACT)
                            pipe.read_line()
                        trips[name].append((time.perf_counter() - started) / count)
            finally:
                for pipe in pipes.values():
                    pipe.stop()
        table = functools.partial(
            run_table,
            game="hearts",
            preset="whisthub",
            bots=[str(source)] * 4,
            seed=1,
            sandbox="bwrap",
            cpu="auto",
        )
        table(deals=1)  # the build into this worker's cache, as a worker has it before a table
        started = time.perf_counter()
        result = table(deals=deals)
        elapsed = time.perf_counter() - started
        bare_trip, box_trip = min(trips["bare"]), min(trips["sandbox"])
        print(
            f"  {runtime:10} build {build:>7}   start-up "
            f"{statistics.median(startups) * 1e3:6.1f} ms"
            f"   round trip bare {bare_trip * 1e6:6.1f} us, sandbox {box_trip * 1e6:6.1f} us"
            f" (x{box_trip / bare_trip:.2f})   table "
            f"{len(result.deal_points) / elapsed:6.1f} deals/s ({len(result.faults)} faults)"
        )
        remove(prepared.directory)
    finally:
        for root, dirs, _ in os.walk(work):
            os.chmod(root, 0o755)
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--deals", type=int, default=None, help="deals of the table (part 3)")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--rounds", type=int, default=None, help="Dutch rounds (part 4)")
    parser.add_argument("--only-dutch", action="store_true", help="part 4 only")
    parser.add_argument("--runtimes", action="store_true", help="part 5 too (builds: minutes)")
    parser.add_argument("--only-runtimes", action="store_true", help="part 5 only")
    parser.add_argument("--cpu", action="store_true", help="part 6 too")
    parser.add_argument("--only-cpu", action="store_true", help="part 6 only")
    args = parser.parse_args()
    status = sandbox_status()
    if status.problems:
        print("sandbox unavailable:", "; ".join(status.problems))
        return 1
    print(
        f"sandbox: {status.bwrap}, seccomp {status.seccomp_instructions} BPF instructions, "
        f"uids {status.uid_range or 'of the judge'}, memory accounting: "
        f"{status.memory_accounting} ({status.cgroup_parent or 'rlimits and runtime flags'}), "
        f"starter: {status.starter}"
    )
    python = sys.version.split()[0]
    print(f"host: {os.cpu_count()} cores, judge on Python {python}, ", end="")
    print(f"load {os.getloadavg()[0]:.2f}, kernel.sched_autogroup_enabled {_autogroup()}")
    count = 2000 if args.quick else 5000
    batches = 3 if args.quick else 9
    if args.only_runtimes or args.only_cpu:
        args.only_dutch = args.skip_table = True
    if not args.only_dutch:
        one_core = {min(os.sched_getaffinity(0))}
        with bot_directory(JSON_BOT) as bot_dir:
            print("(1) decision round trip to a trivial bot that parses the request (json)")
            bench_round_trip(bot_dir, count, batches, None)
            bench_round_trip(bot_dir, count, batches, one_core)
        with bot_directory(ECHO_BOT) as bot_dir:
            print("(1') decision round trip to an echo bot (reads a line, writes a fixed answer)")
            bench_round_trip(bot_dir, count, batches, None)
            bench_round_trip(bot_dir, count, batches, one_core)
            print("(2) start-up")
            bench_startup(bot_dir, 10 if args.quick else 40)
    if not args.skip_table:
        with bot_directory(TABLE_BOT) as bot_dir:
            if not args.only_dutch:
                print("(3) whisthub Hearts table, 4 sandboxed first-legal bots (SDK)")
                bench_table(bot_dir, args.deals or (100 if args.quick else 400))
            print("(4) Dutch rounds, 4 sandboxed first-legal bots (SDK), one core")
            bench_dutch(bot_dir, args.rounds or (2 if args.quick else 5))
    if args.cpu or args.only_cpu:
        print("(6) CPU: freezing and readings per decision (echo bot, sandbox, one core)")
        with bot_directory(ECHO_BOT) as bot_dir:
            bench_cpu(bot_dir, count // 2, batches, args.deals or (50 if args.quick else 200))
    if args.runtimes or args.only_runtimes:
        print("(5) runtimes: the example bots (docs/examples/), tables pinned to one core")
        for runtime in EXAMPLE_SOURCES:
            bench_runtime(runtime, 40 if args.quick else 200, 5 if args.quick else 15, count // 4)
    return 0


if __name__ == "__main__":
    sys.exit(main())
