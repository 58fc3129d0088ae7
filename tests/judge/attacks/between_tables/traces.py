"""A bot that looks, at its start, for what an earlier table may have left by every channel a
sandbox could keep, then leaves something by each of them for the next table.

It reports on stderr (the seat's log): ``FOUND <channel>: ...`` for a trace of an earlier
table, ``LEFT <channel>`` for a trace it could leave, ``CANNOT <channel>: ...`` for one the
sandbox refused, ``PID <n>`` and ``PRIVILEGES <CapEff> <unshare errno>``. Then it plays the
first legal action.
"""

import contextlib
import ctypes
import errno
import os
import socket
import sys

from tapis_bot import Bot, run

TOKEN = b"the hands of table 1: AS KS QS"
WHEN = 1_234_567_890  # a timestamp no fresh folder has
KEY = 0x7A915  # System V IPC key
IPC_CREAT, IPC_EXCL, SETVAL, GETVAL = 0o1000, 0o2000, 16, 12
NAMES = {
    "file": "/tmp/tapis-trace",
    "folder": "/tmp/tapis-trace-dir",
    "fifo": "/tmp/tapis-trace-fifo",
    "socket": "/tmp/tapis-trace-socket",
    "shm_file": "/dev/shm/tapis-trace",
}
ABSTRACT = b"\0tapis-trace"
DAEMON = "tapis-trace-daemon"

libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.restype = ctypes.c_int
libc.sem_open.restype = ctypes.c_void_p


def say(*words):
    sys.stderr.write(" ".join(str(w) for w in words) + "\n")
    sys.stderr.flush()


def look():
    """Report every trace of an earlier table."""
    for channel, path in NAMES.items():
        if os.path.lexists(path):
            say("FOUND", channel, path)
    for folder, channel in (("/tmp", "xattr_tmp"), ("/dev/shm", "xattr_shm")):
        try:
            value = os.getxattr(folder, "user.tapis")
            say("FOUND", channel, value)
        except OSError:
            pass
    for folder, channel in (("/tmp", "times_tmp"), ("/dev/shm", "times_shm")):
        info = os.stat(folder)
        if int(info.st_mtime) == WHEN or int(info.st_atime) == WHEN:
            say("FOUND", channel, info.st_mtime, info.st_atime)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(ABSTRACT)
            say("FOUND abstract_socket")
        except OSError:
            pass
    semid = libc.semget(KEY, 0, 0)
    if semid >= 0:
        say("FOUND sysv_semaphore", libc.semctl(semid, 0, GETVAL))
    for name, channel in ((libc.shmget, "sysv_shm"), (libc.msgget, "sysv_queue")):
        if (name(KEY, 0, 0) if channel == "sysv_shm" else name(KEY, 0)) >= 0:
            say("FOUND", channel)
    mq = libc.mq_open(b"/tapis-trace", os.O_RDONLY)
    if mq >= 0:
        say("FOUND posix_queue")
    if libc.sem_open(b"/tapis-trace", 0):
        say("FOUND posix_semaphore")
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if f.read().startswith(DAEMON.encode()):
                        say("FOUND process", entry)
            except OSError:
                pass
    with open("/proc/self/net/dev") as f:  # /proc/net is not in a table's /proc
        for line in f:
            name, _, counters = line.partition(":")
            if name.strip() == "lo" and int(counters.split()[0]) > 0:
                say("FOUND loopback_traffic", counters.split()[0])


def leave(channel, action):
    try:
        result = action()
    except OSError as exc:
        say("CANNOT", channel, exc)
        return
    if result is not None and result < 0:
        say("CANNOT", channel, os.strerror(ctypes.get_errno()))
    else:
        say("LEFT", channel)


def write(path):
    with open(path, "wb") as f:
        f.write(TOKEN)


def bind(sock, address):
    sock.bind(address)
    sock.listen()


def semaphore():
    semid = libc.semget(KEY, 1, IPC_CREAT | 0o600)
    return semid if semid < 0 else libc.semctl(semid, 0, SETVAL, 42)


def loopback():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as client:
            client.sendall(TOKEN)


def daemon(sockets):
    """A process that would outlive the table, holding the sockets open."""
    pid = os.fork()
    if pid == 0:
        with contextlib.suppress(OSError):  # refused (docs/sandbox.md, "Host-wide channels")
            os.setsid()
        os.execv("/usr/bin/sleep", [DAEMON, "600"])
    for sock in sockets:
        sock.close()


def leave_all():
    leave("file", lambda: write(NAMES["file"]))
    leave("folder", lambda: os.mkdir(NAMES["folder"]))
    leave("fifo", lambda: os.mkfifo(NAMES["fifo"]))
    named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    named.set_inheritable(True)
    abstract.set_inheritable(True)
    leave("socket", lambda: bind(named, NAMES["socket"]))
    leave("abstract_socket", lambda: bind(abstract, ABSTRACT))
    leave("shm_file", lambda: write(NAMES["shm_file"]))
    leave("xattr_tmp", lambda: os.setxattr("/tmp", "user.tapis", TOKEN))
    leave("xattr_shm", lambda: os.setxattr("/dev/shm", "user.tapis", TOKEN))
    leave("sysv_semaphore", semaphore)
    leave("sysv_shm", lambda: libc.shmget(KEY, 4096, IPC_CREAT | 0o600))
    leave("sysv_queue", lambda: libc.msgget(KEY, IPC_CREAT | 0o600))
    leave("posix_queue", lambda: libc.mq_open(b"/tapis-trace", os.O_CREAT | os.O_RDWR, 0o600, None))
    leave(
        "posix_semaphore", lambda: 0 if libc.sem_open(b"/tapis-trace", os.O_CREAT, 0o600, 7) else -1
    )
    leave("loopback_traffic", loopback)
    leave("process", lambda: daemon([named, abstract]))
    leave("times_tmp", lambda: os.utime("/tmp", (WHEN, WHEN)))
    leave("times_shm", lambda: os.utime("/dev/shm", (WHEN, WHEN)))


def privileges():
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f)
    caps = [status[name].strip() for name in ("CapEff", "CapPrm", "CapBnd")]
    failed = libc.unshare(0x08000000)  # CLONE_NEWIPC
    say("PRIVILEGES", *caps, errno.errorcode.get(ctypes.get_errno(), "none") if failed else "ok")
    say("PROC", *sorted(name for name in os.listdir("/proc") if not name.isdigit()))


say("PID", os.getpid())
privileges()
look()
leave_all()


class First(Bot):
    name = "traces"

    def act(self, observation, legal_actions):
        return legal_actions[0]


run(First())
