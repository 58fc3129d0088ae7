"""Benchmark of the site's pages: each page's server time (p50, p95) on the bench database.

Run from the repository root (PostgreSQL must be running; ``DATABASE_URL`` names the server,
default ``postgresql://postgres@127.0.0.1:5432/tapis``)::

    .venv/bin/python bench/pages.py                  # tapis_bench of bench/api.py (100,000 deals)
    .venv/bin/python bench/pages.py --requests 200   # requests per page (default 100)
    .venv/bin/python bench/pages.py --database tapis_bench_small --deals 10000

1. The data: the database bench/api.py builds and keeps (``tapis_bench``: 100 finished Hearts
   tournaments of 48 bots, 7 rounds of 12 tables, 12 deals a table, about 100,000 deals), built
   here the same way when it is missing (``--database`` and ``--deals`` make a smaller one
   under another name when building the big one is too slow for the machine's load). It is
   brought up to date as a deployment would be: ``manage.py migrate``, then ``manage.py
   tournament_summaries`` (the stored statistics of the tournaments finished before summaries
   existed: bench/api.py writes its tournaments directly, without the service that finishes
   them and stores them).
2. The measure: each page is asked for ``--requests`` times, each time for a random
   tournament, table, bot, deal..., through Django's WSGI handler in this process (DEBUG off,
   the full middleware stack, templates rendered), after a warm-up. Server time is from the
   request entering Django to the response's last byte, without the network. It prints p50,
   p95 and max per page, the p95 of this process's CPU time per request (Django's own work,
   without PostgreSQL's and without waiting for a CPU: on a shared, loaded machine the wall
   times mostly measure the wait), and the number of queries of the last request of each.
   A first visit is measured cold: Django's cache is emptied before each request (nothing
   kept: a tournament's statistics, its page's rendering, a replay's steps). Goal: p95 <=
   50 ms for every page.
3. The audit pages re-play deals through the engine: a deal's is measured like the others; a
   tournament's (its 1,008 deals) is made by a task when it finishes and stored (here by
   ``tournament_summaries --audits``), and is measured on a first visit and once kept; the
   time to make one on the spot is printed apart (its replay of every deal is the check).

It asserts nothing: benchmarks live in bench/ and print figures (DESIGN.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _load_bench_api() -> ModuleType:
    """bench/api.py (the database and how it is built), under a name that does not hide the
    ``api`` package."""
    spec = importlib.util.spec_from_file_location("bench_api", REPO / "bench" / "api.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_api"] = module
    spec.loader.exec_module(module)
    return module


bench_api = _load_bench_api()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default=bench_api.BENCH_DB)
    parser.add_argument("--deals", type=int, default=100_000, help="deals at least (100000)")
    parser.add_argument("--requests", type=int, default=100, help="per page")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    os.environ["DEBUG"] = "0"
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/tapis")
    bench_api.BENCH_DB = args.database
    url = bench_api.bench_url(server, args.database)
    bench_api.ensure_database(url, rebuild=False)
    bench_api.setup_django(url)

    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from tournaments import services
    from tournaments.models import Bot, Deal, Table, Tournament

    tournaments = -(-args.deals // bench_api.DEALS_PER_TOURNAMENT)
    if Deal.objects.count() < args.deals:
        if Tournament.objects.exists():
            raise SystemExit(f"{args.database} is half built: drop it and run again")
        print(f"building {args.database}: {tournaments} tournaments")
        bench_api.populate(tournaments)
    print(
        f"{args.database}: {Tournament.objects.count()} tournaments, "
        f"{Table.objects.count():,} tables, {Deal.objects.count():,} deals, "
        f"{Bot.objects.count()} bots"
    )
    # What an upgrade runs after its migrations: the statistics of the tournaments finished
    # before stored summaries existed (the finish stores them for every tournament since), and
    # their audits (the finish queues them; --audits makes the missing ones, once).
    call_command("tournament_summaries", "--audits")
    bench_api.prewarm()

    rng = random.Random(args.seed)
    tournament_ids = list(Tournament.objects.values_list("pk", flat=True))
    table_ids = list(Table.objects.values_list("pk", flat=True))
    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    deal_ids = list(Deal.objects.values_list("pk", flat=True)[:50_000])
    # (name, path, cold): a cold page is measured with Django's cache emptied before each
    # request (nothing kept: not the statistics, not the rendering, not a replay's steps).
    pages: list[tuple[str, Callable[[], str], bool]] = [
        ("home", lambda: "/", False),
        ("tournament list", lambda: f"/tournaments/?page={rng.randint(1, 4)}", False),
        ("tournament list (filtered)", lambda: "/tournaments/?status=finished&game=hearts", False),
        # A finished tournament's page is rendered once and kept: its first visit (cold) and
        # a visit of one already kept.
        ("tournament (first visit)", lambda: f"/tournaments/{rng.choice(tournament_ids)}/", True),
        ("tournament (kept)", lambda: f"/tournaments/{tournament_ids[0]}/", False),
        ("tournament standings p. 2", lambda: f"/tournaments/{pick()}/?page=2", True),
        ("tournament live", lambda: f"/tournaments/{pick()}/live/", True),
        ("round", lambda: f"/tournaments/{pick()}/rounds/{rng.randint(1, 7)}/", False),
        ("crosstable (first visit)", lambda: f"/tournaments/{pick()}/crosstable/", True),
        ("crosstable (kept)", lambda: f"/tournaments/{tournament_ids[0]}/crosstable/", False),
        ("table", lambda: f"/tables/{rng.choice(table_ids)}/", False),
        # A deal's first view re-plays it through the engine (then kept by its digest).
        ("deal replay (first view)", lambda: f"/deals/{rng.choice(deal_ids)}/", True),
        ("bot", lambda: f"/bots/{rng.choice(bot_ids)}/", False),
        ("rankings", lambda: f"/rankings/?page={rng.randint(1, 5)}", False),
        ("deal audit", lambda: f"/deals/{rng.choice(deal_ids)}/audit/", True),
        ("tournament audit (kept)", lambda: f"/tournaments/{tournament_ids[0]}/audit/", False),
        # Its first visit: the audit stored when it finished (here by --audits above).
        ("tournament audit (first visit)", lambda: f"/tournaments/{pick()}/audit/", True),
    ]

    def pick() -> int:
        return rng.choice(tournament_ids)

    client = Client()
    # A tournament's audit made on the spot (none stored: what a first visit costs without the
    # task that stores it when the tournament finishes).
    cold = time.perf_counter()
    services.tournament_audit(
        tournament=Tournament.objects.get(pk=tournament_ids[0]), shown_only=True
    )
    print(
        f"tournament audit made on the spot (re-plays its deals): "
        f"{time.perf_counter() - cold:.2f} s"
    )
    print(
        f"{'page':30} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p95':>8} {'queries':>8}"
        "  goal p95 <= 50"
    )
    for name, path, cold in pages:
        for _ in range(5):  # warm-up: templates compiled, connections open
            client.get(path())
        times, cpu = [], []
        for _ in range(args.requests):
            url = path()
            if cold:
                cache.clear()
            started, started_cpu = time.perf_counter(), time.thread_time()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            assert response.status_code in (200, 286), (name, response.status_code)
        # Counted by a wrapper: Django empties its own query log when a request starts.
        queries: list[str] = []

        def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            queries.append(sql)  # noqa: B023  (used at once, inside this iteration)
            return execute(sql, params, many, context)

        url = path()
        if cold:
            cache.clear()
        with connection.execute_wrapper(count):
            client.get(url)
        p95 = percentile(times, 0.95)
        print(
            f"{name:30} {statistics.median(times):8.1f} {p95:8.1f} {max(times):8.1f} "
            f"{percentile(cpu, 0.95):8.1f} {len(queries):8d}  {'ok' if p95 <= 50 else 'OVER'}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs, shared)")


if __name__ == "__main__":
    main()
