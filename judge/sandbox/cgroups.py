"""A cgroup v2 of its own per sandbox, when the host offers a usable one."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import threading
import time
from pathlib import Path

from judge.sandbox.limits import KILL_TIMEOUT, SandboxError, SandboxLimits

log = logging.getLogger(__name__)


class _Cgroup:
    """A cgroup v2 of its own for one sandbox: memory.max, memory.swap.max, pids.max."""

    _counter = 0
    _counter_lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, limits: SandboxLimits) -> _Cgroup | None:
        parent = cgroup_parent()
        if parent is None:
            return None
        with cls._counter_lock:
            cls._counter += 1
            name = f"tapis-bot-{os.getpid()}-{cls._counter}"
        path = parent / name
        try:
            path.mkdir()
            cgroup = cls(path)
            cgroup._write("memory.max", str(limits.memory_bytes))
            if (path / "memory.swap.max").exists():
                cgroup._write("memory.swap.max", "0")
            cgroup._write("pids.max", str(limits.max_processes))
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.rmdir()
            raise SandboxError(f"cannot set up the cgroup {path}: {exc}") from exc
        return cgroup

    def _write(self, name: str, value: str) -> None:
        (self.path / name).write_text(value)

    def attach(self, pid: int) -> None:
        try:
            self._write("cgroup.procs", str(pid))
        except OSError as exc:
            raise SandboxError(f"cannot move the sandbox into {self.path}: {exc}") from exc

    def kill(self) -> None:
        if (self.path / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                self._write("cgroup.kill", "1")

    def remove(self) -> None:
        deadline = time.monotonic() + KILL_TIMEOUT
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    log.warning("cannot remove the cgroup %s: %s", self.path, exc)
                    return
                time.sleep(0.01)


def cgroup_parent() -> Path | None:
    """The cgroup v2 directory under which each sandbox gets its own cgroup, or None.

    ``TAPIS_SANDBOX_CGROUP`` names it explicitly (a delegated directory with
    ``memory`` and ``pids`` in its ``cgroup.subtree_control``); a configured
    but unusable one is an error. Otherwise the judge's own cgroup is used
    when it already delegates both controllers and is writable (the root cgroup
    of a machine or a container, typically). Otherwise None: the rlimits alone
    apply (docs/sandbox.md).
    """
    configured = os.environ.get("TAPIS_SANDBOX_CGROUP")
    if configured:
        path = Path(configured)
        problem = _cgroup_problem(path)
        if problem:
            raise SandboxError(f"TAPIS_SANDBOX_CGROUP={configured}: {problem}")
        return path
    return _detected_cgroup_parent()


@functools.cache
def _detected_cgroup_parent() -> Path | None:
    own = _own_cgroup_v2()
    if own is None:
        log.info("sandbox: no cgroup v2 hierarchy; rlimits only")
        return None
    problem = _cgroup_problem(own)
    if problem:
        log.info("sandbox: cgroup v2 %s is not usable (%s); rlimits only", own, problem)
        return None
    return own


def _cgroup_problem(path: Path) -> str:
    try:
        controllers = (path / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return f"not a cgroup v2 directory ({exc.strerror})"
    missing = {"memory", "pids"} - set(controllers)
    if missing:
        return f"controllers {', '.join(sorted(missing))} not enabled in cgroup.subtree_control"
    if not os.access(path, os.W_OK):
        return "not writable"
    return ""


def _own_cgroup_v2() -> Path | None:
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        own = Path("/proc/self/cgroup").read_text()
    except OSError:
        return None
    return parse_cgroup_v2(mountinfo, own)


def parse_cgroup_v2(mountinfo: str, proc_self_cgroup: str) -> Path | None:
    """Where this process's cgroup v2 directory is, from /proc/self/{mountinfo,cgroup}.

    >>> parse_cgroup_v2(
    ...     "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\\n",
    ...     "0::/system.slice/tapis-worker.service\\n",
    ... )
    PosixPath('/sys/fs/cgroup/system.slice/tapis-worker.service')
    """
    relative = None
    for line in proc_self_cgroup.splitlines():
        if line.startswith("0::"):
            relative = line[3:].strip()
    if relative is None:
        return None
    for line in mountinfo.splitlines():
        fields = line.split()
        try:
            fstype = fields[fields.index("-") + 1]
        except (ValueError, IndexError):
            continue
        if fstype == "cgroup2":
            root, mount_point = fields[3], fields[4]
            if not relative.startswith(root):
                continue
            inner = relative[len(root) :].lstrip("/")
            return Path(mount_point) / inner if inner else Path(mount_point)
    return None
