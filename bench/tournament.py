"""Benchmark: a whole tournament end to end, played by Celery workers.

A 16-entry, 4-round whisthub Hearts tournament of 8 deals per table (4 tables a round, 128
deals), every entry a sandboxed bot (the SDK's first- or last-legal bot), played by real
Celery worker processes on Redis, recorded in PostgreSQL: every deal, trick and decision is
written. The clock runs from ``tournament_start`` to the tournament's ``finished`` status.
Between two timed tournaments the benchmark waits for the audit that a finished tournament
queues on the workers (tournaments.tasks.tournament_audit_store), which could otherwise run
during the next.

Run from the repository root, with PostgreSQL and Redis up::

    .venv/bin/python bench/tournament.py
    .venv/bin/python bench/tournament.py --workers 2 --entries 16 --rounds 4 --deals 8

``DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/tapis``) names the server:
the benchmark makes a database of its own there and drops it at the end. ``CELERY_BROKER_URL``
(default ``redis://127.0.0.1:6379/1``) is the broker; the benchmark uses a queue of its own.
It prints figures and asserts nothing (goal: at least 100 deals/s).

The workers run as in production: bots forked from zygotes (``TAPIS_BOT_ZYGOTES``, on by
default; ``--no-zygotes`` starts a sandbox and a Python for every seat of every table instead),
the engine compiled when ``make compile`` built it (``games.ENGINE``). The warm-up tournament
(the same 16 bot versions, one round of one deal) warms the workers (imports, the compiled SDK).
It no longer warms their zygotes: a zygote serves one version of one entry (docs/sandbox.md), so
each timed tournament starts its entries' zygotes in its first tables, as a real one does.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RUN_ID = f"bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
os.environ.setdefault("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/tapis")
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/1")
os.environ["CELERY_TASK_DEFAULT_QUEUE"] = f"tapis-{RUN_ID}"
os.environ["CELERY_CONTROL_EXCHANGE"] = f"tapis-{RUN_ID}"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

BOTS = {
    "first_legal.py": """\
from tapis_bot import Bot, run


class FirstLegal(Bot):
    name = "first-legal"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(FirstLegal())
""",
    "last_legal.py": """\
from tapis_bot import Bot, run


class LastLegal(Bot):
    name = "last-legal"

    def act(self, observation, legal_actions):
        return legal_actions[-1]


run(LastLegal())
""",
}


def database_url(settings_dict: dict[str, Any]) -> str:
    from urllib.parse import quote

    user = quote(str(settings_dict.get("USER") or ""), safe="")
    password = quote(str(settings_dict.get("PASSWORD") or ""), safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgresql://{auth}{settings_dict.get('HOST') or ''}{port}/{settings_dict['NAME']}"


def start_workers(count: int, concurrency: int, log_dir: Path) -> list[subprocess.Popen[bytes]]:
    from django.db import connection

    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "PYTHONUNBUFFERED": "1",
    }
    workers = []
    for i in range(count):
        log = (log_dir / f"worker{i}.log").open("wb")
        command = [sys.executable, "-m", "celery", "-A", "config", "worker"]
        command += ["--loglevel", "WARNING", "--hostname", f"{RUN_ID}-{i}@%h"]
        command += ["--concurrency", str(concurrency), "--without-gossip", "--without-mingle"]
        workers.append(
            subprocess.Popen(
                command,
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    return workers


def wait_for_workers(count: int, timeout: float = 60.0) -> None:
    from config.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=0.5)) >= count:
            return
    raise SystemExit(f"the workers did not answer in {timeout:g} s")


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    import signal

    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def _tree_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of a process tree: (the processes themselves: the workers and their pool
    processes, which run the judge and the recording; the children they waited for: the
    sandboxed bots)."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    own = (int(fields[11]) + int(fields[12])) / ticks
    waited = (int(fields[13]) + int(fields[14])) / ticks
    for task in Path("/proc").glob("[0-9]*/stat"):
        try:
            child = task.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(child[1]) == pid:
            child_own, child_waited = _tree_cpu(int(task.parent.name))
            own, waited = own + child_own, waited + child_waited
    return own, waited


def workers_cpu(workers: list[subprocess.Popen[bytes]]) -> tuple[float, float]:
    own = waited = 0.0
    for worker in workers:
        a, b = _tree_cpu(worker.pid)
        own, waited = own + a, waited + b
    return own, waited


def host_cpu() -> float:
    """CPU seconds the whole host has spent busy (every process, the kernel included), from
    /proc/stat: with the workers' own figures, what the rest costs (PostgreSQL, Redis, the
    kernel's side of the sandboxes, whatever else runs)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    ticks = [int(field) for field in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def database_cpu() -> float:
    """CPU seconds of the PostgreSQL backends serving the benchmark's database (its workers'
    and its own connections) that are alive now, read from /proc: 0 when the server runs on
    another host. A backend that exits between two readings takes its time with it (the
    workers keep their connections for the whole run)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
            "pg_backend_pid()"
        )
        pids = [row[0] for row in cursor.fetchall()]
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def make_tournament(entries: int, rounds: int, deals: int, name: str) -> Any:
    import hashlib

    from django.contrib.auth import get_user_model

    from tournaments import services
    from tournaments.models import Bot, BotVersion
    from tournaments.tournament_settings import TournamentSettings

    users = get_user_model()
    organiser, _ = users.objects.get_or_create(username="bench-organiser")
    settings = TournamentSettings(
        name=name, game="hearts", preset="whisthub", rounds=rounds, deals_per_table=deals
    )
    tournament = services.tournament_create(organiser=organiser, settings=settings)
    services.tournament_open(tournament=tournament)
    files = sorted(BOTS)
    for i in range(entries):
        user, _ = users.objects.get_or_create(username=f"bench-author-{i}")
        bot, _ = Bot.objects.get_or_create(owner=user, name=f"bench-{i}", game="hearts")
        filename = files[i % len(files)]
        data = BOTS[filename].encode()
        version = bot.versions.filter(status=BotVersion.Status.READY).first()
        if version is None:
            # Ready at once: the validation is not what this benchmark measures.
            version = BotVersion.objects.create(
                bot=bot,
                number=1,
                content=data,
                filename=filename,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
                status=BotVersion.Status.READY,
                report={"ok": True, "bench": True},
            )
        services.entry_register(tournament=tournament, version=version, user=user)
    return tournament


def play(tournament: Any, timeout: float) -> float:
    from tournaments import services
    from tournaments.models import Tournament

    began = time.perf_counter()
    services.tournament_start(tournament=tournament)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Tournament.objects.values_list("status", flat=True).get(pk=tournament.pk)
        if status == Tournament.Status.FINISHED:
            return time.perf_counter() - began
        time.sleep(0.01)
    raise SystemExit(f"the tournament did not finish in {timeout:g} s")


def wait_for_audit(tournament: Any, timeout: float) -> float:
    """Wait until the workers have stored the audit that a finished tournament queues
    (services.tournament_audit_store): seconds waited. Else it would run on a worker during the
    next timed tournament, which would pay for this one's audit."""
    from tournaments.models import TournamentSummary

    began = time.perf_counter()
    deadline = time.monotonic() + timeout
    summaries = TournamentSummary.objects.filter(tournament=tournament, audit__isnull=False)
    while time.monotonic() < deadline:
        if summaries.exists():
            return time.perf_counter() - began
        time.sleep(0.02)
    raise SystemExit(f"the workers stored no audit of {tournament} in {timeout:g} s")


def report(tournament: Any, elapsed: float) -> None:
    from tournaments import services
    from tournaments.models import Deal, Decision, Fault, Table, Trick

    tables = list(Table.objects.filter(tournament=tournament).order_by("round__number", "number"))
    deals = Deal.objects.filter(table__tournament=tournament).count()
    tricks = Trick.objects.filter(deal__table__tournament=tournament).count()
    decisions = Decision.objects.filter(deal__table__tournament=tournament).count()
    faults = Fault.objects.filter(table__tournament=tournament).count()
    judge = [float((t.result or {}).get("elapsed", 0.0)) for t in tables]
    wall = [
        (t.finished_at - t.started_at).total_seconds()
        for t in tables
        if t.finished_at and t.started_at
    ]
    recording = [w - j for w, j in zip(wall, judge, strict=True)]
    print(
        f"  {len(tables)} tables, {deals} deals, {tricks} tricks, {decisions} decisions, "
        f"{faults} faults written"
    )
    print(
        f"  end to end {elapsed:.2f} s: {deals / elapsed:.1f} deals/s, "
        f"{decisions / elapsed:.0f} decisions/s"
    )
    print(
        f"  per table: judge {statistics.mean(judge):.3f} s (sandboxes started, 8 deals played), "
        f"claim+record {statistics.mean(recording) * 1000:.0f} ms "
        f"(max {max(recording) * 1000:.0f} ms)"
    )
    audit = services.tournament_audit(tournament=tournament)
    print(f"  audit: {'ok' if audit.ok else 'FAILED'} ({audit.deals} deals replayed)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--deals", type=int, default=8, help="deals per table")
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--runs", type=int, default=3, help="tournaments to time")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--no-zygotes",
        action="store_true",
        help="start every bot alone in its sandbox, without the workers' zygotes",
    )
    parser.add_argument(
        "--sandbox",
        choices=["bwrap", "none"],
        default="bwrap",
        help="none: bots without the sandbox, to see what it costs (not the benchmark)",
    )
    args = parser.parse_args()
    os.environ["TAPIS_SANDBOX"] = args.sandbox
    os.environ["TAPIS_BOT_ZYGOTES"] = "0" if args.no_zygotes else "1"
    if args.sandbox == "none":
        os.environ["TAPIS_ALLOW_UNSANDBOXED"] = "1"

    import django

    django.setup()
    from django.db import connection

    import games
    from judge.sandbox import sandbox_status
    from tournaments import conf

    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"tapis_{RUN_ID.replace('-', '_')}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="tapis-bench-") as tmp:
            # One Celery worker per process asked for, each with one pool process: the
            # processes are independent, as they would be on separate machines.
            workers = start_workers(args.workers, 1, Path(tmp))
            wait_for_workers(args.workers)
            load = os.getloadavg()[0]
            status = sandbox_status()
            print(
                f"tournament: hearts/whisthub, {args.entries} entries, {args.rounds} rounds, "
                f"{args.deals} deals per table; {args.workers} worker processes; "
                f"sandbox {conf.sandbox_mode()} ({status.bwrap}, seccomp "
                f"{status.seccomp_instructions} instructions), "
                f"zygotes {'on' if conf.bot_zygotes() else 'off'}; engine {games.ENGINE}"
            )
            print(
                f"host: {os.cpu_count()} cores, load {load:.2f}, database {old_name} (bench copy)"
            )
            warm = make_tournament(args.entries, 1, 1, "bench warm-up")
            play(warm, args.timeout)
            wait_for_audit(warm, args.timeout)
            rates = []
            for run in range(1, args.runs + 1):
                tournament = make_tournament(
                    args.entries, args.rounds, args.deals, f"bench run {run}"
                )
                own_before, bots_before = workers_cpu(workers)
                database_before, bench_before = database_cpu(), time.process_time()
                host_before = host_cpu()
                elapsed = play(tournament, args.timeout)
                host_busy = host_cpu() - host_before
                bench_busy = time.process_time() - bench_before
                database_busy = database_cpu() - database_before
                own_after, bots_after = workers_cpu(workers)
                judge_cpu, bots_cpu = own_after - own_before, bots_after - bots_before
                cpu = judge_cpu + bots_cpu
                print(f"run {run}:")
                audited = wait_for_audit(tournament, args.timeout)
                report(tournament, elapsed)
                print(f"  the workers' audit of it stored {audited:.2f} s after it finished")
                deals = tournament.tables.count() * args.deals
                cores = os.cpu_count() or 1
                print(
                    f"  CPU: workers (judge, engine, recording) {judge_cpu:.2f} s + sandboxed "
                    f"bots {bots_cpu:.2f} s = {cpu / deals * 1000:.1f} ms per deal: "
                    f"{cores} cores could do at most {cores * deals / cpu:.0f} deals/s"
                )
                print(
                    f"  CPU besides: PostgreSQL (the workers' backends) {database_busy:.2f} s, "
                    f"the benchmark's polling {bench_busy:.2f} s; all three "
                    f"{(cpu + database_busy + bench_busy) / deals * 1000:.1f} ms per deal"
                )
                print(
                    f"  host: {host_busy:.2f} s busy of {cores * elapsed:.2f} s "
                    f"({host_busy / (cores * elapsed):.0%}); besides the workers, bots, "
                    f"PostgreSQL and the benchmark "
                    f"{max(0.0, host_busy - cpu - database_busy - bench_busy):.2f} s (Redis, "
                    "the kernel's work for the sandboxes, other jobs)"
                )
                rates.append(tournament.tables.count() * args.deals / elapsed)
            print(
                f"deals/s over {args.runs} runs: median {statistics.median(rates):.1f}, "
                f"best {max(rates):.1f} (goal >= 100)"
            )
    finally:
        stop_workers(workers)
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
