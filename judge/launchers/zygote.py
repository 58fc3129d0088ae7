"""Zygotes: one started sandbox per entry's version, forking the bot afresh for each table.

A sandboxed Python bot costs more CPU to start (setpriv, prlimit, bubblewrap's namespaces and
mounts, the interpreter's start-up) than to play a whole table of eight deals
(bench/tournament.py). A zygote pays the start once: a sandbox built as for a bot started
alone (judge.sandbox.spawn_bot: its own uid, rlimits, ``/bot`` read-only), running
judge/sdk/_tapis_zygote.py instead of the bot. For each table the judge hands it three fresh
pipes and it starts the bot in a new sandbox inside its own: new mount, IPC, network, UTS and
pid namespaces, a new tmpfs ``/tmp``, its own ``/proc``, the bot as pid 1, no capability and
the bot's seccomp filter. After the table the judge kills the bot through a pidfd (which kills
its whole pid namespace) and the zygote kills whatever else is left before it is lent again.
A table's bot therefore starts from a pristine sandbox, as a bot started alone does: nothing
an earlier table wrote is there, by any channel (docs/sandbox.md lists them).

A zygote belongs to one :attr:`ZygoteKey.instance`, which the caller names (the tournaments:
one version of one entry): two uploads never share one, even of identical bytes, and a bot spec
without an instance is always started alone. What the tables of one instance share is the
zygote process itself (its imported modules, its uid, its cgroup), which no bot can reach or
change. A zygote is lent to one seat at a time, so one version at
two seats of one table gets two zygotes.

The pool (:func:`lend`, :func:`give_back`) is per judge process: at most :data:`MAX_IDLE`
idle zygotes, each retired after :data:`IDLE_SECONDS` without a table or after
:data:`MAX_TABLES` tables, and all killed when the process exits. A zygote that fails in any
way (does not start, does not answer, cannot clean) is killed and the seat falls back to a
bot started alone.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import logging
import math
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final, cast

from judge._fds import wait_readable
from judge.clock import WALL_CAP
from judge.launchers.package import RUNTIMES, PackageError, PreparedBot, prepare, remove
from judge.sandbox import (
    SDK_ROOT,
    BotProcess,
    SandboxError,
    SandboxLimits,
    seccomp,
    spawn_bot,
)
from judge.sandbox.system import python_paths

log = logging.getLogger(__name__)

SCRIPT: Final = "_tapis_zygote.py"  # in the SDK directory
PYTHON: Final = RUNTIMES["python3"]  # how the bot would be started alone
MAX_IDLE: Final = 32  # idle zygotes kept per judge process
IDLE_SECONDS: Final = 120.0
MAX_TABLES: Final = 200  # tables a zygote serves before it is retired
_ANSWER_TIMEOUT: Final = 5.0  # seconds for the zygote to answer a fork or a clean
ZYGOTE_PROCESSES: Final = 2  # the process bubblewrap starts, and the zygote proper
_EXIT_STATUS_WAIT: Final = 0.1  # seconds to wait for the status of a child seen dead


class ZygoteError(RuntimeError):
    """The zygote failed: it is killed, and the seat's bot is started alone."""


@dataclass(frozen=True, slots=True)
class ZygoteKey:
    """What makes two seats' bots the same bot: the same instance (one bot version, as the
    caller names it), package, SDK and limits. Identical bytes of two instances are two
    keys."""

    instance: str
    package: str
    files: tuple[tuple[str, int, int], ...]  # (path in the package, mtime in ns, size)
    sdk: str
    limits: SandboxLimits

    @classmethod
    def of(cls, instance: str, package: Path, sdk_dir: Path, limits: SandboxLimits) -> ZygoteKey:
        """The key of ``package`` as it is now: a changed file makes another key."""
        package = package.resolve()
        paths = sorted(p for p in package.rglob("*") if p.is_file()) if package.is_dir() else []
        files = [(str(p.relative_to(package)), p.stat()) for p in paths or [package]]
        stamped = tuple((name, info.st_mtime_ns, info.st_size) for name, info in files)
        return cls(instance, str(package), stamped, str(sdk_dir), limits)


def usable(prepared_command: Sequence[str], sdk_dir: Path | None) -> bool:
    """Whether a bot started with ``prepared_command`` can be forked by a zygote: a Python bot
    (the zygote is Python) with the SDK directory (where the zygote's program is)."""
    return (
        sdk_dir is not None
        and tuple(prepared_command[: len(PYTHON)]) == PYTHON
        and len(prepared_command) == len(PYTHON) + 1
        and (sdk_dir / SCRIPT).is_file()
    )


class Zygote:
    """One instance's sandbox running the zygote program; see the module's docstring."""

    def __init__(
        self,
        key: ZygoteKey,
        directory: Path,
        entry: str,
        process: BotProcess,
        control: socket.socket,
    ) -> None:
        self.key = key
        self.entry = entry  # the bot's entry as the sandbox sees it, e.g. /bot/main.py
        self.directory = directory  # the prepared package, bound at /bot; removed with it
        self.process = process
        self.control = control
        self.tables = 0
        self.idle_since = time.monotonic()
        self._exits: dict[int, int] = {}  # sandbox pid -> status, as the zygote reports them

    @classmethod
    def start(
        cls, key: ZygoteKey, package: Path, directory: Path, *, sdk_dir: Path, startup: float
    ) -> Zygote:
        """Prepare the package in ``directory`` (the zygote owns it from now on) and start the
        zygote in its sandbox; raises :class:`ZygoteError` (or the package's error)."""
        zygote = cls.launch(key, package, directory, sdk_dir=sdk_dir)
        zygote.await_ready(time.perf_counter() + startup)
        return zygote

    @classmethod
    def launch(cls, key: ZygoteKey, package: Path, directory: Path, *, sdk_dir: Path) -> Zygote:
        """:meth:`start` without waiting for the zygote's ``ready`` (:meth:`await_ready`): the
        zygotes of a table's seats start side by side."""
        prepared: PreparedBot = prepare(package, directory)
        if not usable(prepared.command, sdk_dir):
            remove(directory)
            raise ZygoteError(f"not a Python bot: {prepared.command!r}")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        bot_filter: int | None = None
        try:
            try:
                bot_filter = seccomp.filter_fd()  # loaded by each bot, on top of the zygote's
            except seccomp.SeccompError as exc:
                raise SandboxError(f"cannot build the seccomp filter: {exc}") from exc
            command = [
                *PYTHON,
                f"{SDK_ROOT}/{SCRIPT}",
                str(theirs.fileno()),
                str(bot_filter),
                str(key.limits.tmp_bytes),
                prepared.command[-1],  # the entry, whose imports the zygote makes ahead
            ]
            # The zygote's own processes do not count against the bot's.
            processes = key.limits.max_processes + ZYGOTE_PROCESSES
            process = spawn_bot(
                command,
                bot_dir=prepared.directory,
                limits=dataclasses.replace(key.limits, max_processes=processes),
                sdk_dir=sdk_dir,
                pass_fds=(theirs.fileno(), bot_filter),
                namespace_admin=True,
                system=python_paths(),
            )
        except BaseException:
            ours.close()
            remove(directory)
            raise
        finally:
            theirs.close()
            if bot_filter is not None:
                os.close(bot_filter)
        return cls(key, directory, prepared.command[-1], process, ours)

    def await_ready(self, deadline: float) -> None:
        """Wait until ``deadline`` (``time.perf_counter``) for the launched zygote's
        ``ready``; raises :class:`ZygoteError`, having killed it."""
        try:
            if self._receive(deadline)[0] != b"ready":
                raise ZygoteError("the zygote did not start")
        except BaseException:
            self.kill()
            raise

    def alive(self) -> bool:
        return self.process.poll() is None

    def fork(self, cpus: set[int] | None = None) -> ForkedBot:
        """A new bot process for one table, on ``cpus`` (None: the zygote's); raises
        :class:`ZygoteError`."""
        pipes = [os.pipe() for _ in range(3)]
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        where = ",".join(map(str, sorted(cpus))) if cpus else "-"
        try:
            if cpus:  # the zygote's cpuset follows its tables
                try:
                    self.process.set_cpus(cpus)
                except OSError as exc:
                    raise ZygoteError(f"cannot move the zygote to CPUs {where}: {exc}") from exc
            self.process.make_resident()  # what an earlier table's bot read tells nothing
            command = f"fork {where} {self.entry}".encode()
            socket.send_fds(self.control, [command], theirs)
            answer, pidfds = self._receive(time.perf_counter() + _ANSWER_TIMEOUT, fds=1)
            if not answer.startswith(b"pid ") or len(pidfds) != 1:
                for fd in pidfds:
                    os.close(fd)
                raise ZygoteError(f"the zygote answered {answer[:40]!r} to fork")
            inner, pidfd = int(answer[4:]), pidfds[0]
            host = _pidfd_pid(pidfd)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        self.tables += 1
        return ForkedBot(self, inner, host, pidfd, ours)

    def clean(self) -> bool:
        """Kill every process the last table left in the zygote's sandbox."""
        try:
            self.control.sendmsg([b"clean"])
            return self._receive(time.perf_counter() + _ANSWER_TIMEOUT)[0] == b"clean"
        except (OSError, ZygoteError):
            return False

    def exit_status(self, inner: int, wait: float) -> int | None:
        """The status the zygote reported for its child ``inner``, waiting up to ``wait``."""
        deadline = time.perf_counter() + wait
        while inner not in self._exits:
            try:
                self._receive(deadline, keep_exits=True)
            except ZygoteError:
                break
        return self._exits.pop(inner, None)

    def kill(self) -> None:
        self.process.kill()
        with contextlib.suppress(OSError):
            self.control.close()
        remove(self.directory)

    def _receive(
        self, deadline: float, *, keep_exits: bool = False, fds: int = 0
    ) -> tuple[bytes, list[int]]:
        """The next answer of the zygote, with up to ``fds`` descriptors (``exit`` reports are
        noted on the way; with ``keep_exits``, returned too)."""
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise ZygoteError("the zygote did not answer in time")
            ready, _, _ = select.select([self.control], [], [], remaining)
            if not ready:
                continue
            message, received, _, _ = socket.recv_fds(self.control, 4096, max(fds, 1))
            if not message:
                raise ZygoteError("the zygote is gone")
            if len(received) > fds:  # never asked for: close them
                for fd in received[fds:]:
                    os.close(fd)
                received = received[:fds]
            if message.startswith(b"exit "):
                with contextlib.suppress(ValueError):
                    _, inner, status = message.split()
                    self._exits[int(inner)] = int(status)
                if keep_exits:
                    return message, received
                continue
            return message, received


class ForkedBot:
    """A bot forked by a zygote for one table: what :class:`judge.sandbox.BotProcess` is to a
    bot started alone (same pipes, poll, wait, kill). ``kill`` gives the zygote back."""

    mode = "bwrap"

    def __init__(self, zygote: Zygote, inner: int, host: int, pidfd: int, fds: list[int]) -> None:
        self.zygote = zygote
        self.pid = host
        self.sandbox_pid: int | None = host
        self.uid = zygote.process.uid
        self.stdin = cast(BinaryIO, io.FileIO(fds[0], "wb"))
        self.stdout = cast(BinaryIO, io.FileIO(fds[1], "rb"))
        self.stderr = cast(BinaryIO, io.FileIO(fds[2], "rb"))
        self._inner = inner
        self._oom_kills = zygote.process.oom_kills()  # the zygote's cgroup is the bot's
        self._pidfd: int | None = pidfd
        self._status: int | None = None
        self._killed = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<ForkedBot pid={self.pid} uid={self.uid} status={self._status}>"

    @property
    def returncode(self) -> int | None:
        return self._status

    def poll(self) -> int | None:
        """The exit status (the code, or 128 + the signal) once the bot has exited."""
        if self._status is None and self._pidfd is not None and wait_readable(self._pidfd, 0):
            status = self.zygote.exit_status(self._inner, _EXIT_STATUS_WAIT)
            self._status = status if status is not None else 128 + signal.SIGKILL
        return self._status

    def exit_reason(self) -> str:
        """An out-of-memory kill in the zygote's cgroup since this bot was forked, or ''."""
        return self.zygote.process.exit_reason(self._oom_kills)

    def wait(self, timeout: float | None = None) -> int:
        if self._pidfd is not None:
            wait_readable(self._pidfd, math.inf if timeout is None else timeout)
        status = self.poll()
        if status is None:
            raise subprocess.TimeoutExpired(f"bot pid {self.pid}", timeout or 0.0)
        return status

    def freeze(self) -> None:
        """Stop the bot (and its zygote: one cgroup) until :meth:`thaw`."""
        if not self._killed:
            self.zygote.process.freeze()

    def thaw(self) -> None:
        if not self._killed:
            self.zygote.process.thaw()

    def cpu_reading(self) -> tuple[float, float] | None:
        """The zygote's cgroup's (its two processes wait, blocked, while the bot plays)."""
        return self.zygote.process.cpu_reading()

    def kill(self) -> None:
        """Kill the bot (and, through the zygote's clean, what it left), close the pipes and
        give the zygote back to the pool. Idempotent."""
        with self._lock:
            if self._killed:
                return
            self._killed = True
            if self._pidfd is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                self.zygote.process.thaw()  # a frozen process dies only once thawed
                gone = wait_readable(self._pidfd, _ANSWER_TIMEOUT)
                os.close(self._pidfd)
                self._pidfd = None
            else:
                gone = True
            for pipe in (self.stdin, self.stdout, self.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()
        give_back(self.zygote, healthy=gone)

    def __enter__(self) -> ForkedBot:
        return self

    def __exit__(self, *_: object) -> None:
        self.kill()

    def __del__(self) -> None:
        if not getattr(self, "_killed", True):
            with contextlib.suppress(Exception):
                self.kill()


def _pidfd_pid(pidfd: int) -> int:
    """The pid (in the judge's namespace) of the process a pidfd refers to."""
    try:
        for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
            if line.startswith("Pid:"):
                pid = int(line.split()[1])
                if pid > 0:
                    return pid
    except (OSError, ValueError, IndexError) as exc:
        raise ZygoteError(f"not a pidfd of a live process: {exc}") from exc
    raise ZygoteError("not a pidfd of a live process")


# --------------------------------------------------------------------------- the pool

_lock = threading.Lock()
_idle: list[Zygote] = []
_counter = 0
_root: Path | None = None  # where this process prepares its zygotes' packages


@dataclass(frozen=True, slots=True)
class Loan:
    """What one seat asks of the pool: a bot of ``package`` for ``instance`` on ``cpus``
    (None: wherever the zygote runs)."""

    package: Path
    instance: str
    cpus: frozenset[int] | None = None


def lend(
    package: Path,
    *,
    instance: str,
    sdk_dir: Path,
    limits: SandboxLimits,
    startup: float,
    cpus: set[int] | None = None,
) -> ForkedBot:
    """A forked bot of ``package`` for ``instance``, on ``cpus`` (None: wherever the zygote
    runs): from an idle zygote of the same key, else from a new zygote (which must answer
    within ``startup`` seconds). Raises ZygoteError, SandboxError, OSError or the package's
    error."""
    loan = Loan(package, instance, frozenset(cpus) if cpus is not None else None)
    [bot] = lend_all([loan], sdk_dir=sdk_dir, limits=limits, startup=startup)
    if isinstance(bot, Exception):
        raise bot
    return bot


def lend_all(
    loans: Sequence[Loan], *, sdk_dir: Path, limits: SandboxLimits, startup: float
) -> list[ForkedBot | Exception]:
    """A forked bot for each loan (a table's seats), as :func:`lend` gives one, or the error
    that kept it from being forked (ZygoteError, SandboxError, OSError or the package's).

    The zygotes the loans need anew are all launched before any is waited for, and they must
    all answer within ``WALL_CAP`` times ``startup`` seconds (judge/clock.py): a table whose
    four bots are new to this process waits for the slowest start, not for the sum of four
    (most of a start is the zygote's Python, which runs while the next sandbox is built)."""
    bots: list[ForkedBot | Exception | None] = [None] * len(loans)
    idle: list[tuple[int, Zygote]] = []
    launched: list[tuple[int, Zygote]] = []
    try:
        for index, loan in enumerate(loans):
            try:
                key = ZygoteKey.of(loan.instance, loan.package, sdk_dir, limits)
                zygote = _take(key)
                if zygote is not None:
                    idle.append((index, zygote))
                else:
                    launched.append((index, _launch(key, loan.package, sdk_dir)))
            except (ZygoteError, PackageError, SandboxError, OSError) as exc:
                bots[index] = exc
        for index, zygote in idle:
            try:
                bots[index] = zygote.fork(_cpus(loans[index]))
            except (ZygoteError, OSError) as exc:  # it died idle: start another
                log.info("idle zygote of %s failed (%s): starting a new one", zygote.key, exc)
                zygote.kill()
                try:
                    launched.append((index, _launch(zygote.key, loans[index].package, sdk_dir)))
                except (ZygoteError, PackageError, SandboxError, OSError) as error:
                    bots[index] = error
        # A zygote's start is the judge's own code, not the bot's (whose start-up is charged
        # from its fork): on a busy host it may take the wall-clock cap of a start-up.
        deadline = time.perf_counter() + WALL_CAP * startup
        while launched:
            index, zygote = launched.pop(0)
            try:
                zygote.await_ready(deadline)
                bots[index] = zygote.fork(_cpus(loans[index]))
            except (ZygoteError, OSError) as exc:
                zygote.kill()
                bots[index] = exc
    except BaseException:
        for index, zygote in [*idle, *launched]:
            if bots[index] is None:
                zygote.kill()
        for bot in bots:
            if isinstance(bot, ForkedBot):
                bot.kill()
        raise
    return [bot if bot is not None else ZygoteError("not lent") for bot in bots]


def _cpus(loan: Loan) -> set[int] | None:
    return set(loan.cpus) if loan.cpus is not None else None


def _launch(key: ZygoteKey, package: Path, sdk_dir: Path) -> Zygote:
    """A new zygote of ``key``, launched in a directory of this process's own."""
    global _counter, _root
    with _lock:
        if _root is None or not _root.is_dir():
            _root = Path(tempfile.mkdtemp(prefix="tapis-zygotes-"))
            _root.chmod(0o711)  # the sandbox's uid must reach the packages in it
        _counter += 1
        directory = _root / f"zygote-{_counter}"
    return Zygote.launch(key, package, directory, sdk_dir=sdk_dir)


def give_back(zygote: Zygote, *, healthy: bool = True) -> None:
    """After a table: clean the zygote and keep it idle, or retire it."""
    if healthy and zygote.alive() and zygote.tables < MAX_TABLES and zygote.clean():
        zygote.idle_since = time.monotonic()
        with _lock:
            _idle.append(zygote)
            excess = _idle[:-MAX_IDLE] if len(_idle) > MAX_IDLE else []
            del _idle[: len(excess)]
    else:
        excess = [zygote]
    for old in excess:
        old.kill()


def _take(key: ZygoteKey) -> Zygote | None:
    now = time.monotonic()
    found: Zygote | None = None
    with _lock:
        stale = [z for z in _idle if now - z.idle_since > IDLE_SECONDS]
        for zygote in reversed(_idle):
            if zygote.key == key and zygote not in stale:
                found = zygote
                break
        for zygote in [*stale, *([found] if found is not None else [])]:
            _idle.remove(zygote)
    for zygote in stale:
        zygote.kill()
    if found is not None and not found.alive():
        found.kill()
        return None
    return found


def idle_count() -> int:
    with _lock:
        return len(_idle)


def retire_all() -> None:
    """Kill every idle zygote (at exit, and for tests)."""
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for zygote in idle:
        zygote.kill()


def _at_exit() -> None:
    retire_all()
    if _root is not None:
        with contextlib.suppress(OSError):
            _root.rmdir()  # empty unless a zygote is still lent out


def _forget_after_fork() -> None:
    """In a forked judge (a Celery pool process): the parent's zygotes are not its own."""
    global _lock, _idle, _root
    _lock, _idle, _root = threading.Lock(), [], None


atexit.register(_at_exit)
os.register_at_fork(after_in_child=_forget_after_fork)

__all__ = [
    "ForkedBot",
    "Loan",
    "Zygote",
    "ZygoteError",
    "give_back",
    "lend",
    "lend_all",
    "retire_all",
    "usable",
]
