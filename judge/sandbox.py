"""Run a bot in a sandbox: bubblewrap, rlimits, cgroup v2 limits and seccomp.

A submitted bot is a stranger's program. :func:`spawn_bot` starts it under
``bwrap`` with every namespace unshared (no network at all), as an unprivileged
host uid of its own, on a read-only system that holds only the Python runtime,
with its own files read-only at ``/bot``, a private size-limited ``/tmp``, a
minimal environment, resource limits and a seccomp filter; :meth:`BotProcess.kill`
kills the whole process tree. docs/sandbox.md explains the threat model and what
each measure defends.

How a sandbox starts (``mode="bwrap"``):

1. a host uid of the sandbox range is reserved with a lock file (only when the
   judge runs as root; otherwise the sandbox runs as the judge's own uid);
2. ``prlimit`` (util-linux) is started as that uid, in a process group of its
   own, with a minimal environment: it sets the rlimits and executes
   ``bwrap``, which builds the namespaces and the file system, reports the
   host pid of its child (the future bot, pid 1 of the new pid namespace) on
   ``--info-fd``, then waits on ``--block-fd`` before running anything of
   the bot;
3. the judge opens a pidfd on that child and, when the host offers a usable
   cgroup v2, moves it into a fresh cgroup with ``memory.max`` and
   ``pids.max``; then releases the block pipe;
4. bubblewrap loads the seccomp filter and executes the bot.

Nothing of the bot runs before all its limits are in place, and no Python runs
between fork and exec in the judge (``preexec_fn`` is unsafe with threads).
"""

from __future__ import annotations

import array
import contextlib
import errno
import fcntl
import functools
import json
import logging
import math
import os
import re
import resource
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, cast

from judge import seccomp

__all__ = [
    "BOT_ROOT",
    "SANDBOX_UID_BASE",
    "SANDBOX_UID_COUNT",
    "SDK_ROOT",
    "UNSANDBOXED_WARNING",
    "BotProcess",
    "SandboxError",
    "SandboxLimits",
    "SandboxMode",
    "SandboxStatus",
    "require_sandbox",
    "sandbox_status",
    "spawn_bot",
    "warn_unsandboxed",
]

log = logging.getLogger(__name__)

SandboxMode = Literal["bwrap", "none"]

BOT_ROOT = "/bot"
SDK_ROOT = "/sdk"

# Host uids given to sandboxes when the judge runs as root: one per running bot,
# never 0, never "nobody" (shared with NFS and some daemons), outside the
# usual /etc/subuid ranges (100000-165535 per user). Uid and gid are equal.
# TAPIS_SANDBOX_UID_BASE moves the range (e.g. into a container's mapped uids).
SANDBOX_UID_BASE = 1_100_000
SANDBOX_UID_COUNT = 4096
_UID_LOCK_DIR = Path("/run/tapis-sandbox")

# The only environment a bot sees (and bubblewrap itself runs with).
_BASE_ENV: Mapping[str, str] = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
}

UNSANDBOXED_WARNING = (
    "\n"
    "*********************************************************************\n"
    "* WARNING: tapis runs bots WITHOUT A SANDBOX (--sandbox none).        *\n"
    "* A bot can read and change your files, use the network and outlive *\n"
    "* the table. Use this only for your own bots, on your own machine.  *\n"
    "*********************************************************************\n"
)

_TRUSTED_PATH = "/usr/bin:/bin:/usr/local/bin"  # where bwrap, setpriv and prlimit are looked for
_MIN_BWRAP = (0, 8, 0)  # --disable-userns, --size
_START_TIMEOUT = 10.0  # seconds for bubblewrap to build the sandbox
_KILL_TIMEOUT = 5.0  # seconds for a killed tree to disappear
_REAP_GRACE = 1.0  # seconds for bubblewrap to reap the killed bot and exit


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one bot process tree (whole table).

    ``cpu_seconds``, ``memory_bytes``, ``max_file_size`` and ``max_open_files``
    are per process (rlimits); ``max_processes`` counts every process and thread
    of the sandbox's uid, bubblewrap's own monitor process included. With a usable cgroup v2,
    ``memory_bytes`` and ``max_processes`` also bound the whole tree.
    """

    cpu_seconds: int = 120  # RLIMIT_CPU
    memory_bytes: int = 512 * 2**20  # RLIMIT_AS; cgroup v2 memory.max too when available
    max_processes: int = 16  # RLIMIT_NPROC; cgroup v2 pids.max too when available
    max_file_size: int = 8 * 2**20  # RLIMIT_FSIZE
    max_open_files: int = 64  # RLIMIT_NOFILE
    tmp_bytes: int = 16 * 2**20  # size of the private tmpfs /tmp

    def __post_init__(self) -> None:
        for name in (
            "cpu_seconds",
            "memory_bytes",
            "max_processes",
            "max_file_size",
            "max_open_files",
            "tmp_bytes",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive int, not {value!r}")
        if self.max_open_files < 8:
            raise ValueError("SandboxLimits.max_open_files must be at least 8")

    def rlimits(self) -> list[tuple[str, int, int, int]]:
        """(prlimit option, resource, soft, hard) for every rlimit of the bot's processes
        (those the platform knows: some are Linux only)."""
        stack = min(8 * 2**20, self.memory_bytes // 4)
        wanted = [
            # SIGXCPU at the soft limit, SIGKILL one second later
            ("cpu", "RLIMIT_CPU", self.cpu_seconds, self.cpu_seconds + 1),
            ("as", "RLIMIT_AS", self.memory_bytes, self.memory_bytes),
            ("nproc", "RLIMIT_NPROC", self.max_processes, self.max_processes),
            ("fsize", "RLIMIT_FSIZE", self.max_file_size, self.max_file_size),
            ("nofile", "RLIMIT_NOFILE", self.max_open_files, self.max_open_files),
            ("core", "RLIMIT_CORE", 0, 0),
            ("stack", "RLIMIT_STACK", stack, stack),
            ("memlock", "RLIMIT_MEMLOCK", 64 * 2**10, 64 * 2**10),
            ("msgqueue", "RLIMIT_MSGQUEUE", 0, 0),
            ("sigpending", "RLIMIT_SIGPENDING", 256, 256),
            ("nice", "RLIMIT_NICE", 0, 0),
            ("rtprio", "RLIMIT_RTPRIO", 0, 0),
        ]
        limits = []
        for option, name, soft, hard in wanted:
            res: int | None = getattr(resource, name, None)
            if res is not None:
                limits.append((option, res, soft, hard))
        return limits


class SandboxError(RuntimeError):
    """The sandbox could not be set up (bubblewrap missing, bad bot directory, ...)."""


def require_sandbox(mode: str, allow_unsandboxed: bool) -> None:
    """Refuse an unknown mode, and ``"none"`` unless explicitly allowed.

    The service calls this with its configuration before running any bot.

    >>> require_sandbox("bwrap", allow_unsandboxed=False)
    >>> require_sandbox("none", allow_unsandboxed=False)  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    judge.sandbox.SandboxError: unsandboxed bots are refused
    """
    if mode == "bwrap":
        return
    if mode == "none":
        if allow_unsandboxed:
            return
        raise SandboxError(
            "unsandboxed bots are refused: mode 'none' is for local development only"
        )
    raise SandboxError(f"unknown sandbox mode {mode!r} (expected 'bwrap' or 'none')")


# --------------------------------------------------------------------------- the process


class BotProcess:
    """A running bot (its whole process tree). Use as a context manager or call kill().

    ``stdin``, ``stdout`` and ``stderr`` are unbuffered pipes (``FileIO``), in
    blocking mode. ``pid`` is the process the judge started (bubblewrap in
    ``"bwrap"`` mode); ``uid`` is the host uid the bot runs as.

    Under bubblewrap, the judge sees end-of-file on ``stdout`` only when the
    bot's process tree is gone (bubblewrap keeps a copy of the pipe), not when
    the bot merely closes its end.
    """

    pid: int
    stdin: BinaryIO
    stdout: BinaryIO
    stderr: BinaryIO
    mode: SandboxMode
    uid: int
    sandbox_pid: int | None  # host pid of the bot, pid 1 of its namespace (None in mode "none")

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        *,
        mode: SandboxMode,
        uid: int,
        pidfd: int | None = None,
        sandbox_pid: int | None = None,
        cgroup: _Cgroup | None = None,
        uid_slot: _UidSlot | None = None,
    ) -> None:
        assert popen.stdin is not None
        assert popen.stdout is not None
        assert popen.stderr is not None
        self._popen = popen
        self.pid = popen.pid
        self.stdin = cast(BinaryIO, popen.stdin)
        self.stdout = cast(BinaryIO, popen.stdout)
        self.stderr = cast(BinaryIO, popen.stderr)
        self.mode = mode
        self.uid = uid
        self.sandbox_pid = sandbox_pid
        self._pidfd = pidfd
        self._cgroup = cgroup
        self._uid_slot = uid_slot
        self._lock = threading.Lock()
        self._killed = False
        # poll() and wait() look at the started process's exit without reaping it: until
        # kill() reaps it, its pid (the process group's id) cannot be reused by a stranger.
        self._leader_fd: int | None = (
            os.pidfd_open(popen.pid) if hasattr(os, "pidfd_open") else None  # Linux only
        )
        self._status: int | None = None

    def __repr__(self) -> str:
        state = "killed" if self._killed else f"returncode={self._popen.returncode}"
        return f"<BotProcess pid={self.pid} mode={self.mode} uid={self.uid} {state}>"

    @property
    def returncode(self) -> int | None:
        """The exit status once known: the bot's code, or 128+signal under bwrap,
        or -signal in mode "none" (as in :mod:`subprocess`)."""
        if self._popen.returncode is not None:
            return self._popen.returncode
        return self._status

    def poll(self) -> int | None:
        """The exit status if the bot has exited, else None."""
        if self._status is None and self._popen.returncode is None:
            leader = self._leader_fd
            if leader is None:
                return self._popen.poll()
            try:
                # WNOWAIT: learn the status and leave the process to kill() to reap
                info = os.waitid(os.P_PIDFD, leader, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return self._popen.poll()
            if info is not None and info.si_pid:
                code = info.si_status
                self._status = code if info.si_code == os.CLD_EXITED else -code
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the bot to exit; raises subprocess.TimeoutExpired."""
        leader = self._leader_fd
        if leader is None:
            return self._popen.wait(timeout)
        if not wait_readable(leader, timeout if timeout is not None else math.inf):
            raise subprocess.TimeoutExpired(self._popen.args, timeout or 0.0)
        status = self.poll()
        assert status is not None
        return status

    def kill(self) -> None:
        """Kill the whole process tree, reap it and close the pipes. Idempotent."""
        with self._lock:
            if self._killed:
                return
            self._killed = True
            tree_gone = self._kill_tree()
            for pipe in (self.stdin, self.stdout, self.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()
            for name in ("_pidfd", "_leader_fd"):
                fd = getattr(self, name)
                if fd is not None:
                    os.close(fd)
                    setattr(self, name, None)
            if self._cgroup is not None:
                self._cgroup.remove()
            if self._uid_slot is not None:
                if tree_gone:
                    self._uid_slot.release()
                else:  # keep the uid out of use: its processes may still be dying
                    log.error("sandbox of uid %d did not die; its uid stays reserved", self.uid)

    def _kill_tree(self) -> bool:
        tree_gone = True
        if self._pidfd is not None:
            # Killing pid 1 of the namespace (the bot) makes the kernel kill every
            # process in it; the pidfd becomes readable once they are all gone.
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            tree_gone = wait_readable(self._pidfd, _KILL_TIMEOUT)
            if self._cgroup is not None:
                self._cgroup.kill()
            # bubblewrap reaps the bot and exits by itself; killing it first would
            # leave the bot a zombie for the host's init to reap
            if self._leader_fd is not None:
                wait_readable(self._leader_fd, _REAP_GRACE)
        # The process group: bubblewrap (mode "bwrap"), the bot and the children
        # that kept its group (mode "none"). Its id cannot have been reused: the
        # leader is not reaped yet (poll and wait leave it a zombie).
        if self._popen.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._popen.pid, signal.SIGKILL)
        try:
            self._popen.wait(_KILL_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.error("bot process %d survived SIGKILL for %.0f s", self.pid, _KILL_TIMEOUT)
            tree_gone = False
        return tree_gone

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        self.kill()

    def __del__(self) -> None:
        # Last resort for a caller that forgot kill(): never leave a bot running.
        if not getattr(self, "_killed", True):
            with contextlib.suppress(Exception):
                self.kill()


def wait_readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` becomes readable within ``timeout`` seconds (``math.inf``: no limit);
    a pidfd does once its process has exited."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if poller.poll(0):
        return True
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        if poller.poll(None if math.isinf(remaining) else remaining * 1000):
            return True


# --------------------------------------------------------------------------- spawning


def spawn_bot(
    command: Sequence[str],
    *,
    bot_dir: Path,
    mode: SandboxMode = "bwrap",
    limits: SandboxLimits = SandboxLimits(),
    sdk_dir: Path | None = None,
    cwd: str = BOT_ROOT,
    pass_fds: Sequence[int] = (),
    namespace_admin: bool = False,
) -> BotProcess:
    """Start a bot: ``command`` is its argv as seen inside the sandbox.

    The bot's directory is read-only at ``/bot``, ``sdk_dir`` (if given) at
    ``/sdk`` with ``PYTHONPATH=/sdk``; ``python3`` is the system's
    ``/usr/bin/python3``. In mode ``"none"`` (local development only) the
    command runs on the host, ``/bot`` and ``/sdk`` in its arguments mapped to
    the real directories, with the same rlimits.

    Under bubblewrap run by root, the bot is a fresh uid to which only the
    "others" permission bits apply: every directory from ``/`` down to
    ``bot_dir`` (and ``sdk_dir``) must be searchable by others (``o+x``: 711
    is enough, and is what :func:`judge.run_table` gives its work directory),
    and the bot's own tree must be readable all the way down: ``bot_dir`` and
    every folder in it ``r-x``, every file ``r`` for others
    (:func:`judge.package.prepare` makes them 555 and 444). The directories
    above and ``bot_dir`` itself are checked here (a :class:`SandboxError`
    names the one at fault); a folder or file deeper that the bot cannot read
    makes the bot fail when it opens it.

    ``pass_fds`` are descriptors the bot inherits under the same numbers (besides its stdin,
    stdout and stderr; judge.zygote passes its control socket so).

    ``namespace_admin`` is for a zygote only (judge.zygote), never for a bot: the process may
    make namespaces and mounts inside the sandbox (``CAP_SYS_ADMIN`` and ``CAP_SYS_CHROOT`` in
    its user namespace; ``unshare``, ``setns`` and ``mount`` allowed by its seccomp filter),
    which the zygote needs to give each table's bot new ones, and which it drops in that bot.

    Raises :class:`SandboxError` when the sandbox cannot be set up; a bot that
    starts and then fails is a :class:`BotProcess` whose ``poll()`` tells.
    """
    argv = _check_command(command)
    bot_dir = _check_dir(bot_dir, "bot_dir")
    sdk = _check_dir(sdk_dir, "sdk_dir") if sdk_dir is not None else None
    if not cwd.startswith("/"):
        raise SandboxError(f"cwd must be an absolute path inside the sandbox, not {cwd!r}")
    if mode == "bwrap":
        return _spawn_bwrap(
            argv,
            bot_dir=bot_dir,
            sdk_dir=sdk,
            limits=limits,
            cwd=cwd,
            pass_fds=pass_fds,
            namespace_admin=namespace_admin,
        )
    if pass_fds or namespace_admin:
        raise SandboxError("pass_fds and namespace_admin are for sandboxed bots only")
    if mode == "none":
        return _spawn_unsandboxed(argv, bot_dir=bot_dir, sdk_dir=sdk, limits=limits, cwd=cwd)
    raise SandboxError(f"unknown sandbox mode {mode!r} (expected 'bwrap' or 'none')")


def _check_command(command: Sequence[str]) -> list[str]:
    if isinstance(command, str | bytes) or not command:
        raise SandboxError("command must be a non-empty sequence of arguments")
    argv = list(command)
    for arg in argv:
        if not isinstance(arg, str) or "\0" in arg:
            raise SandboxError(f"bad command argument {arg!r}")
    return argv


def _check_dir(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.is_dir():
        raise SandboxError(f"{what} {str(path)!r} is not a directory")
    return path.resolve()


def _bot_env(sdk: bool) -> dict[str, str]:
    env = dict(_BASE_ENV)
    if sdk:
        env["PYTHONPATH"] = SDK_ROOT
    return env


# ----------------------------------------------------------------- mode "bwrap"


def _spawn_bwrap(
    argv: list[str],
    *,
    bot_dir: Path,
    sdk_dir: Path | None,
    limits: SandboxLimits,
    cwd: str,
    pass_fds: Sequence[int] = (),
    namespace_admin: bool = False,
) -> BotProcess:
    # The bot is pid 1 of its pid namespace (--as-pid-1): orphans of the bot are reparented to
    # it, and when it dies the kernel kills everything else in the namespace. Without it,
    # bubblewrap's own init would be pid 1, and bubblewrap leaves it unreaped when it exits: a
    # zombie for the host's init, which a container's init may never reap.
    bwrap = _bwrap_path()
    as_root = os.geteuid() == 0
    child_fds: list[int] = []  # handed to bubblewrap, closed here once it has them
    own_fds: list[int] = []  # the judge's ends of the set-up pipes
    uid_slot: _UidSlot | None = None
    cgroup: _Cgroup | None = None
    popen: subprocess.Popen[bytes] | None = None
    pidfd: int | None = None
    try:
        uid_slot = _acquire_uid() if as_root else None
        uid = uid_slot.uid if uid_slot is not None else os.getuid()
        env = _bot_env(sdk_dir is not None)
        args = [*_setpriv_command(uid)] if as_root else []
        args += [*_prlimit_command(limits), bwrap, *_bwrap_options(env, limits)]
        if as_root:  # a fresh uid: only the "others" permission bits apply to it
            _check_reachable(bot_dir, uid, "bot_dir")
            if sdk_dir is not None:
                _check_reachable(sdk_dir, uid, "sdk_dir")
        args += ["--ro-bind", str(bot_dir), BOT_ROOT]
        if sdk_dir is not None:
            args += ["--ro-bind", str(sdk_dir), SDK_ROOT]
        # bubblewrap's root tmpfs and /dev (whose shm/ is a tmpfs of no size
        # limit) must not become a place to write
        args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", cwd]
        allowed: frozenset[str] = frozenset()
        if namespace_admin:
            for capability in ("CAP_SYS_ADMIN", "CAP_SYS_CHROOT"):
                args += ["--cap-add", capability]
            allowed = seccomp.ZYGOTE_SYSCALLS
        try:
            seccomp_fd = seccomp.filter_fd(allowed)
        except seccomp.SeccompError as exc:
            raise SandboxError(f"cannot build the seccomp filter: {exc}") from exc
        child_fds.append(seccomp_fd)
        info_r, info_w = os.pipe()
        own_fds.append(info_r)
        child_fds.append(info_w)
        block_r, block_w = os.pipe()
        own_fds.append(block_w)
        child_fds.append(block_r)
        args += ["--seccomp", str(seccomp_fd), "--info-fd", str(info_w)]
        args += ["--block-fd", str(block_r), "--", *argv]

        cgroup = _Cgroup.create(limits)
        try:
            popen = subprocess.Popen(
                args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=env,  # nothing of the judge's environment, not even in bubblewrap
                cwd="/",
                close_fds=True,
                pass_fds=[*child_fds, *pass_fds],
                process_group=0,
            )
        except OSError as exc:
            raise SandboxError(f"cannot start bubblewrap ({bwrap}): {exc}") from exc
        _close_all(child_fds)  # else the judge would never see EOF on info_r

        sandbox_pid = _read_child_pid(info_r, popen)
        try:
            pidfd = os.pidfd_open(sandbox_pid)
            if cgroup is not None:
                cgroup.attach(sandbox_pid)
            os.write(block_w, b"1")  # go: load the seccomp filter, exec the bot
        except (ProcessLookupError, BrokenPipeError) as exc:
            raise SandboxError(f"bubblewrap died while starting: {_stderr_of(popen)}") from exc
        _wait_until_released(block_w, pidfd, popen)
        return BotProcess(
            popen,
            mode="bwrap",
            uid=uid,
            pidfd=pidfd,
            sandbox_pid=sandbox_pid,
            cgroup=cgroup,
            uid_slot=uid_slot,
        )
    except BaseException:
        if popen is not None:
            BotProcess(popen, mode="bwrap", uid=-1, pidfd=pidfd, cgroup=cgroup).kill()
        elif cgroup is not None:
            cgroup.remove()
        if uid_slot is not None:
            uid_slot.release()
        raise
    finally:
        _close_all(child_fds)
        _close_all(own_fds)


def _close_all(fds: list[int]) -> None:
    while fds:
        os.close(fds.pop())


def _setpriv_command(uid: int) -> list[str]:
    """``setpriv --reuid=U --regid=U --clear-groups --`` : util-linux drops root for the
    sandbox uid, then executes the rest.

    Not ``subprocess.Popen(user=..., group=...)``: with those, CPython cannot start the child
    with ``vfork`` and copies the whole judge process (its page tables: ~2 ms of CPU per bot
    in a worker, measured), where a small exec of ``setpriv`` costs a fraction of that.
    """
    setpriv = _trusted_binary("setpriv", "util-linux")
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def _prlimit_command(limits: SandboxLimits) -> list[str]:
    """``prlimit --cpu=S:H ... --`` : util-linux sets the rlimits, then executes the rest.

    It runs as the sandbox uid, before bubblewrap, so the limits hold from the
    first instruction of the sandbox on (and bound the uid's process count on
    the host, bubblewrap included). A limit above the judge's own hard limit
    is lowered to it (raising it would need CAP_SYS_RESOURCE).
    """
    args = [_trusted_binary("prlimit", "util-linux")]
    for name, res, soft, hard in limits.rlimits():
        soft, hard = _within_hard_limit(res, soft, hard)
        args.append(f"--{name}={soft}:{hard}")
    args.append("--")
    return args


def _within_hard_limit(res: int, soft: int, hard: int) -> tuple[int, int]:
    ceiling = resource.getrlimit(res)[1]
    if ceiling != resource.RLIM_INFINITY:
        soft, hard = min(soft, ceiling), min(hard, ceiling)
    return soft, hard


def _trusted_binary(name: str, package: str) -> str:
    path = shutil.which(name, path=_TRUSTED_PATH)
    if path is None:
        raise SandboxError(f"{name} not found in {_TRUSTED_PATH}: install {package}")
    return path


def _bwrap_options(env: Mapping[str, str], limits: SandboxLimits) -> list[str]:
    options = [
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup
        "--unshare-user",  # fail rather than silently run without
        "--unshare-cgroup",
        "--disable-userns",  # no nested user namespaces
        "--as-pid-1",  # see _spawn_bwrap
        "--die-with-parent",
        "--new-session",  # no TIOCSTI on the judge's terminal
        "--hostname",
        "tapis-bot",
        "--clearenv",
    ]
    for name, value in env.items():
        options += ["--setenv", name, value]
    options += _runtime_binds()
    options += ["--proc", "/proc", "--dev", "/dev"]
    options += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
    return options


@functools.cache
def _runtime_binds() -> tuple[str, ...]:
    """Read-only binds of the Python runtime: /usr, the merged-/usr links, ld.so.cache."""
    binds = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            binds += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            binds += ["--ro-bind", str(path), str(path)]
    for name in ("/etc/ld.so.cache", "/etc/localtime"):
        if Path(name).exists():
            binds += ["--ro-bind", name, name]
    return tuple(binds)


def _bwrap_path() -> str:
    configured = os.environ.get("TAPIS_BWRAP")
    path = configured or shutil.which("bwrap", path=_TRUSTED_PATH)
    if not path or not os.access(path, os.X_OK):
        raise SandboxError(
            f"bubblewrap not found ({configured or 'bwrap'}): install it (apt-get install "
            "bubblewrap), or run bots unsandboxed for local development (--sandbox none)"
        )
    _check_bwrap_version(path)
    return path


@functools.cache
def _check_bwrap_version(path: str) -> None:
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot run {path}: {exc}") from exc
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    if match is None:
        raise SandboxError(f"{path} --version printed no version: {out!r}")
    version = tuple(int(part) for part in match.groups())
    if version < _MIN_BWRAP:
        wanted = ".".join(map(str, _MIN_BWRAP))
        raise SandboxError(f"bubblewrap {match.group(0)} is too old: {wanted} or later needed")


def _check_reachable(path: Path, uid: int, what: str) -> None:
    """Raise SandboxError unless the sandbox uid can reach and read ``path``.

    bubblewrap opens the bind sources as the sandbox uid (its gid equals its
    uid, with no other groups), and the bot then reads its files as that uid:
    every directory from ``/`` down to ``path`` must be searchable by it, and
    ``path`` itself readable and searchable. Only these are checked, not the
    tree below ``path``, which must be readable all the way down as well
    (see :func:`spawn_bot`).
    """
    for directory in reversed(path.parents):
        if not _permits(directory, uid, 0o1):
            mode = directory.stat().st_mode & 0o7777
            raise SandboxError(
                f"{what} {str(path)!r} is not reachable by the sandbox uid {uid}: "
                f"{str(directory)!r} (mode {mode:o}) is not searchable by others; keep bots "
                "under directories with o+x (e.g. 711)"
            )
    if not _permits(path, uid, 0o5):
        mode = path.stat().st_mode & 0o7777
        raise SandboxError(
            f"{what} {str(path)!r} (mode {mode:o}) is not readable by the sandbox uid {uid}: "
            "make it and everything in it readable by others (folders 755 or 555, files 644 "
            "or 444)"
        )


def _permits(path: Path, uid: int, bits: int) -> bool:
    st = path.stat()
    if st.st_uid == uid:
        shift = 6
    elif st.st_gid == uid:  # the sandbox gid equals its uid
        shift = 3
    else:
        shift = 0
    return (st.st_mode >> shift) & bits == bits


def _read_child_pid(info_r: int, popen: subprocess.Popen[bytes]) -> int:
    """Read ``{"child-pid": N}`` that bubblewrap writes once its child is cloned."""
    data = b""
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SandboxError(f"bubblewrap did not start within {_START_TIMEOUT:.0f} s")
        ready, _, _ = select.select([info_r], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
        if data.rstrip().endswith(b"}"):
            try:
                info = json.loads(data)
            except ValueError:
                continue  # not complete yet
            pid = info.get("child-pid")
            if isinstance(pid, int) and pid > 0:
                return pid
            break
    raise SandboxError(f"bubblewrap failed: {_stderr_of(popen)}")


def _wait_until_released(block_w: int, pidfd: int, popen: subprocess.Popen[bytes]) -> None:
    """Wait until bubblewrap's child has read the release byte, i.e. finished its set-up.

    A set-up failure (a mount that bubblewrap cannot make, say) is then a
    SandboxError here rather than what would look like a crash of the bot.
    """
    pending = array.array("i", [1])
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        fcntl.ioctl(block_w, termios.FIONREAD, pending)
        if pending[0] == 0:
            return
        if select.select([pidfd], [], [], 0.0002)[0]:  # the child died before reading it
            raise SandboxError(f"bubblewrap could not set up the sandbox: {_stderr_of(popen)}")
        if time.monotonic() > deadline:
            raise SandboxError(f"bubblewrap did not set up the sandbox in {_START_TIMEOUT:.0f} s")


def _stderr_of(popen: subprocess.Popen[bytes]) -> str:
    try:
        popen.wait(_START_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "(no exit status)"
    assert popen.stderr is not None
    os.set_blocking(popen.stderr.fileno(), False)
    try:
        text = popen.stderr.read(4096) or b""
    except OSError:
        text = b""
    message = text.decode("utf-8", "replace").strip()
    return f"{message or 'no message'} (exit status {popen.returncode})"


# ----------------------------------------------------------------- host uids


class _UidSlot:
    """A host uid reserved for one sandbox while its lock file is held."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the flock
            self._fd = None


def _uid_base() -> int:
    configured = os.environ.get("TAPIS_SANDBOX_UID_BASE")
    if not configured:
        return SANDBOX_UID_BASE
    try:
        base = int(configured)
    except ValueError:
        base = 0
    if base < 1000 or base + SANDBOX_UID_COUNT > 2**32 - 2:
        raise SandboxError(f"TAPIS_SANDBOX_UID_BASE={configured!r}: a uid from 1000 up is needed")
    return base


def _acquire_uid() -> _UidSlot:
    try:
        _UID_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise SandboxError(f"cannot create {_UID_LOCK_DIR}: {exc}") from exc
    base = _uid_base()
    start = secrets.randbelow(SANDBOX_UID_COUNT)
    for i in range(SANDBOX_UID_COUNT):
        uid = base + (start + i) % SANDBOX_UID_COUNT
        fd = try_lock(_UID_LOCK_DIR / f"{uid}.lock")
        if fd is not None:
            return _UidSlot(uid, fd)
    raise SandboxError(f"all {SANDBOX_UID_COUNT} sandbox uids are in use")


def try_lock(path: Path) -> int | None:
    """An exclusive ``flock`` on ``path`` (made with mode 600 if missing), taken without
    waiting: its descriptor (closing it releases the lock), or None if another holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


# ----------------------------------------------------------------- cgroup v2


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
        deadline = time.monotonic() + _KILL_TIMEOUT
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


# ----------------------------------------------------------------- mode "none"

_warned_lock = threading.Lock()
_warned = False


def warn_unsandboxed() -> None:
    """Print the loud warning about mode "none" on stderr, once per process.

    :func:`spawn_bot` calls it when it starts an unsandboxed bot; a tool may call it earlier
    (``tapis play`` does, before its progress bar), and it is not printed again."""
    global _warned
    with _warned_lock:
        if _warned:
            return
        _warned = True
    sys.stderr.write(UNSANDBOXED_WARNING)
    sys.stderr.flush()


def _map_path(arg: str, bot_dir: Path, sdk_dir: Path | None) -> str:
    for inner, outer in ((BOT_ROOT, bot_dir), (SDK_ROOT, sdk_dir)):
        if outer is None:
            continue
        if arg == inner:
            return str(outer)
        if arg.startswith(inner + "/"):
            return str(outer) + arg[len(inner) :]
    return arg


def _rlimit_setter(limits: SandboxLimits) -> Callable[[], None]:
    """Mode "none" on a system without util-linux's prlimit (macOS): set them between fork
    and exec instead (unsafe in a threaded judge, acceptable for local development)."""
    values = [
        (res, *_within_hard_limit(res, soft, hard)) for _, res, soft, hard in limits.rlimits()
    ]

    def apply() -> None:
        for res, soft, hard in values:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(res, (soft, hard))

    return apply


def _spawn_unsandboxed(
    argv: list[str], *, bot_dir: Path, sdk_dir: Path | None, limits: SandboxLimits, cwd: str
) -> BotProcess:
    warn_unsandboxed()
    args = [_map_path(arg, bot_dir, sdk_dir) for arg in argv]
    preexec: Callable[[], None] | None = None
    try:
        args = [*_prlimit_command(limits), *args]
    except SandboxError:
        preexec = _rlimit_setter(limits)
    env = _bot_env(False)
    env["HOME"] = tempfile.gettempdir()
    if sdk_dir is not None:
        env["PYTHONPATH"] = str(sdk_dir)
    real_cwd = _map_path(cwd, bot_dir, sdk_dir)
    try:
        popen = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
            env=env,
            cwd=real_cwd,
            close_fds=True,
            process_group=0,
            preexec_fn=preexec,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot start {argv[0]!r}: {exc}") from exc
    return BotProcess(popen, mode="none", uid=os.getuid())


# ----------------------------------------------------------------- status


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """What the sandbox of this host provides (for logs, docs and the bench)."""

    bwrap: str | None
    seccomp_instructions: int
    uid_range: tuple[int, int] | None  # None: the sandbox runs as the judge's uid
    cgroup_parent: str | None
    problems: tuple[str, ...]


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
    parent: Path | None = None
    try:
        parent = cgroup_parent()
    except SandboxError as exc:
        problems.append(str(exc))
    uid_range: tuple[int, int] | None = None
    if os.geteuid() == 0:
        try:
            base = _uid_base()
            uid_range = (base, base + SANDBOX_UID_COUNT - 1)
        except SandboxError as exc:
            problems.append(str(exc))
    return SandboxStatus(
        bwrap=bwrap,
        seccomp_instructions=instructions,
        uid_range=uid_range,
        cgroup_parent=str(parent) if parent is not None else None,
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
