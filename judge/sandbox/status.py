"""What the sandbox of this host provides (for logs, docs and the bench)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from judge.sandbox import seccomp, starters
from judge.sandbox.bwrap import _bwrap_path
from judge.sandbox.cgroups import NO_CGROUP, CgroupParents, cgroup_parents
from judge.sandbox.limits import SandboxError
from judge.sandbox.uids import SANDBOX_UID_COUNT, _uid_base


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """What the sandbox of this host provides (for logs, docs and the bench)."""

    bwrap: str | None
    seccomp_instructions: int
    uid_range: tuple[int, int] | None  # None: the sandbox runs as the judge's uid
    cgroup_parent: str | None  # where each sandbox gets its cgroups (None: rlimits only)
    problems: tuple[str, ...]
    memory_accounting: str = NO_CGROUP  # what bounds a bot's memory used: "cgroup v2", "cgroup v1"
    starter: str = ""  # what makes /tmp noexec: the C starter's path, or "python"


def sandbox_status() -> SandboxStatus:
    problems: list[str] = []
    bwrap: str | None = None
    try:
        bwrap = _bwrap_path()
    except SandboxError as exc:
        problems.append(str(exc))
    instructions = 0
    try:
        instructions = len(seccomp.filter_program()) // 8
    except seccomp.SeccompError as exc:
        problems.append(str(exc))
    parents: CgroupParents | None = None
    try:
        parents = cgroup_parents()
    except SandboxError as exc:
        problems.append(str(exc))
    uid_range: tuple[int, int] | None = None
    if os.geteuid() == 0:
        try:
            base = _uid_base()
            uid_range = (base, base + SANDBOX_UID_COUNT - 1)
        except SandboxError as exc:
            problems.append(str(exc))
    native = starters.native_starter()
    starter = str(native) if native is not None else "python"
    if native is None and not os.access(starters.PYTHON, os.X_OK):
        problems.append(f"no starter: neither gcc to build the C one nor {starters.PYTHON}")
    return SandboxStatus(
        bwrap=bwrap,
        starter=starter,
        seccomp_instructions=instructions,
        uid_range=uid_range,
        cgroup_parent=str(parents) if parents is not None else None,
        memory_accounting=parents.version.name if parents is not None else NO_CGROUP,
        problems=tuple(problems),
    )


def uid_processes(uid: int) -> list[int]:
    """Host pids whose real uid is ``uid`` (used by tests and diagnostics)."""
    return list(_iter_uid_processes(uid))


def _iter_uid_processes(uid: int) -> Iterator[int]:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    yield int(entry.name)
                break
