"""Mode "bwrap": the sandbox proper (docs/sandbox.md, "How a bot is started")."""

from __future__ import annotations

import array
import fcntl
import functools
import json
import os
import re
import select
import shutil
import subprocess
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from judge.sandbox import seccomp, starters
from judge.sandbox.cgroups import _Cgroup
from judge.sandbox.commands import (
    _TRUSTED_PATH,
    _bot_env,
    _prlimit_command,
    _setpriv_command,
    start_process,
)
from judge.sandbox.limits import BOT_ROOT, SDK_ROOT, SandboxError, SandboxLimits
from judge.sandbox.mirrors import make_mirror, remove_mirror, shared_mirror
from judge.sandbox.process import BotProcess
from judge.sandbox.residency import keep_resident, make_resident
from judge.sandbox.system import files_under, system_binds, system_files, system_key
from judge.sandbox.uids import _acquire_uid, _UidSlot

_MIN_BWRAP = (0, 8, 0)  # --disable-userns, --size
_START_TIMEOUT = 10.0  # seconds for bubblewrap to build the sandbox
# What the starter may do beyond a bot (judge/sandbox/starters.py): remount /tmp noexec in a
# mount namespace of its own.
_STARTER_SYSCALLS: frozenset[str] = frozenset({"unshare", "mount"})


def _spawn_bwrap(
    argv: list[str],
    *,
    bot_dir: Path,
    sdk_dir: Path | None,
    limits: SandboxLimits,
    cwd: str,
    pass_fds: Sequence[int] = (),
    namespace_admin: bool = False,
    writable_exec: bool = False,
    system: Sequence[str] | None = None,
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
    mirror: Path | None = None
    try:
        uid_slot = _acquire_uid() if as_root else None
        uid = uid_slot.uid if uid_slot is not None else os.getuid()
        env = _bot_env(sdk_dir is not None)
        args = [*_setpriv_command(uid)] if as_root else []
        starter = not namespace_admin and not writable_exec
        key = None if system is None else prepare_system(system, starter=starter)
        options = _bwrap_options(env, limits, namespace_admin, key)
        args += [*_prlimit_command(limits), bwrap, *options]
        if as_root:  # a fresh uid: only the "others" permission bits apply to it
            _check_reachable(bot_dir, uid, "bot_dir")
            if sdk_dir is not None:
                _check_reachable(sdk_dir, uid, "sdk_dir")
        # mirrors: the bot's mountinfo shows their random names, not the judge's paths
        mirror = make_mirror(bot_dir)
        args += ["--ro-bind", str(mirror), BOT_ROOT]
        bound = [mirror]
        if sdk_dir is not None:
            bound.append(shared_mirror(sdk_dir))
            args += ["--ro-bind", str(bound[-1]), SDK_ROOT]
        allowed: frozenset[str] = frozenset()
        if namespace_admin:
            # CAP_SETPCAP: a table's bot drops the bounding set too (judge/sdk/_tapis_zygote.py)
            for capability in ("CAP_SYS_ADMIN", "CAP_SYS_CHROOT", "CAP_SETPCAP"):
                args += ["--cap-add", capability]
            allowed = seccomp.ZYGOTE_SYSCALLS
        elif starter:  # makes /tmp noexec, then becomes the bot with the bot's filter
            args += ["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"]
            allowed = _STARTER_SYSCALLS
        else:  # a build: compilers lock their caches
            allowed = seccomp.BUILD_SYSCALLS
        try:
            seccomp_fd = seccomp.filter_fd(allowed)
            child_fds.append(seccomp_fd)
            if starter:
                bot_filter = seccomp.filter_fd()
                child_fds.append(bot_filter)
                binds, before = starters.starter(bot_filter)
                args += binds
                bound += [Path(path) for path in binds[1:2]]
                argv = [*before, *argv]
        except seccomp.SeccompError as exc:
            raise SandboxError(f"cannot build the seccomp filter: {exc}") from exc
        # bubblewrap's root tmpfs and /dev (whose shm/ is a tmpfs of no size
        # limit) must not become a place to write (the binds above are made first)
        args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", cwd]
        info_r, info_w = os.pipe()
        own_fds.append(info_r)
        child_fds.append(info_w)
        block_r, block_w = os.pipe()
        own_fds.append(block_w)
        child_fds.append(block_r)
        args += ["--seccomp", str(seccomp_fd), "--info-fd", str(info_w)]
        args += ["--block-fd", str(block_r), "--", *argv]

        resident: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        if key is not None:  # no page it can open left out of the page cache
            resident = (system_files(key), tuple(files_under(bound)))
            make_resident(resident[1])
        cgroup = _Cgroup.create(limits)
        try:
            # nothing of the judge's environment, not even in bubblewrap
            popen = start_process(args, env=env, cwd="/", pass_fds=[*child_fds, *pass_fds])
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
            mirror=mirror,
            resident=resident,
        )
    except BaseException:
        if popen is not None:
            BotProcess(
                popen, mode="bwrap", uid=-1, pidfd=pidfd, cgroup=cgroup, mirror=mirror
            ).kill()
        else:
            if cgroup is not None:
                cgroup.remove()
            if mirror is not None:
                remove_mirror(mirror)
        if uid_slot is not None:
            uid_slot.release()
        raise
    finally:
        _close_all(child_fds)
        _close_all(own_fds)


def prepare_system(system: Sequence[str], *, starter: bool = True) -> tuple[str, ...]:
    """Find what a sandbox of ``system`` binds and lock its files in the page cache (once per
    process: a caller that times a bot's start calls it first); its key."""
    key = system_key(system, python=starter and starters.uses_python())
    system_binds(key)
    keep_resident(system_files(key))
    return key


def _close_all(fds: list[int]) -> None:
    while fds:
        os.close(fds.pop())


def _bwrap_options(
    env: Mapping[str, str],
    limits: SandboxLimits,
    zygote: bool = False,
    system: tuple[str, ...] | None = None,
) -> list[str]:
    options = [
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup
        "--unshare-user",  # fail rather than silently run without
        "--unshare-cgroup",
        "--disable-userns",  # no nested user namespaces
        "--as-pid-1",  # see _spawn_bwrap
        "--die-with-parent",
        # No --new-session: the bot stays in the judge's session, so in its scheduling
        # autogroup (a round trip across autogroups costs up to 15% more), and in the process
        # group start_process made for the sandbox, not the judge's. The judge's terminal, if
        # it has one, is out of reach: /dev/tty below is /dev/null, and seccomp refuses
        # TIOCSTI and TIOCLINUX on any descriptor (docs/sandbox.md, "Terminals").
        "--hostname",
        "tapis-bot",
        "--clearenv",
    ]
    for name, value in env.items():
        options += ["--setenv", name, value]
    # a runtime's own files (judge/sandbox/system.py), or all of /usr (builds, direct calls)
    options += _runtime_binds() if system is None else system_binds(system)
    # A zygote's own /proc keeps bubblewrap's covers only: the kernel refuses a new procfs where
    # one is covered more, and each table's bot gets one of its processes only (subset=pid).
    options += [*(["--proc", "/proc"] if zygote else _proc_options()), *_dev_options()]
    options += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]
    return options


# The devices of the sandbox's /dev: bound from the host's, nothing else. No /dev/ptmx nor
# /dev/pts (a pty moves the host-wide /proc/sys/kernel/pty/nr), no console; /dev/tty is
# /dev/null (the judge's terminal is out of reach: docs/sandbox.md, "Terminals").
_DEVICES = ("null", "zero", "full", "random", "urandom")
_DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1"}
_DEV_LINKS["stderr"] = "/proc/self/fd/2"


def _dev_options() -> list[str]:
    """A /dev of the usual devices only, made read-only with / (``--remount-ro /dev``)."""
    options = ["--tmpfs", "/dev"]
    for name in _DEVICES:
        options += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    options += ["--dev-bind", "/dev/null", "/dev/tty"]
    for name, target in _DEV_LINKS.items():
        options += ["--symlink", target, f"/dev/{name}"]
    return [*options, "--dir", "/dev/shm"]


def _proc_options() -> list[str]:
    """A /proc of the sandbox's pid namespace with every entry but the processes covered:
    what is left of the host there are figures of the whole host (/proc/sys, /proc/stat,
    /proc/meminfo, /proc/locks...), some of which a bot moves and another reads
    (docs/sandbox.md, "Host-wide channels"). A folder gets an empty read-only tmpfs, a file
    /dev/null (empty); the links (self, thread-self, mounts, net) point into the bot's own
    process."""
    options = ["--proc", "/proc"]
    for entry in host_proc_entries():
        path = f"/proc/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            options += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
        else:
            options += ["--ro-bind", "/dev/null", path]
    return options


def host_proc_entries() -> list[os.DirEntry[str]]:
    """The entries of /proc that are not a process's (nor a link to the reader's own)."""
    with os.scandir("/proc") as entries:
        return [entry for entry in entries if not entry.name.isdigit() and not entry.is_symlink()]


@functools.cache
def _runtime_binds() -> tuple[str, ...]:
    """Read-only binds of the runtimes: /usr, the merged-/usr links, ld.so.cache, the JDK's
    configuration."""
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
    # The JDK's configuration (java.security, jvm.cfg): Debian's JDK under /usr links to it,
    # and javac fails without it (docs/sandbox.md, "Runtimes"). Public files, no secret.
    for java_conf in sorted(Path("/etc").glob("java-*-openjdk")):
        binds += ["--ro-bind", str(java_conf), str(java_conf)]
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
