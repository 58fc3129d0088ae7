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

import dataclasses
import functools
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from judge.sandbox import _reaper
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
    also has ``pids`` and the CPU controllers) and, in cgroup v1, ``pids`` in the pids
    hierarchy (None: not usable, ``RLIMIT_NPROC`` alone bounds the processes); the CPU's:
    ``freezer`` (a bot waiting for its turn is frozen), ``cpuacct`` (its CPU time), ``cpu``
    (a CPU share of its own) and ``cpuset`` (the table's CPUs, which it cannot widen), each
    None where the host does not offer it (docs/sandbox.md, "CPU")."""

    version: CgroupVersion
    memory: Path
    pids: Path | None
    freezer: Path | None = None
    cpuacct: Path | None = None
    cpu: Path | None = None
    cpuset: Path | None = None

    def __str__(self) -> str:
        return ", ".join(str(p) for p in self.all())

    def all(self) -> list[Path]:
        """Every parent folder, once each."""
        parents = (self.memory, self.pids, self.freezer, self.cpuacct, self.cpu, self.cpuset)
        return list(dict.fromkeys(p for p in parents if p is not None))


class _Cgroup:
    """The cgroups of one sandbox (one directory in v2, one per hierarchy in v1)."""

    _counter = 0
    _counter_lock = threading.Lock()
    _guarded_by = 0  # the pid of the process that swept and has a guardian (a fork: anew)
    _guardian: subprocess.Popen[bytes] | None = None

    def __init__(self, parents: CgroupParents, name: str) -> None:
        self.version = parents.version
        self.path = parents.memory / name  # the directory with the memory controller

        def child(parent: Path | None) -> Path | None:
            return parent / name if parent is not None else None

        self.pids = child(parents.pids)
        self.freezer = child(parents.freezer)
        self.cpuacct = child(parents.cpuacct)
        self.cpuset = child(parents.cpuset)
        self.folders = tuple(parent / name for parent in parents.all())
        self.frozen = False
        self._fds: dict[str, int] = {}  # cgroup files kept open
        self._threads: dict[bytes, int] = {}  # /proc/TID/schedstat kept open, by tid

    @classmethod
    def create(cls, limits: SandboxLimits) -> _Cgroup | None:
        parents = cgroup_parents()
        if parents is None:
            return None
        with cls._counter_lock:
            if cls._guarded_by != os.getpid():
                cls._guarded_by = os.getpid()
                sweep_stale_cgroups(parents)
                cls._guardian = _start_guardian(parents)
            cls._counter += 1
            name = f"{_own_prefix()}{cls._counter}"
        cgroup = cls(parents, name)
        try:
            cgroup._set_up(limits, parents)
        except OSError as exc:
            cgroup.remove()
            raise SandboxError(f"cannot set up the cgroup {cgroup.path}: {exc}") from exc
        return cgroup

    def _set_up(self, limits: SandboxLimits, parents: CgroupParents) -> None:
        version = self.version
        for folder in self.folders:
            folder.mkdir()
        self._write(self.path, version.memory_limit, str(limits.memory_bytes))
        if (self.path / version.swap_limit).exists():
            self._write(self.path, version.swap_limit, version.swap_value(limits.memory_bytes))
        if self.pids is not None:
            self._write(self.pids, "pids.max", str(limits.max_processes))
        if self.cpuset is not None and parents.cpuset is not None:
            if self.version is V1:  # a v1 cpuset takes no process until its mems are set
                mems = (parents.cpuset / "cpuset.mems").read_text().strip()
                self._write(self.cpuset, "cpuset.mems", mems)
            self.set_cpus(os.sched_getaffinity(0))  # the table's (the judge's own)

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

    def set_cpus(self, cpus: set[int] | frozenset[int]) -> None:
        """Let the sandbox run on ``cpus`` only; its processes cannot widen it
        (``sched_setaffinity``). Nothing without a cpuset cgroup."""
        if self.cpuset is not None and cpus:
            self._write(self.cpuset, "cpuset.cpus", ",".join(map(str, sorted(cpus))))

    def freeze(self) -> None:
        """Stop every process of the sandbox until :meth:`thaw` (nothing without a freezer)."""
        if self.freezer is not None and not self.frozen:
            self._set_frozen(True)

    def thaw(self) -> None:
        if self.freezer is not None and self.frozen:
            self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> None:
        assert self.freezer is not None
        if self.version is V1:
            name, value = _reaper.V1_FREEZER, b"FROZEN" if frozen else b"THAWED"
        else:
            name, value = _reaper.V2_FREEZER, b"1" if frozen else b"0"
        # kept open: opening a cgroup's file costs more than the write (bench/judge.py)
        os.write(self._open(self.freezer / name, os.O_WRONLY), value)
        self.frozen = frozen

    def _open(self, path: Path, flags: int) -> int:
        key = str(path)
        fd = self._fds.get(key)
        if fd is None:
            fd = self._fds[key] = os.open(path, flags | os.O_CLOEXEC)
        return fd

    def _pread(self, path: Path) -> bytes:
        fd, size = self._open(path, os.O_RDONLY), 4096  # a large buffer costs more than a read
        while len(data := os.pread(fd, size, 0)) == size:
            size *= 16
        return data

    def cpu_reading(self) -> tuple[float, float] | None:
        """(seconds its threads have waited for a CPU, seconds of CPU it has used) so far, or
        None without a CPU accounting cgroup. The wait is the sum of each thread's
        ``run_delay`` (/proc/TID/schedstat) over the threads now in the sandbox."""
        folder = self.cpuacct
        if folder is None:
            return None
        try:
            if self.version is V1:
                cpu = int(self._pread(folder / "cpuacct.usage")) / 1e9
                tids = self._pread(folder / "tasks").split()
            else:
                stat = self._pread(folder / "cpu.stat").split()
                cpu = int(stat[stat.index(b"usage_usec") + 1]) / 1e6
                tids = self._pread(folder / "cgroup.threads").split()
        except (OSError, ValueError, IndexError):
            return None
        return self._waited(tids) / 1e9, cpu

    def _waited(self, tids: list[bytes]) -> int:
        """The sum of the threads' run_delay (ns), through a descriptor kept per thread."""
        waited = 0
        old, self._threads = self._threads, {}
        for tid in tids:
            fd = old.pop(tid, None)
            for _ in range(2):  # a descriptor kept may be of a thread gone (its tid reused)
                try:
                    if fd is None:
                        fd = os.open(b"/proc/%s/schedstat" % tid, os.O_RDONLY | os.O_CLOEXEC)
                    waited += int(os.pread(fd, 256, 0).split()[1])
                    self._threads[tid] = fd
                    break
                except (OSError, ValueError, IndexError):  # gone meanwhile
                    if fd is not None:
                        os.close(fd)
                    fd = None
        for fd in old.values():
            os.close(fd)
        return waited

    def _close(self) -> None:
        for fd in [*self._fds.values(), *self._threads.values()]:
            os.close(fd)
        self._fds, self._threads = {}, {}

    def kill(self) -> None:
        """Kill every process left in the cgroups (``cgroup.kill`` in v2, else one by one
        through a pidfd of each listed process), and thaw them: a frozen process dies only
        once thawed."""
        _reaper.kill_procs(self.path)
        for folder in self.folders[1:]:
            if _reaper.procs(folder):  # a process of the sandbox is in all its cgroups
                _reaper.kill_procs(folder)
        if self.freezer is not None:
            _reaper.set_frozen(self.freezer, False)
            self.frozen = False

    def remove(self) -> None:
        """Remove the cgroups, waiting while the kernel still counts dying processes in them."""
        self._close()
        for folder, exc in _reaper.end(list(self.folders), KILL_TIMEOUT):
            log.warning("cannot remove the cgroup %s: %s", folder, exc)
        self.frozen = False

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


def _prefix(pid: int, start: int) -> str:
    """The start of the names of the cgroups made by process ``pid`` of this pid namespace,
    which started at ``start`` (clock ticks since boot: a reused pid has another)."""
    return f"tapis-bot-{_pid_namespace()}-{pid}at{start}-"


def _own_prefix() -> str:
    return _prefix(os.getpid(), _start_time(os.getpid()) or 0)


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (field 22 of /proc/PID/stat), or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


@functools.cache
def _pid_namespace() -> int:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _start_guardian(parents: CgroupParents) -> subprocess.Popen[bytes] | None:
    """The process that ends this judge's cgroups once it is gone, however it ended
    (judge/sandbox/_reaper.py): out of the judge's process group and session, holding none of
    its descriptors but a pidfd of it."""
    pidfd = os.pidfd_open(os.getpid())
    prefix = _own_prefix()
    command = [sys.executable, "-S", "-I", _reaper.__file__, str(pidfd), prefix]
    try:
        return subprocess.Popen(
            [*command, *map(str, parents.all())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(pidfd,),
            start_new_session=True,
            cwd="/",
        )
    except OSError as exc:
        log.warning("sandbox: no guardian for the cgroups of this judge: %s", exc)
        return None
    finally:
        os.close(pidfd)


def sweep_stale_cgroups(parents: CgroupParents, timeout: float = KILL_TIMEOUT) -> list[Path]:
    """End (kill, thaw, remove) the cgroups left under ``parents`` by judges of this pid
    namespace that are gone: a judge killed while its guardian was killed too, or before
    there were guardians. Returns those removed; logs one line in all for those it could not
    within ``timeout`` seconds each.

    A judge is gone when no process has its pid and start time (so a pid reused is not it);
    the cgroups of a live process, or of another pid namespace, are never touched.
    """
    # tapis-bot-[NS-]PID-N: the names before there were start times in them
    pattern = re.compile(rf"tapis-bot-(?:{_pid_namespace()}-)?(\d+)(?:at(\d+))?-\d+")

    def stale(name: str) -> bool:
        match = pattern.fullmatch(name)
        if match is None:
            return False
        pid, start = int(match.group(1)), match.group(2)
        now = _start_time(pid)
        if start is None:  # an old name: gone with its pid (never ours: we name anew)
            return now is None or pid == os.getpid()
        return now is None or now != int(start)

    removed, failed = [], []
    for folders in _reaper.by_name(parents.all(), stale).values():
        problems = _reaper.end(folders, timeout)
        failed += problems
        removed += [f for f in folders if f not in {folder for folder, _ in problems}]
    if failed:
        folder, exc = failed[0]
        log.warning("cannot remove %d stale cgroups, e.g. %s: %s", len(failed), folder, exc)
    return removed


def out_of_memory(cgroup: _Cgroup | None, before: int = 0) -> str:
    """Why a sandbox died, if its cgroup's memory limit killed a process in it since it had
    ``before`` such kills; else ''."""
    if cgroup is None or cgroup.oom_kills() <= before:
        return ""
    limit = cgroup.memory_limit()
    at = f" of {limit // 2**20} MiB" if limit is not None else ""
    return f"killed at its memory limit{at} (out of memory in its {cgroup.version.name})"


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
            parents, problem = _v1_parents(path, _proc_self())
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
        parents, problem = _v1_parents(memory, (mountinfo, proc_self_cgroup))
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
    cpuset = path if "cpuset" in controllers else None
    cpu = path if "cpu" in controllers else None
    # cgroup.freeze (Linux 5.2) and cpu.stat are in every cgroup but the root
    return CgroupParents(V2, path, path, path, path, cpu, cpuset), ""


_V1_OTHERS = ("pids", "freezer", "cpuacct", "cpu", "cpuset")  # used beside memory


def _v1_parents(memory: Path, texts: tuple[str, str] | None) -> tuple[CgroupParents | None, str]:
    """The judge's cgroup ``memory`` of the v1 memory hierarchy, with its own cgroups of the
    other hierarchies (``texts``: its /proc/self/{mountinfo,cgroup}) that are writable."""
    if not (memory / V1.memory_limit).exists():
        return None, f"not a cgroup v1 memory directory (no {V1.memory_limit})"
    if not os.access(memory, os.W_OK):
        return None, "not writable"
    others: dict[str, Path | None] = {}
    for controller in _V1_OTHERS:
        folder = parse_cgroup_v1(*texts, controller) if texts is not None else None
        if folder is not None and not (
            (folder / "cgroup.procs").exists() and os.access(folder, os.W_OK)
        ):
            log.info("sandbox: cgroup v1 %s %s is not writable; not used", controller, folder)
            folder = None
        others[controller] = folder
    return CgroupParents(V1, memory, **others), ""


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
