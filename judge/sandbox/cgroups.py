"""A cgroup of its own per sandbox, when the host offers a usable one: cgroup v2, else cgroup v1.

The memory limit of a bot is exact only in a cgroup, which counts the pages its whole tree uses
(its ``/tmp`` too); ``RLIMIT_AS`` counts the address space each process reserves
(docs/sandbox.md, "Memory per runtime"). Both versions give each sandbox the same limits through
one interface, :class:`_Cgroup`; they differ in files (:class:`CgroupVersion`) and in where the
cgroups are made (:class:`CgroupParents`, found by :func:`cgroup_parents`):

- cgroup v2: one directory with ``memory.max``, ``memory.swap.max`` = 0 and ``pids.max``;
- cgroup v1: one in the memory hierarchy with ``memory.limit_in_bytes`` (and
  ``memory.memsw.limit_in_bytes``, memory plus swap, the same, where the host accounts swap),
  and one in the pids hierarchy with ``pids.max`` when that hierarchy is writable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import logging
import os
import re
import signal
import threading
import time
from pathlib import Path

from judge.sandbox.limits import KILL_TIMEOUT, SandboxError, SandboxLimits

log = logging.getLogger(__name__)

CGROUP_ENV = "TAPIS_SANDBOX_CGROUP"  # a parent directory, or "none" (rlimits only)
NO_CGROUP = "none"  # what sandbox_status() reports without one


@dataclasses.dataclass(frozen=True, slots=True)
class CgroupVersion:
    """The files through which one cgroup version limits a sandbox and reports on it."""

    name: str  # "cgroup v2", "cgroup v1": what sandbox_status() reports
    memory_limit: str
    swap_limit: str  # absent where the host does not account swap
    swap_is_total: bool  # the swap file bounds memory + swap (v1), not swap alone (v2)
    events: str  # a flat-keyed file with the count of out-of-memory kills, "oom_kill N"
    kill: str  # writing 1 kills every process in the cgroup ("" where the version has none)

    def swap_value(self, memory_bytes: int) -> str:
        return str(memory_bytes) if self.swap_is_total else "0"


V2 = CgroupVersion(
    name="cgroup v2",
    memory_limit="memory.max",
    swap_limit="memory.swap.max",
    swap_is_total=False,
    events="memory.events",
    kill="cgroup.kill",
)
V1 = CgroupVersion(
    name="cgroup v1",
    memory_limit="memory.limit_in_bytes",
    swap_limit="memory.memsw.limit_in_bytes",
    swap_is_total=True,
    events="memory.oom_control",
    kill="",
)


@dataclasses.dataclass(frozen=True, slots=True)
class CgroupParents:
    """Where each sandbox gets its cgroups: ``memory`` (cgroup v2: the one directory, which
    also has ``pids``) and, in cgroup v1, ``pids`` in the pids hierarchy (None: not usable,
    ``RLIMIT_NPROC`` alone bounds the processes)."""

    version: CgroupVersion
    memory: Path
    pids: Path | None

    def __str__(self) -> str:
        if self.pids is not None and self.pids != self.memory:
            return f"{self.memory}, {self.pids}"
        return str(self.memory)


class _Cgroup:
    """The cgroups of one sandbox (one directory in v2, one per hierarchy in v1)."""

    _counter = 0
    _counter_lock = threading.Lock()
    _swept_by = 0  # the pid of the process that swept the stale cgroups (a fork sweeps anew)

    def __init__(self, version: CgroupVersion, memory: Path, pids: Path | None) -> None:
        self.version = version
        self.path = memory  # the directory with the memory controller
        self.folders = tuple(dict.fromkeys(p for p in (memory, pids) if p is not None))

    @classmethod
    def create(cls, limits: SandboxLimits) -> _Cgroup | None:
        parents = cgroup_parents()
        if parents is None:
            return None
        with cls._counter_lock:
            if cls._swept_by != os.getpid():
                cls._swept_by = os.getpid()
                sweep_stale_cgroups(parents, own=True)
            cls._counter += 1
            name = f"{_prefix(os.getpid())}{cls._counter}"
        pids = parents.pids / name if parents.pids is not None else None
        cgroup = cls(parents.version, parents.memory / name, pids)
        version = cgroup.version
        try:
            for folder in cgroup.folders:
                folder.mkdir()
            cgroup._write(cgroup.path, version.memory_limit, str(limits.memory_bytes))
            if (cgroup.path / version.swap_limit).exists():
                swap = version.swap_value(limits.memory_bytes)
                cgroup._write(cgroup.path, version.swap_limit, swap)
            if pids is not None:
                cgroup._write(pids, "pids.max", str(limits.max_processes))
        except OSError as exc:
            cgroup.remove()
            raise SandboxError(f"cannot set up the cgroup {cgroup.path}: {exc}") from exc
        return cgroup

    @staticmethod
    def _write(folder: Path, name: str, value: str) -> None:
        (folder / name).write_text(value)

    def attach(self, pid: int) -> None:
        """Move ``pid`` into every cgroup of the sandbox (before any of the bot's code runs)."""
        for folder in self.folders:
            try:
                self._write(folder, "cgroup.procs", str(pid))
            except OSError as exc:
                raise SandboxError(f"cannot move the sandbox into {folder}: {exc}") from exc

    def kill(self) -> None:
        """Kill every process left in the cgroups: with ``cgroup.kill`` (v2), else one by one
        through a pidfd of each listed process that is still listed once the pidfd is open
        (so a pid reused outside is never signalled)."""
        for folder in self.folders:
            if self.version.kill and (folder / self.version.kill).exists():
                with contextlib.suppress(OSError):
                    self._write(folder, self.version.kill, "1")
                continue
            for pid in _procs(folder):
                try:
                    pidfd = os.pidfd_open(pid)
                except OSError:  # gone already
                    continue
                try:
                    if pid in _procs(folder):
                        with contextlib.suppress(ProcessLookupError):
                            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                finally:
                    os.close(pidfd)

    def remove(self) -> None:
        """Remove the cgroups, waiting while the kernel still counts dying processes in them."""
        deadline = time.monotonic() + KILL_TIMEOUT
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        log.warning("cannot remove the cgroup %s: %s", folder, exc)
                        break
                    self.kill()
                    time.sleep(0.01)

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in the cgroup at its memory limit."""
        try:
            events = (self.path / self.version.events).read_text()
        except OSError:
            return 0
        for line in events.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def memory_limit(self) -> int | None:
        """The memory limit as the kernel holds it (rounded to pages), in bytes."""
        try:
            return int((self.path / self.version.memory_limit).read_text())
        except (OSError, ValueError):
            return None


def _prefix(pid: int) -> str:
    """The start of the names of the cgroups made by process ``pid`` of this pid namespace."""
    return f"tapis-bot-{_pid_namespace()}-{pid}-"


@functools.cache
def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def sweep_stale_cgroups(parents: CgroupParents, *, own: bool = False) -> list[Path]:
    """Remove the empty cgroups left under ``parents`` by processes of this pid namespace that
    are gone (a worker killed, or ended by ``os._exit``, with zygotes in its pool), and with
    ``own`` (before this process makes any) those named for this very process: its pid reused.
    Returns those removed.

    Each left behind would stay for good, holding kernel memory and one of the host's bounded
    memory cgroup ids; a process that is still there, or of another pid namespace, keeps its
    own.
    """
    # tapis-bot-PID-N: the names before the pid namespace was in them
    pattern = re.compile(rf"tapis-bot-(?:{_pid_namespace()}-)?(\d+)-\d+")
    removed = []
    for parent in dict.fromkeys(p for p in (parents.memory, parents.pids) if p is not None):
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for child in children:
            match = pattern.fullmatch(child.name)
            pid = int(match.group(1)) if match is not None else 0
            if not (pid == os.getpid() and own) and not _gone(pid):
                continue
            try:
                child.rmdir()
            except OSError as exc:  # EBUSY: processes still in it (no bot outlives its judge)
                log.warning("cannot remove the stale cgroup %s: %s", child, exc)
                continue
            removed.append(child)
    return removed


def _gone(pid: int) -> bool:
    if pid <= 0 or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def out_of_memory(cgroup: _Cgroup | None, before: int = 0) -> str:
    """Why a sandbox died, if its cgroup's memory limit killed a process in it since it had
    ``before`` such kills; else ''."""
    if cgroup is None or cgroup.oom_kills() <= before:
        return ""
    limit = cgroup.memory_limit()
    at = f" of {limit // 2**20} MiB" if limit is not None else ""
    return f"killed at its memory limit{at} (out of memory in its {cgroup.version.name})"


def _procs(folder: Path) -> list[int]:
    try:
        return [int(pid) for pid in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def cgroup_parents() -> CgroupParents | None:
    """Where each sandbox gets its cgroups, or None: the rlimits alone apply.

    ``TAPIS_SANDBOX_CGROUP`` names the parent explicitly: a cgroup v2 directory with ``memory``
    and ``pids`` in its ``cgroup.subtree_control``, or a directory of a cgroup v1 memory
    hierarchy (the pids parent is then the judge's own pids cgroup, when writable); a
    configured but unusable one is an error (fail closed). ``none`` turns cgroups off.
    Otherwise the judge's own cgroups are used: its cgroup v2 when it already delegates both
    controllers and is writable, else its cgroup v1 memory cgroup when writable.
    """
    configured = os.environ.get(CGROUP_ENV)
    if configured == NO_CGROUP:
        return None
    if configured:
        path = Path(configured)
        if (path / V1.memory_limit).exists():
            texts = _proc_self()
            pids = parse_cgroup_v1(*texts, "pids") if texts is not None else None
            parents, problem = _v1_parents(path, pids)
        else:
            parents, problem = _v2_parents(path)
        if parents is None:
            raise SandboxError(f"{CGROUP_ENV}={configured}: {problem}")
        return parents
    return _detected_cgroup_parents()


@functools.cache
def _detected_cgroup_parents() -> CgroupParents | None:
    texts = _proc_self()
    return detect_cgroup_parents(*texts) if texts is not None else None


def _proc_self() -> tuple[str, str] | None:
    """This process's /proc/self/mountinfo and /proc/self/cgroup."""
    try:
        return Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text()
    except OSError:
        return None


def detect_cgroup_parents(mountinfo: str, proc_self_cgroup: str) -> CgroupParents | None:
    """The usable cgroups of a process whose /proc/self/{mountinfo,cgroup} are given: cgroup v2
    first, then cgroup v1's memory (and pids) hierarchy; None if neither is usable."""
    problems = []
    v2 = parse_cgroup_v2(mountinfo, proc_self_cgroup)
    if v2 is not None:
        parents, problem = _v2_parents(v2)
        if parents is not None:
            return parents
        problems.append(f"cgroup v2 {v2}: {problem}")
    memory = parse_cgroup_v1(mountinfo, proc_self_cgroup, "memory")
    if memory is not None:
        pids = parse_cgroup_v1(mountinfo, proc_self_cgroup, "pids")
        parents, problem = _v1_parents(memory, pids)
        if parents is not None:
            return parents
        problems.append(f"cgroup v1 {memory}: {problem}")
    log.info("sandbox: no usable cgroup (%s); rlimits only", "; ".join(problems) or "none found")
    return None


def _v2_parents(path: Path) -> tuple[CgroupParents | None, str]:
    try:
        controllers = (path / "cgroup.subtree_control").read_text().split()
    except OSError as exc:
        return None, f"not a cgroup v2 directory ({exc.strerror})"
    missing = {"memory", "pids"} - set(controllers)
    if missing:
        enabled = ", ".join(sorted(missing))
        return None, f"controllers {enabled} not enabled in cgroup.subtree_control"
    if not os.access(path, os.W_OK):
        return None, "not writable"
    return CgroupParents(V2, path, path), ""


def _v1_parents(memory: Path, pids: Path | None) -> tuple[CgroupParents | None, str]:
    if not (memory / V1.memory_limit).exists():
        return None, f"not a cgroup v1 memory directory (no {V1.memory_limit})"
    if not os.access(memory, os.W_OK):
        return None, "not writable"
    if pids is not None and not ((pids / "cgroup.procs").exists() and os.access(pids, os.W_OK)):
        log.info("sandbox: cgroup v1 pids %s is not writable; RLIMIT_NPROC only", pids)
        pids = None
    return CgroupParents(V1, memory, pids), ""


def parse_cgroup_v2(mountinfo: str, proc_self_cgroup: str) -> Path | None:
    """Where this process's cgroup v2 directory is, from /proc/self/{mountinfo,cgroup}.

    >>> parse_cgroup_v2(
    ...     "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\\n",
    ...     "0::/system.slice/tapis-worker.service\\n",
    ... )
    PosixPath('/sys/fs/cgroup/system.slice/tapis-worker.service')
    """
    return _own_cgroup(mountinfo, proc_self_cgroup, None)


def parse_cgroup_v1(mountinfo: str, proc_self_cgroup: str, controller: str) -> Path | None:
    """Where this process's cgroup of the cgroup v1 hierarchy of ``controller`` is, from
    /proc/self/{mountinfo,cgroup}.

    >>> parse_cgroup_v1(
    ...     "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\\n",
    ...     "4:memory:/process_api/685d4e\\n0::/\\n",
    ...     "memory",
    ... )
    PosixPath('/sys/fs/cgroup/memory/process_api/685d4e')
    """
    return _own_cgroup(mountinfo, proc_self_cgroup, controller)


def _own_cgroup(mountinfo: str, proc_self_cgroup: str, controller: str | None) -> Path | None:
    """The directory of this process's cgroup in the hierarchy of ``controller`` (None: the
    cgroup v2 hierarchy), through the first mount of that hierarchy that shows it."""
    relative = None
    for line in proc_self_cgroup.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        unified = number == "0" and controllers == ""
        if (controller is None and unified) or controller in controllers.split(","):
            relative = path.strip()
    if not relative:
        return None
    for line in mountinfo.splitlines():
        fields = line.split()
        try:
            separator = fields.index("-")
            fstype, options = fields[separator + 1], fields[separator + 3].split(",")
        except (ValueError, IndexError):
            continue
        if controller is None and fstype != "cgroup2":
            continue
        if controller is not None and (fstype != "cgroup" or controller not in options):
            continue
        root, mount_point = fields[3], fields[4]
        if root != "/" and relative != root and not relative.startswith(root + "/"):
            continue
        inner = relative[len(root) :].lstrip("/")
        return Path(mount_point) / inner if inner else Path(mount_point)
    return None
