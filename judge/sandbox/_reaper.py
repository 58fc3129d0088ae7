"""Ending the cgroups of a judge: kill what is in them, thaw them, remove them.

Standard library only: the judge's sweep imports it, and each judge process runs it as its
**guardian** (``python3 -S -I _reaper.py PIDFD PREFIX FOLDER...``): a small process outside
every bot's cgroup that waits on a pidfd of the judge and, once the judge is gone however it
ended (``SIGKILL`` included), kills, thaws and removes the cgroups named ``PREFIX*`` under the
folders. A process in a cgroup v1 freezer that is frozen dies of ``SIGKILL`` only once thawed:
without the guardian a judge killed while a bot waited frozen would leave that bot and its
cgroups for good (docs/sandbox.md, "CPU").
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import sys
import time
from pathlib import Path

V1_FREEZER = "freezer.state"
V2_FREEZER = "cgroup.freeze"
V2_KILL = "cgroup.kill"


def procs(folder: Path) -> list[int]:
    """The processes listed in a cgroup (none if it cannot be read)."""
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_procs(folder: Path) -> None:
    """``SIGKILL`` to every process of the cgroup: ``cgroup.kill`` (v2), else each listed
    process through a pidfd opened while it is listed (a pid reused outside is never hit)."""
    if (folder / V2_KILL).exists():
        with contextlib.suppress(OSError):
            (folder / V2_KILL).write_text("1")
        return
    for pid in procs(folder):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:  # gone already
            continue
        try:
            if pid in procs(folder):
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        finally:
            os.close(pidfd)


def set_frozen(folder: Path, frozen: bool) -> None:
    """Freeze or thaw a cgroup (v1 ``freezer.state``, v2 ``cgroup.freeze``); nothing if the
    folder has no freezer."""
    v1, v2 = folder / V1_FREEZER, folder / V2_FREEZER
    with contextlib.suppress(FileNotFoundError):
        if v1.exists():
            v1.write_text("FROZEN" if frozen else "THAWED")
        elif v2.exists():
            v2.write_text("1" if frozen else "0")


def end(folders: list[Path], timeout: float) -> list[tuple[Path, OSError]]:
    """Kill and thaw what is in ``folders`` (the cgroups of one sandbox), then remove them,
    retrying while the kernel still counts dying processes; the folders it could not remove."""
    deadline = time.monotonic() + timeout
    failed = []
    for folder in folders:
        while True:
            try:
                folder.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    failed.append((folder, exc))
                    break
                for each in folders:
                    kill_procs(each)
                    set_frozen(each, False)
                time.sleep(0.01)
    return failed


def by_name(parents: list[Path], wanted: object) -> dict[str, list[Path]]:
    """The cgroups under ``parents`` whose name ``wanted(name)`` accepts, grouped by name
    (one sandbox has one of that name in each hierarchy)."""
    found: dict[str, list[Path]] = {}
    for parent in dict.fromkeys(parents):
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for child in children:
            if child.is_dir() and wanted(child.name):  # type: ignore[operator]
                found.setdefault(child.name, []).append(child)
    return found


def guard(pidfd: int, prefix: str, parents: list[Path]) -> None:
    """Wait until the judge of ``pidfd`` is gone, then end its cgroups."""
    while True:
        try:
            if select.select([pidfd], [], [])[0]:
                break
        except InterruptedError:
            continue
    for folders in by_name(parents, lambda name: name.startswith(prefix)).values():
        end(folders, 5.0)


if __name__ == "__main__":
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    guard(int(sys.argv[1]), sys.argv[2], [Path(p) for p in sys.argv[3:]])
