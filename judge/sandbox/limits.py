"""What every part of the sandbox shares: its modes, where a bot's files are, its resource
limits, its error."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Literal

SandboxMode = Literal["bwrap", "none"]

BOT_ROOT = "/bot"
SDK_ROOT = "/sdk"

KILL_TIMEOUT = 5.0  # seconds for a killed tree (or its cgroup) to disappear


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of one bot process tree (whole table).

    ``cpu_seconds``, ``memory_bytes``, ``max_file_size`` and ``max_open_files``
    are per process (rlimits); ``max_processes`` counts every process and thread
    of the sandbox's uid, bubblewrap's own monitor process included. With a usable cgroup (v2,
    or v1), ``memory_bytes`` and ``max_processes`` also bound the whole tree.

    ``address_space_bytes`` is ``RLIMIT_AS`` when it must differ from ``memory_bytes`` (0: the
    same): runtimes that reserve address space at start beyond what they use (V8, Go, the JVM:
    judge.launchers.runtimes.RESERVED) get more of it, while the cgroup's memory limit, which
    counts what is used, stays ``memory_bytes``.
    """

    cpu_seconds: int = 120  # RLIMIT_CPU
    memory_bytes: int = 512 * 2**20  # RLIMIT_AS; the cgroup's memory limit too
    max_processes: int = 16  # RLIMIT_NPROC; the cgroup's pids.max too
    max_file_size: int = 8 * 2**20  # RLIMIT_FSIZE
    max_open_files: int = 64  # RLIMIT_NOFILE
    tmp_bytes: int = 16 * 2**20  # size of the private tmpfs /tmp
    address_space_bytes: int = 0  # RLIMIT_AS if not 0 (else memory_bytes)

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
        if isinstance(self.address_space_bytes, bool) or not isinstance(
            self.address_space_bytes, int
        ):
            raise ValueError("SandboxLimits.address_space_bytes must be an int")
        if 0 < self.address_space_bytes < self.memory_bytes:
            raise ValueError("SandboxLimits.address_space_bytes must be 0 or >= memory_bytes")
        if self.max_open_files < 8:
            raise ValueError("SandboxLimits.max_open_files must be at least 8")

    def rlimits(self) -> list[tuple[str, int, int, int]]:
        """(prlimit option, resource, soft, hard) for every rlimit of the bot's processes
        (those the platform knows: some are Linux only)."""
        stack = min(8 * 2**20, self.memory_bytes // 4)
        address_space = self.address_space_bytes or self.memory_bytes
        wanted = [
            # SIGXCPU at the soft limit, SIGKILL one second later
            ("cpu", "RLIMIT_CPU", self.cpu_seconds, self.cpu_seconds + 1),
            ("as", "RLIMIT_AS", address_space, address_space),
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
