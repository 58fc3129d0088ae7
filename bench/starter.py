"""What the sandbox's starter costs a bot started alone (docs/sandbox.md, "Nothing writable
executes").

Run from the repository root::

    .venv/bin/python bench/starter.py [--starts 30]

For the C, JavaScript and Java examples (docs/examples/, built in the sandbox unless cached):
start-up to the answer to ``hello`` in the sandbox, the median of interleaved starts, with the C
starter, with the Python starter (``TAPIS_SANDBOX_STARTER=python``) and with none (an
executable ``/tmp``, as a build's sandbox has). It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge.launchers import runtimes
from judge.launchers.package import prepare, remove
from judge.sandbox import SandboxLimits, spawn_bot

HELLO = (
    b'{"type":"hello","protocol":1,"game":"hearts","preset":"whisthub","options":{},'
    b'"seat":0,"players":4,"startup":5,"decision":1,"bank":10}\n'
)
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
SOURCES = {"c": "c/bot.c", "javascript": "javascript/bot.js", "java": "java/Bot.java"}
KINDS = ("C starter", "Python starter", "no starter")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=30)
    args = parser.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}")
    for runtime, source in SOURCES.items():
        work = Path(tempfile.mkdtemp(prefix="tapis-bench-starter-"))
        work.chmod(0o711)
        try:
            prepared = prepare(EXAMPLES / source, work / "src")
            bot_dir, limits = runtimes.launch(
                prepared.directory, runtime, prepared.entry, prepared.sources, SandboxLimits()
            )
            command = prepared.command_for(limits.memory_bytes)
            times: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for _ in range(args.starts):
                for kind in KINDS:
                    os.environ["TAPIS_SANDBOX_STARTER"] = "python" if kind == KINDS[1] else ""
                    started = time.perf_counter()
                    process = spawn_bot(
                        command, bot_dir=bot_dir, limits=limits, writable_exec=kind == KINDS[2]
                    )
                    process.stdin.write(HELLO)
                    process.stdin.flush()
                    line = process.stdout.readline()
                    times[kind].append(time.perf_counter() - started)
                    process.kill()
                    if b"ready" not in line:
                        print(f"{runtime}: no ready ({line[:80]!r})")
                        return 1
            medians = ", ".join(
                f"{kind} {statistics.median(values) * 1e3:6.1f} ms"
                for kind, values in times.items()
            )
            print(f"{runtime:10} start-up to ready: {medians}")
            remove(prepared.directory)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
