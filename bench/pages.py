"""Benchmark of the site's pages: each page's server time (p50, p95) on the bench database.

Run from the repository root (PostgreSQL must be running; ``DATABASE_URL`` names the server,
default ``postgresql://postgres@127.0.0.1:5432/tapis``)::

    .venv/bin/python bench/pages.py                  # tapis_bench of bench/api.py (100,000 deals)
    .venv/bin/python bench/pages.py --requests 200   # requests per page (default 100)
    .venv/bin/python bench/pages.py --database tapis_bench_small --deals 10000

1. The data: the database bench/api.py builds and keeps (``tapis_bench``: 100 finished Hearts
   tournaments of 48 bots, 7 rounds of 12 tables, 12 deals a table, about 100,000 deals), built
   here the same way when it is missing (``--database`` and ``--deals`` make a smaller one
   under another name when building the big one is too slow for the machine's load).
2. The measure: each page is asked for ``--requests`` times, each time for a random
   tournament, table, bot, deal..., through Django's WSGI handler in this process (DEBUG off,
   the full middleware stack, templates rendered), after a warm-up. Server time is from the
   request entering Django to the response's last byte, without the network. It prints p50,
   p95 and max per page, the p95 of this process's CPU time per request (Django's own work,
   without PostgreSQL's and without waiting for a CPU: on a shared, loaded machine the wall
   times mostly measure the wait), and the number of queries of the last request of each.
   Goal: p95 <= 50 ms for every page.
3. The audit pages re-play deals through the engine: a deal's is measured like the others; a
   tournament's (its 1,008 deals) is made once and kept, and is measured from the cache,
   after one cold visit printed apart.

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

    from django.db import connection
    from django.test import Client

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
    bench_api.prewarm()

    rng = random.Random(args.seed)
    tournament_ids = list(Tournament.objects.values_list("pk", flat=True))
    table_ids = list(Table.objects.values_list("pk", flat=True))
    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    deal_ids = list(Deal.objects.values_list("pk", flat=True)[:50_000])
    pages: list[tuple[str, Callable[[], str]]] = [
        ("home", lambda: "/"),
        ("tournament list", lambda: f"/tournaments/?page={rng.randint(1, 4)}"),
        ("tournament list (filtered)", lambda: "/tournaments/?status=finished&game=hearts"),
        # A finished tournament's page is rendered once and kept: the first visit of each
        # (random ones of 100: mostly first visits) and a visit of one already kept.
        ("tournament (first visit)", lambda: f"/tournaments/{next(fresh)}/"),
        ("tournament (kept)", lambda: f"/tournaments/{tournament_ids[0]}/"),
        ("tournament live", lambda: f"/tournaments/{rng.choice(tournament_ids)}/live/"),
        ("table", lambda: f"/tables/{rng.choice(table_ids)}/"),
        ("bot", lambda: f"/bots/{rng.choice(bot_ids)}/"),
        ("rankings", lambda: f"/rankings/?page={rng.randint(1, 5)}"),
        ("deal audit", lambda: f"/deals/{rng.choice(deal_ids)}/audit/"),
        ("tournament audit (kept)", lambda: f"/tournaments/{tournament_ids[0]}/audit/"),
    ]
    fresh = iter(rng.sample(tournament_ids, len(tournament_ids)) * 10)
    client = Client()
    cold = time.perf_counter()
    assert client.get(f"/tournaments/{tournament_ids[0]}/audit/").status_code == 200
    print(f"tournament audit, cold (re-plays its deals once): {time.perf_counter() - cold:.2f} s")
    print(
        f"{'page':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p95':>8} {'queries':>8}"
        "  goal p95 <= 50"
    )
    for name, path in pages:
        for _ in range(5):  # warm-up: templates compiled, connections open
            client.get(path())
        times, cpu = [], []
        for _ in range(args.requests):
            started, started_cpu = time.perf_counter(), time.thread_time()
            response = client.get(path())
            times.append((time.perf_counter() - started) * 1000)
            cpu.append((time.thread_time() - started_cpu) * 1000)
            assert response.status_code in (200, 286), (name, response.status_code)
        # Counted by a wrapper: Django empties its own query log when a request starts.
        queries: list[str] = []

        def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
            queries.append(sql)  # noqa: B023  (used at once, inside this iteration)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            client.get(path())
        p95 = percentile(times, 0.95)
        print(
            f"{name:28} {statistics.median(times):8.1f} {p95:8.1f} {max(times):8.1f} "
            f"{percentile(cpu, 0.95):8.1f} {len(queries):8d}  {'ok' if p95 <= 50 else 'OVER'}"
        )
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs, shared)")


if __name__ == "__main__":
    main()
