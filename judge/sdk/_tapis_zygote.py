"""The bot zygote: a started Python, inside a bot's sandbox, that forks the bot for each table.

Not part of the SDK's API: the judge runs it (judge/zygote.py). Starting a sandbox and a Python
costs a sandboxed bot more CPU than a whole table of play; a zygote pays it once for many
tables of one bot version, one table at a time. It runs as ``python3 -S -u`` in the sandbox of
the version (the same ``/bot``, uid, rlimits and seccomp filter as a bot started alone) and
obeys the judge on the unix socket whose descriptor is its first argument:

* ``fork CPUS ENTRY`` with three descriptors (the bot's stdin, stdout and stderr): fork a
  child that runs ``ENTRY`` as ``__main__``, as ``python3 -S -u ENTRY`` would, in a session of
  its own, on the CPUs ``CPUS`` (``0,3``; ``-``: the zygote's own); answer ``pid N`` (its pid in
  the sandbox) with a pidfd of the child;
* ``clean``: kill every other process of the sandbox (the table's bot and whatever it left
  behind: the zygote is pid 1 of the pid namespace), reap them, empty ``/tmp``; answer
  ``clean``, or ``dirty`` if something could not be removed (the judge then retires it).

When a child it forked exits, it sends ``exit N STATUS`` (STATUS as the shell has it: the exit
code, or 128 + the signal). End of file on the socket (the judge gone) ends it.
"""

import gc
import os
import select
import signal
import socket
import sys

# What every child needs (runpy, atexit) and what bots often import: imported once here
# rather than at every table.
PRELOAD = (
    "atexit",
    "tapis_bot",
    "json",
    "random",
    "collections",
    "itertools",
    "functools",
    "math",
)


def main() -> None:
    if os.getpid() != 1:
        # Its clean kills every process it may signal: only pid 1 of a pid namespace of its
        # own may do that (outside, it would reach every process of its uid, or of the host).
        sys.exit("_tapis_zygote: refusing to run outside a pid namespace of its own (pid 1)")
    control = socket.socket(fileno=int(sys.argv[1]))
    for name in PRELOAD:
        try:  # noqa: SIM105 (contextlib: an import more at the zygote's start)
            __import__(name)
        except ImportError:
            pass
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # Objects made so far live as long as the zygote: out of the collector's sight, a child's
    # collections neither walk them nor copy their pages (copy-on-write) by touching them.
    gc.collect()
    gc.freeze()
    child = 0
    control.sendmsg([b"ready"])
    while True:
        readable, _, _ = select.select([control.fileno(), wake_r], [], [])
        if wake_r in readable:
            os.read(wake_r, 512)
            child = _reap(control, child)
        if control.fileno() in readable:
            message, fds, _, _ = socket.recv_fds(control, 4096, 3)
            if not message:
                os._exit(0)
            command, _, argument = message.partition(b" ")
            if command == b"fork" and len(fds) == 3:
                sys.stdout.flush()
                sys.stderr.flush()
                cpus, _, entry = argument.partition(b" ")
                pid = os.fork()
                if pid == 0:
                    _child(entry.decode(), cpus, fds, [control.fileno(), wake_r, wake_w])
                for fd in fds:
                    os.close(fd)
                child = pid
                # A pidfd, taken before the child can be reaped (only this loop reaps): the
                # judge kills and watches the child through it, whatever happens here later.
                pidfd = os.pidfd_open(pid)
                socket.send_fds(control, [b"pid %d" % pid], [pidfd])
                os.close(pidfd)
            elif command == b"clean":
                _kill_all()
                child = 0
                control.sendmsg([b"clean" if _empty("/tmp") else b"dirty"])
            else:
                for fd in fds:
                    os.close(fd)
                control.sendmsg([b"error unknown command"])


def _reap(control: socket.socket, child: int) -> int:
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


def _kill_all() -> None:
    # From pid 1 of a pid namespace, kill(-1) reaches every other process in it (main()
    # checked that this is pid 1; checked again: never signal beyond the namespace).
    if os.getpid() != 1:
        os._exit(1)
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        return
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _empty(folder: str) -> bool:
    clean = True
    for entry in os.scandir(folder):
        try:
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)
                clean = _empty(entry.path) and clean
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            clean = False
    return clean


def _child(entry: str, cpus: bytes, fds: list[int], inherited: list[int]) -> None:
    """In the forked child: become the bot. Never returns."""
    code = 1
    try:
        if cpus != b"-":  # before any of the bot's code runs
            os.sched_setaffinity(0, {int(cpu) for cpu in cpus.split(b",")})
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in [*fds, *inherited]:
            if fd > 2:
                os.close(fd)
        sys.argv[:] = [entry]
        sys.path[0] = os.path.dirname(entry)
        code = _run(entry)
    finally:
        os._exit(code)


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
