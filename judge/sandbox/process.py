"""A running bot: its pipes, its exit status, and the kill of its whole process tree."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import signal
import subprocess
import threading
import types
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

from judge._fds import wait_readable
from judge.sandbox.cgroups import out_of_memory
from judge.sandbox.limits import KILL_TIMEOUT, SandboxMode
from judge.sandbox.mirrors import remove_mirror
from judge.sandbox.residency import keep_resident, make_resident

if TYPE_CHECKING:
    from judge.sandbox.cgroups import _Cgroup
    from judge.sandbox.uids import _UidSlot

log = logging.getLogger(__name__)

_REAP_GRACE = 1.0  # seconds for bubblewrap to reap the killed bot and exit


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
        mirror: Path | None = None,
        resident: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
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
        self._mirror = mirror  # the bot's folder as bound (judge/sandbox/mirrors.py)
        # every file it can open: its system's, the bound folders' (judge/sandbox/residency.py)
        self._resident = resident
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

    def oom_kills(self) -> int:
        """How many of the sandbox's processes its cgroup's memory limit has killed so far."""
        return self._cgroup.oom_kills() if self._cgroup is not None else 0

    def exit_reason(self, oom_kills_before: int = 0) -> str:
        """What the judge knows of the bot's end beyond its status, before kill(): an
        out-of-memory kill in its cgroup (since ``oom_kills_before`` of them), or ''."""
        return out_of_memory(self._cgroup, oom_kills_before)

    def freeze(self) -> None:
        """Stop the whole sandbox until :meth:`thaw`: a bot that is not deciding takes no CPU
        from the others (nothing without a freezer cgroup; docs/sandbox.md, "CPU")."""
        if self._cgroup is not None and not self._killed:
            self._cgroup.freeze()

    def thaw(self) -> None:
        if self._cgroup is not None and not self._killed:
            self._cgroup.thaw()

    def set_cpus(self, cpus: set[int] | frozenset[int]) -> None:
        """Let the sandbox run on ``cpus`` only, which it cannot widen (a cpuset cgroup)."""
        if self._cgroup is not None and not self._killed:
            self._cgroup.set_cpus(cpus)

    def cpu_reading(self) -> tuple[float, float] | None:
        """(seconds its threads have waited for a CPU, CPU seconds used) so far, or None
        without CPU accounting (judge/clock.py)."""
        return self._cgroup.cpu_reading() if self._cgroup is not None else None

    def make_resident(self) -> None:
        """Bring every page the sandbox can open into the page cache again (before each table
        of a zygote: docs/sandbox.md, "Host-wide channels")."""
        system, bound = self._resident
        keep_resident(system)
        make_resident(bound)

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
            if self._mirror is not None:
                remove_mirror(self._mirror)
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
            if self._cgroup is not None:  # a frozen process dies only once thawed
                self._cgroup.thaw()
            tree_gone = wait_readable(self._pidfd, KILL_TIMEOUT)
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
            self._popen.wait(KILL_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.error("bot process %d survived SIGKILL for %.0f s", self.pid, KILL_TIMEOUT)
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
