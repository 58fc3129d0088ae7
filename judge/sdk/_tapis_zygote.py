"""The bot zygote: a started Python, inside a bot's sandbox, that forks the bot for each table.

Not part of the SDK's API: the judge runs it (judge/launchers/zygote.py). Starting a sandbox and
a Python costs a sandboxed bot more CPU than a whole table of play; a zygote pays it once for many
tables of one bot version, one table at a time. It runs as ``python3 -S -u`` in a sandbox
like the bot's own (the same ``/bot``, uid, rlimits), with what only its own code uses to make
each table's sandbox: ``CAP_SYS_ADMIN`` and ``CAP_SYS_CHROOT`` in the sandbox's user
namespace, and a seccomp filter that lets it call ``unshare``, ``setns`` and ``mount``. Its
arguments: the descriptor of the unix socket it obeys, the descriptor of the bot's seccomp
filter (BPF), the size of a table's ``/tmp`` in bytes and the bot's entry (read, not run, for
the modules to import ahead: :func:`_imported_by`). Commands:

* ``fork CPUS ENTRY`` with three descriptors (the bot's stdin, stdout and stderr): make a new
  sandbox inside this one, whose first process runs ``ENTRY`` as ``__main__``, as
  ``python3 -S -u ENTRY`` would, on the CPUs ``CPUS`` (``0,3``; ``-``: the zygote's own);
  answer ``pid N`` (its pid here) with a pidfd of it. The new sandbox has new mount, IPC and
  pid namespaces: a new empty tmpfs ``/tmp``, its own ``/proc``, no System V or POSIX IPC
  object, the bot as pid 1, so that nothing an earlier table wrote, by whatever channel, is
  there. Before the bot's code runs, the process drops every capability and loads the bot's
  seccomp filter;
* ``clean``: kill every other process of the sandbox (the zygote is pid 1 of its pid
  namespace), reap them; answer ``clean``, or ``dirty`` if a unix socket is left in the
  network namespace (the only one the tables share: the bots' filter allows no other socket,
  and a socket sent over itself outlives its processes until the kernel collects it): the
  judge then retires the zygote.

When a bot it forked exits, it sends ``exit N STATUS`` (STATUS as the shell has it: the exit
code, or 128 + the signal). End of file on the socket (the judge gone) ends it.
"""

# _signal and _socket rather than signal and socket: those build enums (and import enum and
# selectors), a tenth of a zygote's start; what a bot imports it imports itself.
import _signal
import _socket
import array
import ctypes
import errno
import gc
import os
import select
import sys

# What every child needs (atexit) and the SDK: imported once here rather than at every table.
PRELOAD = ("atexit", "tapis_bot")
# Modules of the standard library the zygote imports before its first fork when the bot's entry
# imports them at its top level, so that each table's bot finds them imported: modules without
# side effects at import (``random`` reseeds itself in each forked process). Not the others:
# importing ``json`` costs a zygote's start more than its Python (``re``, ``enum``), and a bot
# of the SDK alone never imports it.
PRELOADABLE = frozenset(
    {
        "abc",
        "array",
        "bisect",
        "collections",
        "copy",
        "dataclasses",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "random",
        "re",
        "statistics",
        "string",
        "struct",
        "time",
        "typing",
    }
)

# <sched.h>, <sys/mount.h>, <linux/capability.h>, <linux/prctl.h>
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
# What each table's bot gets anew, and where the zygote's own namespaces are to come back to.
NAMESPACES = {"mnt": CLONE_NEWNS, "ipc": CLONE_NEWIPC, "pid": CLONE_NEWPID}
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
LINUX_CAPABILITY_VERSION_3 = 0x20080522
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
PR_CAPBSET_DROP, CAP_LAST = 24, 63  # every capability the kernel may know

libc = ctypes.CDLL(None, use_errno=True)


class SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class Privileges:
    """What a table's bot process calls to drop the zygote's privileges, made ready once in
    the zygote: the child then spends no time finding C functions or building structures."""

    def __init__(self, bot_filter: bytes) -> None:
        self.capset = libc.capset
        self.prctl = libc.prctl
        self.header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
        self.no_capabilities = (ctypes.c_uint32 * 6)()
        self.program = ctypes.create_string_buffer(bot_filter, len(bot_filter))
        self.filter = SockFprog(len(bot_filter) // 8, ctypes.cast(self.program, ctypes.c_void_p))

    def drop(self) -> None:
        """No capability left (permitted, effective, inheritable, hence ambient) and the bot's
        seccomp filter loaded: from here on, the process can do what a bot started alone
        can."""
        for capability in range(CAP_LAST + 1):  # the bounding set first (needs CAP_SETPCAP)
            if self.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                _check(0 if ctypes.get_errno() == errno.EINVAL else -1, "dropping capabilities")
        _check(self.capset(self.header, self.no_capabilities), "capset")
        _check(self.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(
            self.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self.filter), 0, 0),
            "loading the seccomp filter",
        )


def main() -> None:
    if os.getpid() != 1:
        # Its clean kills every process it may signal: only pid 1 of a pid namespace of its
        # own may do that (outside, it would reach every process of its uid, or of the host).
        sys.exit("_tapis_zygote: refusing to run outside a pid namespace of its own (pid 1)")
    control = _socket.socket(fileno=int(sys.argv[1]))
    with open(int(sys.argv[2]), "rb") as program:
        privileges = Privileges(program.read())
    tmp_bytes = int(sys.argv[3])
    entry_path = sys.argv[4]
    _enter_home(control)
    home = {name: os.open(f"/proc/self/ns/{name}", os.O_RDONLY) for name in NAMESPACES}
    workdir = os.getcwd()
    for name in dict.fromkeys((*PRELOAD, *_imported_by(entry_path))):
        try:  # noqa: SIM105 (contextlib: an import more at the zygote's start)
            __import__(name)
        except ImportError:
            pass
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    _signal.set_wakeup_fd(wake_w)
    _signal.signal(_signal.SIGCHLD, lambda *_: None)
    # Objects made so far live as long as the zygote: out of the collector's sight, a child's
    # collections neither walk them nor copy their pages (copy-on-write) by touching them.
    gc.collect()
    gc.freeze()
    child = 0
    inherited = [control.fileno(), wake_r, wake_w, *home.values()]
    control.sendmsg([b"ready"])
    while True:
        readable, _, _ = select.select([control.fileno(), wake_r], [], [])
        if wake_r in readable:
            os.read(wake_r, 512)
            child = _reap(control, child)
        if control.fileno() in readable:
            message, fds = _recv_fds(control, 3)
            if not message:
                os._exit(0)
            command, _, argument = message.partition(b" ")
            if command == b"fork" and len(fds) == 3:
                cpus, _, entry = argument.partition(b" ")
                bot = Bot(entry.decode(), cpus, fds, privileges, workdir)
                try:
                    pid = _fork_sandboxed(bot, tmp_bytes, home, inherited)
                except OSError as exc:  # the judge sees the zygote gone, starts the bot alone
                    sys.stderr.write(f"_tapis_zygote: {exc}\n")
                    os._exit(1)
                for fd in fds:
                    os.close(fd)
                child = pid
                # A pidfd, taken before the bot can be reaped (only this loop reaps): the
                # judge kills and watches the bot through it, whatever happens here later.
                pidfd = os.pidfd_open(pid)
                _send_fds(control, b"pid %d" % pid, [pidfd])
                os.close(pidfd)
            elif command == b"clean":
                _kill_all()
                child = 0
                control.sendmsg([b"clean" if _no_socket_left() else b"dirty"])
            else:
                for fd in fds:
                    os.close(fd)
                control.sendmsg([b"error unknown command"])


def _imported_by(entry: str) -> list[str]:
    """The modules of :data:`PRELOADABLE` that the bot's entry imports at its top level
    (``import a, b.c as d`` and ``from a import b`` lines), but for those its package has a
    module of the same name of, which it imports instead: read as text, nothing of it runs.
    Without ``re``: importing it would cost what this saves."""
    try:
        with open(entry, "rb") as source:
            text = source.read(1 << 20).decode("utf-8", "replace")
        own = set(os.listdir(os.path.dirname(entry)))
    except OSError:
        return []
    names = []
    for line in text.splitlines():
        if line.startswith("import "):
            parts = line[len("import ") :].partition("#")[0].partition(";")[0].split(",")
        elif line.startswith("from "):
            parts = [line[len("from ") :].partition(" import")[0]]
        else:
            continue
        for part in parts:
            name = part.strip().partition(" ")[0].partition(".")[0]
            if name in PRELOADABLE and name + ".py" not in own and name not in own:
                names.append(name)
    return names


def _recv_fds(control: _socket.socket, most: int) -> tuple[bytes, list[int]]:
    """A message and the descriptors sent with it (at most ``most``), as socket.recv_fds."""
    fds = array.array("i")
    message, ancillary, _, _ = control.recvmsg(4096, _socket.CMSG_LEN(most * fds.itemsize))
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return message, list(fds)


def _send_fds(control: _socket.socket, message: bytes, fds: list[int]) -> None:
    """``message`` with the descriptors ``fds``, as socket.send_fds."""
    rights = (_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", fds))
    control.sendmsg([message], [rights])


def _enter_home(control: _socket.socket) -> None:
    """Move into namespaces of the zygote's own user namespace, which it can come back to.

    bubblewrap's --disable-userns runs the zygote in a user namespace nested in the one that
    owns the sandbox's namespaces, where its capabilities do not reach: it could leave them
    for each table's new ones, never come back. So it makes its own once (the pid namespace
    for a child only: the process started by bubblewrap waits for that child, the zygote
    proper, and ends with it)."""
    _check(libc.unshare(sum(NAMESPACES.values())), "unshare")
    pid = os.fork()
    if pid != 0:
        control.close()
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    # Private: what is mounted in a table's copy of this mount namespace never shows here.
    _mount("none", "/", None, MS_REC | MS_PRIVATE)


class Bot:
    """What a table's bot is started with."""

    def __init__(
        self, entry: str, cpus: bytes, fds: list[int], privileges: Privileges, workdir: str
    ) -> None:
        self.entry = entry
        self.cpus = cpus
        self.fds = fds
        self.privileges = privileges
        self.workdir = workdir


def _fork_sandboxed(bot: Bot, tmp_bytes: int, home: dict[str, int], inherited: list[int]) -> int:
    """Start the bot in new namespaces made for it; its pid here.

    The zygote enters them itself, makes the new ``/tmp``, forks the bot (pid 1 of the new pid
    namespace, which unshare gives to children only) and goes back to its own: one fork per
    table."""
    sys.stdout.flush()
    sys.stderr.flush()
    _check(libc.unshare(sum(NAMESPACES.values())), "unshare")
    try:
        # noexec: a bot cannot execute a file it wrote (docs/sandbox.md)
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        _mount("tmpfs", "/tmp", "tmpfs", flags, f"size={tmp_bytes},mode=1777")
        pid = os.fork()
        if pid == 0:
            _become_bot(bot, inherited)
    finally:
        for name, fd in home.items():
            _check(libc.setns(fd, NAMESPACES[name]), f"setns {name}")
    return pid


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: "str | None", flags: int, data: str = "") -> None:
    _check(
        libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _become_bot(bot: Bot, inherited: list[int]) -> None:
    """In the bot's first process (pid 1 of its new namespaces): finish its sandbox, drop the
    zygote's privileges, become the bot. Never returns."""
    code = 1
    try:
        _mount_proc()
        os.chdir(bot.workdir)
        if bot.cpus != b"-":  # before any of the bot's code runs
            os.sched_setaffinity(0, {int(cpu) for cpu in bot.cpus.split(b",")})
        os.setpgid(0, 0)  # not the zygote's group; still the judge's session (bwrap.py)
        _signal.set_wakeup_fd(-1)
        _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
        for target, fd in enumerate(bot.fds):
            os.dup2(fd, target)
        for fd in [*bot.fds, *inherited]:
            if fd > 2:
                os.close(fd)
        bot.privileges.drop()
        sys.argv[:] = [bot.entry]
        sys.path[0] = os.path.dirname(bot.entry)
        code = _run(bot.entry)
    finally:
        os._exit(code)


def _mount_proc() -> None:
    """A /proc of the new pid namespace with its processes only (``subset=pid``, Linux 5.8): no
    figure of the whole host (docs/sandbox.md, "Host-wide channels"). On an older kernel, every
    other entry is covered: a folder by an empty read-only tmpfs, a file by /dev/null. (The
    zygote's own /proc has bubblewrap's covers only: with more, the kernel would refuse it a new
    procfs; no code of the bot runs in the zygote.)"""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    try:
        _mount("proc", "/proc", "proc", flags, "subset=pid")
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        _mount("proc", "/proc", "proc", flags)
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() or entry.is_symlink():
                continue
            if entry.is_dir():
                _mount("tmpfs", entry.path, "tmpfs", flags | MS_RDONLY, "mode=555")
            else:
                _mount("/dev/null", entry.path, None, MS_BIND)
                _mount("none", entry.path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)


def _reap(control: _socket.socket, child: int) -> int:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return child
        if pid == 0:
            return child
        if pid == child:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
            control.sendmsg([b"exit %d %d" % (pid, code)])
            child = 0


def _no_socket_left() -> bool:
    """Whether the network namespace holds no unix socket (the zygote's own socket belongs to
    the judge's): /proc/net/unix is its header alone."""
    with open("/proc/net/unix", "rb") as sockets:
        return len(sockets.read().splitlines()) <= 1


def _kill_all() -> None:
    # From pid 1 of a pid namespace, kill(-1) reaches every other process in it (main()
    # checked that this is pid 1; checked again: never signal beyond the namespace).
    if os.getpid() != 1:
        os._exit(1)
    try:
        os.kill(-1, _signal.SIGKILL)
    except ProcessLookupError:
        return
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _run(entry: str) -> int:
    """Run ``entry`` as ``__main__`` and exit as the interpreter would: the exit code of
    SystemExit, 1 and the traceback for any other exception; threads joined, atexit run.

    As the interpreter runs a script: compiled from its source, executed in a fresh module
    ``__main__`` (runpy.run_path would cost the child more than the whole table: it imports
    pkgutil and asks the path hooks)."""
    import atexit

    code = 0
    try:
        with open(entry, "rb") as source:
            compiled = compile(source.read(), entry, "exec", dont_inherit=True)
        main = type(sys)("__main__")
        main.__file__ = entry
        sys.modules["__main__"] = main
        exec(compiled, main.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # as the interpreter does: the traceback on stderr, status 1
        import traceback

        traceback.print_exc()
        code = 1
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105
            stream.flush()
        except Exception:
            pass
    return code


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


if __name__ == "__main__":
    main()
