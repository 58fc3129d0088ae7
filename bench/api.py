"""Benchmark of the REST API: standings and deal replays under 32 concurrent clients.

Run from the repository root (PostgreSQL must be running; ``DATABASE_URL`` names the server,
default ``postgresql://postgres@127.0.0.1:5432/tapis``)::

    .venv/bin/python bench/api.py                 # build tapis_bench once, then measure
    .venv/bin/python bench/api.py --rebuild       # drop and build the database again
    .venv/bin/python bench/api.py --seconds 10 --clients 32 --workers 2 --threads 8
    .venv/bin/python bench/api.py --endpoint replay --throttle --load python

1. The data: a database of its own (``tapis_bench``, never the test or demo one) with about
   100,000 Hearts deals (1.3 million tricks, 5.6 million decisions): 100 finished tournaments
   of 48 bots, 7 rounds of 12 tables, 12 deals a table. Every deal is really played through
   the engine (random legal cards, with the table's seed) and written with PostgreSQL's COPY.
   It is built once and kept (``--rebuild`` starts again).
2. The service: gunicorn (``config.wsgi``, production-like: DEBUG off, the cache in Redis
   (``CACHE_URL``)) on 127.0.0.1, ``--workers`` x ``--threads`` (gthread). Throttling is off
   by default, so that one client address can load it (the output says so); ``--throttle``
   keeps the production rates and spreads the clients over 10,000 addresses (each request
   says one in ``X-Forwarded-For``, which DRF's throttles count by), as many real clients
   behind a proxy would be.
3. The load: ``--clients`` concurrent clients, each on its own keep-alive connection, each
   sending its next request as soon as its last answer is in, for ``--seconds`` per endpoint
   (after a warm-up): the standings of a random tournament, then the replay of a random deal
   (20,000 deals drawn from 100,000: mostly cold). It prints p50, p95 and p99 latency (from
   sending a request to its last byte) and the throughput. Goals: standings p95 <= 50 ms,
   replay p95 <= 30 ms.

   The clients are ``wrk`` when it is installed (``--load wrk``: one C thread, a Lua script
   picking the random paths; its p50/p95/p99 come from its histogram), else asyncio clients
   in this process (``--load python``). Both are the same closed-loop keep-alive clients on
   the same paths: wrk only costs the machine, which the service shares, less CPU than Python.
4. Where the CPU went, per request: the gunicorn workers', the PostgreSQL backends' serving
   them (both read from /proc, sampled every 0.2 s) and the load generator's; and how busy
   the whole machine was, and how much of that was other processes (on a shared machine,
   figures taken while others run are not the service's alone).

It asserts nothing: benchmarks live in bench/ and print figures (DESIGN.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import importlib
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BENCH_DB = "tapis_bench"
ENTRIES, ROUNDS, TABLES, SEATS, DEALS = 48, 7, 12, 4, 12  # per tournament
BOTS = 240
DEALS_PER_TOURNAMENT = ROUNDS * TABLES * DEALS


# ---------------------------------------------------------------------------------------------
# The database
# ---------------------------------------------------------------------------------------------


def bench_url(server_url: str, name: str = BENCH_DB) -> str:
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, ""))


def ensure_database(url: str, *, rebuild: bool) -> None:
    import psycopg

    admin = bench_url(url, "postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone()
        if exists and rebuild:
            conn.execute(f"DROP DATABASE {BENCH_DB} WITH (FORCE)")
            exists = None
        if not exists:
            conn.execute(f"CREATE DATABASE {BENCH_DB}")


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


class Copier:
    """Rows of one model (every concrete column, defaults filled in), written with COPY.

    One COPY at a time per connection: rows wait in memory until :meth:`flush`."""

    def __init__(self, model: Any) -> None:
        from django.db.models import JSONField

        self.fields = list(model._meta.concrete_fields)
        self.json = {f.attname for f in self.fields if isinstance(f, JSONField)}
        columns = ", ".join(f'"{f.column}"' for f in self.fields)
        self.statement = f'COPY "{model._meta.db_table}" ({columns}) FROM STDIN'
        self.pending: list[list[Any]] = []

    def write(self, **values: Any) -> None:
        from psycopg.types.json import Jsonb

        row = []
        for field in self.fields:
            value = values[field.attname] if field.attname in values else field.get_default()
            if field.attname in self.json and value is not None:
                value = Jsonb(value)
            row.append(value)
        self.pending.append(row)

    def flush(self, cursor: Any) -> None:
        with cursor.copy(self.statement) as copy:
            for row in self.pending:
                copy.write_row(row)
        self.pending.clear()


def populate(tournaments: int, seed: int = 2024) -> None:
    """Write ``tournaments`` finished tournaments (and their users, bots, ratings)."""
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.utils import timezone

    import games
    from tournaments import ratings, scoring, seeds
    from tournaments.models import (
        Bot,
        BotVersion,
        Deal,
        Decision,
        Entry,
        Rating,
        Round,
        Seat,
        Table,
        Tournament,
        Trick,
    )

    rng = random.Random(seed)
    engine = games.load("hearts", "whisthub", fixed_deals=DEALS)
    options = engine.options()
    place_points = scoring.default_place_points(SEATS)
    now = timezone.now()
    started = time.perf_counter()
    ids = dict.fromkeys(("table", "deal", "trick", "decision", "seat", "round", "entry"), 0)

    def next_id(name: str) -> int:
        ids[name] += 1
        return ids[name]

    with transaction.atomic(), connection.cursor() as django_cursor:
        cursor = django_cursor.cursor  # psycopg's own cursor, for COPY
        # The rows are consistent by construction: skip the foreign-key triggers while
        # copying millions of them (the database's superuser only; bench database only).
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute("SET LOCAL synchronous_commit = off")
        organiser = User.objects.create_user("bench-organiser", password=None)
        authors = User.objects.bulk_create(
            [User(username=f"bench-author-{i}") for i in range(BOTS)]
        )
        bots = Bot.objects.bulk_create(
            [Bot(owner=a, name=f"bench-bot-{i}", game="hearts") for i, a in enumerate(authors)]
        )
        versions = BotVersion.objects.bulk_create(
            [
                BotVersion(
                    bot=b,
                    number=1,
                    builtin="random",
                    sha256="0" * 64,
                    status=BotVersion.Status.READY,
                    report={"ok": True},
                    validated_at=now,
                )
                for b in bots
            ]
        )
        Rating.objects.bulk_create(
            [
                Rating(
                    bot=b,
                    family=ratings.preset_family("hearts", "whisthub"),
                    mu=25.0 + rng.gauss(0, 3),
                    sigma=3.0 + rng.random(),
                    ordinal=0.0,
                    tables=ROUNDS * tournaments * ENTRIES // BOTS,
                )
                for b in bots
            ]
        )
        models = (Tournament, Entry, Round, Table, Seat, Deal, Trick, Decision)
        copy = {model: Copier(model) for model in models}
        for number in range(1, tournaments + 1):
            tournament_seed = seeds.new_tournament_seed()
            begin = now - timedelta(days=tournaments - number + 1)
            copy[Tournament].write(
                id=number,
                name=f"Bench cup {number}",
                organiser_id=organiser.pk,
                game="hearts",
                preset="whisthub",
                options={},
                table_size=SEATS,
                rounds=ROUNDS,
                deals_per_table=DEALS,
                place_points=list(place_points),
                status=Tournament.Status.FINISHED,
                seed=str(tournament_seed),
                commitment=seeds.seed_commitment(tournament_seed),
                seed_revealed_at=begin + timedelta(hours=2),
                current_round=ROUNDS,
                created_at=begin - timedelta(days=1),
                started_at=begin,
                finished_at=begin + timedelta(hours=2),
            )
            entries = []
            for version in rng.sample(versions, ENTRIES):
                entry_id = next_id("entry")
                entries.append((entry_id, version))
                copy[Entry].write(
                    id=entry_id,
                    tournament_id=number,
                    version_id=version.pk,
                    user_id=version.bot.owner_id,
                    created_at=begin - timedelta(hours=1),
                )
            for round_number in range(1, ROUNDS + 1):
                round_id = next_id("round")
                copy[Round].write(
                    id=round_id,
                    tournament_id=number,
                    number=round_number,
                    status=Round.Status.DONE,
                    started_at=begin,
                    finished_at=begin + timedelta(minutes=10),
                )
                rng.shuffle(entries)
                for table_number in range(1, TABLES + 1):
                    seated = entries[(table_number - 1) * SEATS : table_number * SEATS]
                    write_table(
                        copy, rng, engine, options, place_points, next_id, number, round_id,
                        table_number, seated, begin,
                    )  # fmt: skip
            for copier in copy.values():
                copier.flush(cursor)
            if number % 10 == 0 or number == tournaments:
                elapsed = time.perf_counter() - started
                print(
                    f"  {number}/{tournaments} tournaments, {ids['deal']:,} deals, "
                    f"{ids['trick']:,} tricks, {ids['decision']:,} decisions ({elapsed:.0f} s)",
                    flush=True,
                )
        # The replays, rendered once as the service does when it records a table (here by
        # the database, in one statement: the migration's backfill).
        backfill = importlib.import_module("tournaments.migrations.0003_deal_replay").BACKFILL
        cursor.execute(backfill.format(where=""))
        for model in models:
            table = model._meta.db_table
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
            )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"  built in {time.perf_counter() - started:.0f} s", flush=True)


def write_table(
    copy: dict[Any, Copier],
    rng: random.Random,
    engine: Any,
    options: dict[str, Any],
    place_points: tuple[int, ...],
    next_id: Any,
    tournament_id: int,
    round_id: int,
    table_number: int,
    seated: list[tuple[int, Any]],
    begin: Any,
) -> None:
    from games.log import deal_log
    from tournaments import scoring
    from tournaments.models import Deal, Decision, Seat, Table, Trick

    table_id = next_id("table")
    deal_seed = rng.getrandbits(63)
    deal_points = []
    decisions = [0] * SEATS
    time_sums = [0.0] * SEATS
    for index in range(DEALS):
        state = engine.new_deal(deal_index=index, seed=deal_seed)
        while not state.is_terminal():
            state.apply_action(rng.choice(state.legal_actions()))
        entry = deal_log(state)
        actions = entry["actions"]
        times = [round(rng.expovariate(200.0), 6) for _ in actions]
        entry["times"] = times
        entry["faults"] = []
        passes: list[Any] = [None] * SEATS
        for seat, action in actions:
            if not isinstance(action, list):
                break
            passes[seat] = action
        deal_id = next_id("deal")
        record = entry["deal"]
        copy[Deal].write(
            id=deal_id,
            table_id=table_id,
            index=index,
            seed=record.get("seed"),
            record=record,
            passes=passes if any(p is not None for p in passes) else None,
            points=entry["points"],
            log=entry,
            decisions=len(actions),
            faults=0,
        )
        for number, trick in enumerate(state.tricks()):
            copy[Trick].write(
                id=next_id("trick"),
                deal_id=deal_id,
                number=number,
                leader=trick.leader,
                cards=list(trick.cards),
                winner=trick.winner,
                points=trick.points,
            )
        for step, ((seat, action), seconds) in enumerate(zip(actions, times, strict=True)):
            copy[Decision].write(
                id=next_id("decision"),
                deal_id=deal_id,
                step=step,
                seat=seat,
                action=action,
                seconds=seconds,
                fault="",
            )
            decisions[seat] += 1
            time_sums[seat] += seconds
        deal_points.append(entry["points"])
    scores = engine.match_scores(deal_points)
    places = engine.places(scores)
    points = scoring.table_points(places, place_points)
    header = {
        "format": "tapis-replay",
        "version": 1,
        "game": "hearts",
        "preset": "whisthub",
        "options": options,
        "seed": deal_seed,
    }
    copy[Table].write(
        id=table_id,
        tournament_id=tournament_id,
        round_id=round_id,
        number=table_number,
        deal_seed=deal_seed,
        status=Table.Status.DONE,
        claimed_by="bench",
        attempts=1,
        queued_at=begin,
        started_at=begin,
        finished_at=begin + timedelta(minutes=5),
        result={
            "game": "hearts",
            "preset": "whisthub",
            "seed": deal_seed,
            "deals": DEALS,
            "elapsed": 1.0,
            "totals": scores,
            "scores": scores,
            "places": places,
            "deal_points": deal_points,
            "faults": [],
            "replay_header": header,
        },
    )
    for position, (entry_id, version) in enumerate(seated):
        copy[Seat].write(
            id=next_id("seat"),
            table_id=table_id,
            position=position,
            entry_id=entry_id,
            score=scores[position],
            total=scores[position],
            place=places[position],
            points=Decimal(points[position].numerator) / Decimal(points[position].denominator),
            decisions=decisions[position],
            mean_time=time_sums[position] / max(1, decisions[position]),
            bot_name=version.bot.name,
        )


# ---------------------------------------------------------------------------------------------
# The service
# ---------------------------------------------------------------------------------------------


def prewarm() -> None:
    """Load the tables the endpoints read into the operating system's cache (pg_prewarm),
    as on a server that has been up for a while."""
    from django.db import connection

    with connection.cursor() as cursor:
        try:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        except Exception:  # no contrib modules: the first requests read from disk
            return
        cursor.execute(
            "SELECT pg_prewarm(c.oid, 'read') FROM pg_class c "
            "WHERE c.relname LIKE 'tournaments\\_%' AND c.relkind IN ('r', 'i', 't') "
            "AND c.relname NOT LIKE 'tournaments\\_decision%'"
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def gunicorn(url: str, port: int, args: argparse.Namespace) -> Iterator[subprocess.Popen[bytes]]:
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "0",
        # As in production: the cache shared by the workers (Redis), unless one is given.
        "CACHE_URL": os.environ.get("CACHE_URL", "redis://127.0.0.1:6379/3"),
    }
    if args.throttle:  # the production rates (the clients come from many addresses)
        environment.pop("TAPIS_API_THROTTLE_ANON", None)
        environment.pop("TAPIS_API_THROTTLE_USER", None)
        # The clients' addresses arrive in X-Forwarded-For, as from one proxy in front.
        environment["TAPIS_NUM_PROXIES"] = "1"
    else:
        environment.update(TAPIS_API_THROTTLE_ANON="off", TAPIS_API_THROTTLE_USER="off")
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(args.workers),
        "--threads", str(args.threads),
        "--worker-class", args.worker_class,
        "--keep-alive", "30",
        # A listening socket per worker (SO_REUSEPORT): the kernel spreads the clients'
        # connections over the workers. With one shared socket, the keep-alive connections
        # often all went to one worker, which then served the 32 clients on one CPU.
        "--reuse-port",
        "--backlog", "256",
        "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, env=environment, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                status, _ = fetch(http.client.HTTPConnection("127.0.0.1", port), "/api/v1/games/")
                if status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            raise RuntimeError("gunicorn did not answer in 30 s")
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def fetch(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes]:
    conn.request("GET", path, headers={"Accept": "application/json"})
    response = conn.getresponse()
    body = response.read()
    if response.getheader("Connection", "").lower() == "close":
        conn.close()
    return response.status, body


# ---------------------------------------------------------------------------------------------
# Where the CPU goes
# ---------------------------------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float | None:
    """Seconds of CPU (user and system) used so far by process ``pid`` (None if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat.rpartition(b")")[2].split()  # from the 3rd field on (the name may hold spaces)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_bytes()
                if int(stat.rpartition(b")")[2].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def machine_cpu() -> tuple[float, float]:
    """Seconds of CPU time of the whole machine so far: (busy, total), every CPU summed."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return (sum(values) - idle) / CLOCK_TICKS, sum(values) / CLOCK_TICKS


class CpuMeter:
    """The CPU time the service spends while the load runs: the gunicorn workers, and the
    PostgreSQL backends serving them (each process sampled every 0.2 s, so that a backend
    whose connection is closed and opened again during the run is counted too)."""

    def __init__(self, url: str, workers: list[int]) -> None:
        self.url, self.workers = url, workers
        self.last: dict[tuple[str, int], float] = {}
        self.start: dict[tuple[str, int], float] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self, conn: Any) -> None:
        backends = conn.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
        for kind, pids in (("gunicorn", self.workers), ("postgres", [p for (p,) in backends])):
            for pid in pids:
                seconds = process_cpu(pid)
                if seconds is not None:
                    self.last[kind, pid] = seconds

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            self._sample(conn)
            self.start = dict(self.last)
            self.started.set()
            while not self.stop.wait(0.2):
                self._sample(conn)
            self._sample(conn)

    def __enter__(self) -> CpuMeter:
        self.started = threading.Event()
        self.machine = machine_cpu()
        self.thread.start()
        self.started.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        busy, total = machine_cpu()
        self.machine_busy = busy - self.machine[0]
        self.machine_total = total - self.machine[1]

    def used(self, kind: str) -> float:
        """Seconds of CPU used by the processes of ``kind`` during the run."""
        return sum(
            seconds - self.start.get(key, 0.0)  # a process that appeared started from 0
            for key, seconds in self.last.items()
            if key[0] == kind
        )


# ---------------------------------------------------------------------------------------------
# The load: wrk when it is installed, else clients in Python
# ---------------------------------------------------------------------------------------------

# Clients' addresses when throttling is on: each request says it comes from one of this many
# addresses (X-Forwarded-For, which DRF's throttles count by), as if through a proxy.
ADDRESSES = 10_000


def forwarded_for(number: int) -> str:
    return f"10.{number >> 16 & 255}.{number >> 8 & 255}.{number & 255}"


REQUEST = "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n{extra}\r\n"


async def _client(
    port: int,
    paths: list[str],
    stop: float,
    seed: int,
    latencies: list[float],
    addresses: int,
) -> tuple[int, int]:
    """One client: a keep-alive connection, requests back to back until ``stop``."""
    rng = random.Random(seed)
    errors = size = 0
    reader = writer = None
    while time.monotonic() < stop:
        if writer is None:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert reader is not None
        path = rng.choice(paths)
        extra = ""
        if addresses:
            extra = f"X-Forwarded-For: {forwarded_for(rng.randrange(addresses))}\r\n"
        begin = time.perf_counter()
        try:
            writer.write(REQUEST.format(path=path, extra=extra).encode())
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length, close = 0, False
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
                elif name.lower() == b"connection" and value.strip().lower() == b"close":
                    close = True
            body = await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            errors += 1
            writer.close()
            reader = writer = None
            continue
        latencies.append(time.perf_counter() - begin)
        size += len(body)
        if status != 200:
            errors += 1
        if close:
            writer.close()
            reader = writer = None
    if writer is not None:
        writer.close()
    return errors, size


def load_python(
    port: int, paths: list[str], clients: int, seconds: float, addresses: int
) -> dict[str, Any]:
    """``clients`` concurrent clients (asyncio, one process) request random ``paths`` back to
    back for ``seconds``: the latency of each request, from sending it to its last byte."""
    latencies: list[float] = []

    async def run() -> list[tuple[int, int]]:
        stop = time.monotonic() + seconds
        return await asyncio.gather(
            *(_client(port, paths, stop, seed, latencies, addresses) for seed in range(clients))
        )

    begin, cpu = time.monotonic(), time.thread_time()
    results = asyncio.run(run())
    elapsed, cpu = time.monotonic() - begin, time.thread_time() - cpu
    errors = sum(e for e, _ in results)
    count = len(latencies)
    if not count:
        return {"requests": 0, "errors": errors}
    latencies.sort()
    return {
        "requests": count,
        "errors": errors,
        "throughput": count / elapsed,
        "p50": latencies[count // 2] * 1000,
        "p95": latencies[min(count - 1, int(count * 0.95))] * 1000,
        "p99": latencies[min(count - 1, int(count * 0.99))] * 1000,
        "bytes": sum(size for _, size in results) / count,
        "client_cpu": cpu,
    }


# wrk's script: a random path of the list (and a random client address) per request; at the
# end, one line of figures (latencies in microseconds). wrk runs LuaJIT (Lua 5.1).
WRK_SCRIPT = """
local paths, addresses = {}, 0
init = function(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  math.randomseed(tonumber(args[2]))
  addresses = tonumber(args[3])
end
request = function()
  local headers = {Accept = "application/json"}
  if addresses > 0 then
    local n = math.random(addresses) - 1
    headers["X-Forwarded-For"] = string.format(
      "10.%d.%d.%d", math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
  end
  return wrk.format("GET", paths[math.random(#paths)], headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("tapis-wrk %d %d %d %d %d %d %d %d\\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    summary.bytes, latency:percentile(50), latency:percentile(95), latency:percentile(99)))
end
"""


def load_wrk(
    port: int, paths: list[str], clients: int, seconds: float, addresses: int
) -> dict[str, Any]:
    """The same load from wrk (one thread, ``clients`` keep-alive connections, each sending
    its next request when the last answer is in), a load generator that costs the machine
    far less CPU than Python clients do."""
    with tempfile.TemporaryDirectory() as folder:
        script, listing = Path(folder, "load.lua"), Path(folder, "paths")
        script.write_text(WRK_SCRIPT)
        listing.write_text("\n".join(paths) + "\n")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = [
            "wrk", "--threads", "1", "--connections", str(clients),
            "--duration", f"{max(1, round(seconds))}s", "--timeout", "10s",
            "--script", str(script), f"http://127.0.0.1:{port}",
            "--", str(listing), str(random.randrange(1, 2**31)), str(addresses),
        ]  # fmt: skip
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next(line for line in output.splitlines() if line.startswith("tapis-wrk "))
    requests, micros, failed, bad, size, p50, p95, p99 = (int(v) for v in line.split()[1:])
    if not requests:
        return {"requests": 0, "errors": failed + bad}
    return {
        "requests": requests,
        "errors": failed + bad,
        "throughput": requests / (micros / 1e6),
        "p50": p50 / 1000,
        "p95": p95 / 1000,
        "p99": p99 / 1000,
        "bytes": size / requests,  # with the headers (the Python clients count bodies only)
        "client_cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
    }


def load(
    args: argparse.Namespace, port: int, paths: list[str], seconds: float, url: str = ""
) -> dict[str, Any]:
    """The load of ``args.clients`` clients on ``paths`` for ``seconds``, and (with ``url``,
    the database's) where the CPU went meanwhile."""
    run = load_wrk if args.load == "wrk" else load_python
    addresses = ADDRESSES if args.throttle else 0
    if not url:
        return run(port, paths, args.clients, seconds, addresses)
    with CpuMeter(url, args.worker_pids) as meter:
        result = run(port, paths, args.clients, seconds, addresses)
    result.update(
        gunicorn_cpu=meter.used("gunicorn"),
        postgres_cpu=meter.used("postgres"),
        machine_busy=meter.machine_busy,
        machine_total=meter.machine_total,
    )
    return result


def warm(port: int, paths: list[str], clients: int, addresses: int) -> None:
    """Request every path of ``paths`` once, ``clients`` at a time, each on a new connection
    (from one of ``addresses`` client addresses, if not 0)."""
    queue = list(paths)
    rng = random.Random(3)
    rng.shuffle(queue)

    async def worker() -> None:
        # A connection per request: each is accepted by whichever worker process is free,
        # so that every process sees every path.
        while queue:
            path = queue.pop()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            extra = "Connection: close\r\n"
            if addresses:
                extra += f"X-Forwarded-For: {forwarded_for(rng.randrange(addresses))}\r\n"
            request = REQUEST.format(path=path, extra=extra)
            writer.write(request.encode())
            await reader.read()
            writer.close()

    async def run() -> None:
        await asyncio.gather(*(worker() for _ in range(clients)))

    asyncio.run(run())


def report(name: str, goal: float, result: dict[str, Any]) -> None:
    if not result.get("requests"):
        print(f"{name:<10} no answers ({result.get('errors')} errors)")
        return
    verdict = "ok" if result["p95"] <= goal and not result["errors"] else "MISSED"
    count = result["requests"]
    print(
        f"{name:<10} p50 {result['p50']:6.1f} ms   p95 {result['p95']:6.1f} ms "
        f"(goal {goal:.0f} ms: {verdict})   p99 {result['p99']:6.1f} ms   "
        f"{result['throughput']:6.0f} req/s   {count:,} requests, "
        f"{result['errors']} errors, {result['bytes'] / 1024:.1f} KiB each"
    )
    if "gunicorn_cpu" in result:
        ours = result["gunicorn_cpu"] + result["postgres_cpu"] + result["client_cpu"]
        others = max(0.0, result["machine_busy"] - ours)
        print(
            f"{'':<10} CPU per request: gunicorn {result['gunicorn_cpu'] / count * 1e6:.0f} us, "
            f"PostgreSQL {result['postgres_cpu'] / count * 1e6:.0f} us, "
            f"load generator {result['client_cpu'] / count * 1e6:.0f} us; machine "
            f"{result['machine_busy'] / result['machine_total']:.0%} busy, "
            f"{others / result['machine_total']:.0%} by other processes "
            f"(Redis, the kernel's network, anything else running)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=100_000, help="deals at least (100000)")
    parser.add_argument("--rebuild", action="store_true", help="drop and build the database")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15.0, help="per endpoint")
    # One process per CPU (2 here); threads keep each busy while another waits on PostgreSQL.
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker")
    parser.add_argument("--worker-class", default="gthread", help="gthread (keep-alive) or sync")
    parser.add_argument(
        "--load",
        choices=("wrk", "python"),
        default="wrk" if shutil.which("wrk") else "python",
        help="the load generator: wrk (the default when installed) or Python clients",
    )
    parser.add_argument(
        "--throttle",
        action="store_true",
        help="throttling on, at the production rates, the clients spread over "
        f"{ADDRESSES:,} addresses (by default it is off)",
    )
    parser.add_argument(
        "--endpoint",
        choices=("standings", "replay"),
        action="append",
        help="measure only this one (may be repeated; by default both)",
    )
    args = parser.parse_args()

    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/tapis")
    url = bench_url(server)
    ensure_database(url, rebuild=args.rebuild)
    setup_django(url)
    from tournaments.models import Deal, Tournament, Trick

    tournaments = -(-args.deals // DEALS_PER_TOURNAMENT)
    if Deal.objects.count() < args.deals:
        if Tournament.objects.exists():
            raise SystemExit(f"{BENCH_DB} is half built: run again with --rebuild")
        print(f"building {BENCH_DB}: {tournaments} tournaments of {DEALS_PER_TOURNAMENT} deals")
        populate(tournaments)
    deal_count, trick_count = Deal.objects.count(), Trick.objects.count()
    print(f"{BENCH_DB}: {Tournament.objects.count()} tournaments, {deal_count:,} deals, "
          f"{trick_count:,} tricks")  # fmt: skip

    prewarm()
    rng = random.Random(7)
    tournament_ids = list(Tournament.objects.values_list("pk", flat=True))
    deal_ids = list(Deal.objects.values_list("pk", flat=True))
    standings = [f"/api/v1/tournaments/{pk}/standings/" for pk in tournament_ids]
    replays = [f"/api/v1/deals/{pk}/" for pk in rng.sample(deal_ids, min(20_000, len(deal_ids)))]

    port = free_port()
    throttling = (
        f"throttling on (production rates; clients from {ADDRESSES:,} addresses)"
        if args.throttle
        else "throttling off (--throttle: on)"
    )
    print(
        f"gunicorn ({args.worker_class}): {args.workers} workers x {args.threads} threads; "
        f"{args.clients} clients ({args.load}), {args.seconds:g} s per endpoint, "
        f"{os.cpu_count()} CPUs; {throttling}; load average {os.getloadavg()[0]:.2f}"
    )
    with gunicorn(url, port, args) as process:
        args.worker_pids = children_of(process.pid)
        # Warm-up: every worker process computes each tournament's final standings once
        # (then keeps them); the replays are left cold (20,000 random deals of 100,000).
        warm(port, standings * 20, args.clients, ADDRESSES if args.throttle else 0)
        load(args, port, replays, min(3.0, args.seconds))
        for name, paths, goal in (("standings", standings, 50.0), ("replay", replays, 30.0)):
            if args.endpoint and name not in args.endpoint:
                continue
            report(name, goal, load(args, port, paths, args.seconds, url))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
