"""Run a bot in a sandbox: bubblewrap, rlimits, cgroup limits and seccomp.

A submitted bot is a stranger's program. :func:`spawn_bot` starts it under ``bwrap`` with
every namespace unshared (no network at all), as an unprivileged host uid of its own, on a
read-only system that holds only its runtime's files (every page of them in the page cache),
with its own files read-only at ``/bot``, a private size-limited ``noexec`` ``/tmp``, a minimal
environment, resource limits and a seccomp filter; :meth:`BotProcess.kill` kills the whole
process tree. docs/sandbox.md explains the threat model and what each measure defends.

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
   cgroup (v2, else v1's memory and pids hierarchies), moves it into fresh
   cgroups with its memory and process limits; then releases the block pipe;
4. bubblewrap loads the seccomp filter and executes the starter (``starters``), which makes
   every writable mount ``noexec``, drops the privileges that took and becomes the bot.

Nothing of the bot runs before all its limits are in place, and no Python runs
between fork and exec in the judge (``preexec_fn`` is unsafe with threads).


The package: ``limits`` (modes, paths, resource limits, the error), ``process`` (a running
bot), ``bwrap`` (the sandbox), ``system`` (the runtime's files it holds), ``residency`` (their
pages cached), ``mirrors`` (neutral paths for its folders), ``uids`` (host uids), ``cgroups``
(cgroup v2 or v1), ``seccomp`` (the filter), ``starters`` (``noexec``), ``commands``
(setpriv, prlimit, the environment), ``unsandboxed`` (mode "none") and ``status``. The names
below are its interface.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judge.sandbox.bwrap import _spawn_bwrap, prepare_system
from judge.sandbox.cgroups import cgroup_parents, parse_cgroup_v1, parse_cgroup_v2
from judge.sandbox.limits import (
    BOT_ROOT,
    SDK_ROOT,
    SandboxError,
    SandboxLimits,
    SandboxMode,
    require_sandbox,
)
from judge.sandbox.process import BotProcess
from judge.sandbox.status import SandboxStatus, sandbox_status, uid_processes
from judge.sandbox.uids import SANDBOX_UID_BASE, SANDBOX_UID_COUNT
from judge.sandbox.unsandboxed import UNSANDBOXED_WARNING, _spawn_unsandboxed, warn_unsandboxed

DEFAULT_LIMITS = SandboxLimits()  # a frozen value: one shared default

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
    "cgroup_parents",
    "parse_cgroup_v1",
    "parse_cgroup_v2",
    "prepare_system",
    "require_sandbox",
    "sandbox_status",
    "spawn_bot",
    "uid_processes",
    "warn_unsandboxed",
]


def spawn_bot(
    command: Sequence[str],
    *,
    bot_dir: Path,
    mode: SandboxMode = "bwrap",
    limits: SandboxLimits = DEFAULT_LIMITS,
    sdk_dir: Path | None = None,
    cwd: str = BOT_ROOT,
    pass_fds: Sequence[int] = (),
    namespace_admin: bool = False,
    writable_exec: bool = False,
    system: Sequence[str] | None = None,
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
    (:func:`judge.launchers.package.prepare` makes them 555 and 444). The directories
    above and ``bot_dir`` itself are checked here (a :class:`SandboxError`
    names the one at fault); a folder or file deeper that the bot cannot read
    makes the bot fail when it opens it.

    ``pass_fds`` are descriptors the bot inherits under the same numbers (besides its stdin,
    stdout and stderr; judge.launchers.zygote passes its control socket so).

    ``namespace_admin`` is for a zygote only (judge.launchers.zygote), never for a bot: the
    process may make namespaces and mounts inside the sandbox (``CAP_SYS_ADMIN`` and
    ``CAP_SYS_CHROOT`` in its user namespace; ``unshare``, ``setns`` and ``mount`` allowed by
    its seccomp filter), which the zygote needs to give each table's bot new ones, and which it
    drops in that bot.

    Nothing writable in the sandbox can execute: before the command runs, a starter
    (judge/sandbox/_starter.py) remounts ``/tmp`` (every writable mount) ``noexec`` and drops
    the privilege that took. ``writable_exec`` is for builds only (judge.launchers.runtimes),
    whose compilers run what they built (Rust build scripts, procedural macros): their ``/tmp``
    stays executable. A zygote (``namespace_admin``) mounts each table's ``/tmp`` itself.

    ``system`` is the host paths the command needs (its runtime's:
    :func:`judge.launchers.runtimes.system_paths`): the sandbox then holds them and the
    libraries they load instead of all of ``/usr``, and every page of every file it can open is
    brought into the page cache before it starts (docs/sandbox.md, "Host-wide channels"). None
    (builds, tests) binds all of ``/usr``.

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
            writable_exec=writable_exec,
            system=system,
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
