"""Benchmark of the REST API: standings and deal replays under 32 concurrent clients.

Run from the repository root (PostgreSQL must be running; ``DATABASE_URL`` names the server,
default ``postgresql://postgres@127.0.0.1:5432/tapis``)::

    .venv/bin/python bench/api.py                 # build tapis_bench once, then measure
    .venv/bin/python bench/api.py --rebuild       # drop and build the database again
    .venv/bin/python bench/api.py --seconds 10 --clients 32 --workers 2 --threads 8

1. The data: a database of its own (``tapis_bench``, never the test or demo one) with about
   100,000 Hearts deals (1.3 million tricks, 5.6 million decisions): 100 finished tournaments
   of 48 bots, 7 rounds of 12 tables, 12 deals a table. Every deal is really played through
   the engine (random legal cards, with the table's seed) and written with PostgreSQL's COPY.
   It is built once and kept (``--rebuild`` starts again).
2. The service: gunicorn (``config.wsgi``, production-like: DEBUG off, the cache in Redis
   (``CACHE_URL``), throttling off so that one client address can load it) on 127.0.0.1.
3. The load: ``--clients`` threads, each with its own keep-alive connection, send requests
   back to back for ``--seconds`` per endpoint (after a warm-up): the standings of a random
   tournament, then the replay of a random deal. It prints p50, p95 and p99 latency and the
   throughput. Goals: standings p95 <= 50 ms, replay p95 <= 30 ms.

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
import signal
import socket
import statistics
import subprocess
import sys
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
    from tournaments import formats, ratings
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
    place_points = formats.default_place_points(SEATS)
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
            tournament_seed = formats.new_tournament_seed()
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
                commitment=formats.seed_commitment(tournament_seed),
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
    from tournaments import formats
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
    points = formats.table_points(places, place_points)
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
def gunicorn(
    url: str, port: int, workers: int, threads: int, worker_class: str
) -> Iterator[subprocess.Popen[bytes]]:
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "0",
        "TAPIS_API_THROTTLE_ANON": "off",
        "TAPIS_API_THROTTLE_USER": "off",
        # As in production: the cache shared by the workers (Redis), unless one is given.
        "CACHE_URL": os.environ.get("CACHE_URL", "redis://127.0.0.1:6379/3"),
    }
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "config.wsgi:application",
        "--bind", f"127.0.0.1:{port}",
        "--workers", str(workers),
        "--threads", str(threads),
        "--worker-class", worker_class,
        "--keep-alive", "30",
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


REQUEST = "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n"


async def _client(
    port: int, paths: list[str], stop: float, seed: int, latencies: list[float]
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
        begin = time.perf_counter()
        try:
            writer.write(REQUEST.format(path=path).encode())
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


def load(port: int, paths: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` concurrent clients (asyncio, one process) request random ``paths`` back to
    back for ``seconds``: the latency of each request, from sending it to its last byte."""
    latencies: list[float] = []

    async def run() -> list[tuple[int, int]]:
        stop = time.monotonic() + seconds
        return await asyncio.gather(
            *(_client(port, paths, stop, seed, latencies) for seed in range(clients))
        )

    begin = time.monotonic()
    results = asyncio.run(run())
    elapsed = time.monotonic() - begin
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
        "mean": statistics.fmean(latencies) * 1000,
        "bytes": sum(size for _, size in results) / count,
    }


def warm(port: int, paths: list[str], clients: int) -> None:
    """Request every path of ``paths`` once, ``clients`` at a time, each on a new connection."""
    queue = list(paths)
    random.Random(3).shuffle(queue)

    async def worker() -> None:
        # A connection per request: each is accepted by whichever worker process is free,
        # so that every process sees every path.
        while queue:
            path = queue.pop()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = REQUEST.format(path=path).replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
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
    print(
        f"{name:<10} p50 {result['p50']:6.1f} ms   p95 {result['p95']:6.1f} ms "
        f"(goal {goal:.0f} ms: {verdict})   p99 {result['p99']:6.1f} ms   "
        f"{result['throughput']:6.0f} req/s   {result['requests']:,} requests, "
        f"{result['errors']} errors, {result['bytes'] / 1024:.1f} KiB each"
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
    print(
        f"gunicorn ({args.worker_class}): {args.workers} workers x {args.threads} threads; "
        f"{args.clients} clients, "
        f"{args.seconds:g} s per endpoint, {os.cpu_count()} CPUs"
    )
    with gunicorn(url, port, args.workers, args.threads, args.worker_class):
        # Warm-up: every worker process computes each tournament's final standings once
        # (then keeps them); the replays are left cold (20,000 random deals of 100,000).
        warm(port, standings * 20, args.clients)
        load(port, replays, args.clients, min(3.0, args.seconds))
        for name, paths, goal in (("standings", standings, 50.0), ("replay", replays, 30.0)):
            report(name, goal, load(port, paths, args.clients, args.seconds))


if __name__ == "__main__":
    main()
