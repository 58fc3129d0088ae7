"""Pinning a table to one CPU (``run_table(cpu=...)``): a decision's round trip between the
judge and a bot that never crosses CPUs (docs/operations.md, "Zygotes and CPUs")."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from judge._fds import try_lock


def current_cpu() -> int | None:
    """The CPU the calling thread runs on now (Linux), or None if unknown."""
    try:
        with open("/proc/thread-self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return int(fields[36])  # field 39 of proc(5), counted after the command name
    except (OSError, IndexError, ValueError):
        return None


@contextlib.contextmanager
def pinned(cpu: int | Literal["auto", "free"]) -> Iterator[None]:
    """Run the calling thread (and the processes it starts) on one CPU, then restore."""
    try:
        before = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        yield
        return
    with contextlib.ExitStack() as stack:
        if cpu == "free":
            chosen = stack.enter_context(_free_cpu(before))
        else:
            chosen = current_cpu() if cpu == "auto" else cpu
        if chosen is None or chosen not in before:
            if cpu == "free":  # every CPU has a table: leave the scheduler free
                yield
                return
            chosen = min(before)
        try:
            os.sched_setaffinity(0, {chosen})
        except OSError:
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(0, before)


CPU_LOCK_DIR = Path(tempfile.gettempdir()) / "tapis-cpu"


@contextlib.contextmanager
def _free_cpu(allowed: set[int]) -> Iterator[int | None]:
    """A CPU of ``allowed`` that no other table of this host has taken (an ``flock`` on
    ``$TMPDIR/tapis-cpu/<cpu>.lock`` held meanwhile), or None if all are taken."""
    try:
        CPU_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        yield None
        return
    start = os.getpid() % len(allowed)  # workers try the CPUs in different orders
    ordered = sorted(allowed)
    for cpu in ordered[start:] + ordered[:start]:
        try:
            fd = try_lock(CPU_LOCK_DIR / f"{cpu}.lock")
        except OSError:
            break
        if fd is None:
            continue
        try:
            yield cpu
        finally:
            os.close(fd)  # releases the lock
        return
    yield None
