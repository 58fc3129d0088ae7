"""What keeping a bot's files in the page cache costs (docs/sandbox.md, "Host-wide channels":
the page cache).

Run from the repository root::

    .venv/bin/python bench/pagecache.py [--rounds 20] [--cold]

For each runtime: the files its sandbox can open (its system, judge/sandbox/system.py) and
their size; how long finding them takes (ldd, once per process); how long locking them in
memory takes (``keep_resident``, once per process, their pages cached); how long
``make_resident``, the check used where they cannot be locked, takes when every page is cached
already (at each bot's start and before each table of a zygote: one ``cachestat`` per file),
the median of ``--rounds``; and with ``--cold``, how long it takes once the pages no process
maps are dropped from the cache (the worst case: after memory pressure; this slows whatever
else runs on the machine for a moment; run it before anything has locked them). It prints
figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.launchers import runtimes
from judge.sandbox.residency import keep_resident, make_resident
from judge.sandbox.system import system_files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cold", action="store_true", help="also from an emptied page cache")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} (a busy machine: medians)")
    print(
        f"{'runtime':<11} {'files':>6} {'MiB':>7} {'find':>8} {'lock':>8} {'check':>9} {'cold':>9}"
    )
    for runtime in runtimes.RUNTIMES:
        started = time.perf_counter()
        files = system_files(tuple(sorted(runtimes.system_paths(runtime))))
        found = time.perf_counter() - started
        size = sum(os.stat(path).st_size for path in files) / 2**20
        cold = f"{_cold(files) * 1000:7.1f}ms" if args.cold else "-"
        make_resident(files)
        warm = statistics.median(_timed(files) for _ in range(args.rounds))
        started = time.perf_counter()
        keep_resident(files)
        locked = time.perf_counter() - started
        print(
            f"{runtime:<11} {len(files):>6} {size:>7.1f} {found * 1000:>6.0f}ms "
            f"{locked * 1000:>6.0f}ms {warm * 1000:>7.2f}ms {cold:>9}"
        )
    return 0


def _timed(files: tuple[str, ...]) -> float:
    started = time.perf_counter()
    make_resident(files)
    return time.perf_counter() - started


def _cold(files: tuple[str, ...]) -> float:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return _timed(files)


if __name__ == "__main__":
    raise SystemExit(main())
