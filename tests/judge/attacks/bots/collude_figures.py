"""Two bots read figures of the whole host that another sandbox moves: the host's process count
(sysinfo), /proc's host-wide files (stat, loadavg, meminfo, locks...), the autogroup number
that every setsid takes (/proc/self/autogroup) and the pidfs inode number of a pidfd (a
host-wide counter of pids). Seat 0 moves them at hello; seat 1 reads them."""

import ctypes
import os

from _attack import Attacker, blocked, main, succeeded, syscall

HOST_FILES = ("/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/vmstat", "/proc/locks")
SYSINFO, PIDFD_OPEN = 99, 434


def in_child(action):
    """Run ``action()`` in a child; whether it returned."""
    pid = os.fork()
    if pid == 0:
        try:
            action()
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def figures():
    """The host-wide figures this bot can read: name -> value."""
    found = {}
    info = ctypes.create_string_buffer(256)
    try:
        syscall(SYSINFO, ctypes.addressof(info))
        found["sysinfo procs"] = int.from_bytes(info.raw[80:82], "little")
    except OSError:
        pass
    for path in HOST_FILES:
        try:
            with open(path, "rb") as f:
                if f.read(64):
                    found[path] = "readable"
        except OSError:
            pass
    if in_child(os.setsid):
        found["autogroup"] = "setsid allowed"
    try:
        pidfd = syscall(PIDFD_OPEN, os.getpid(), 0)
        found["pidfd inode"] = os.fstat(pidfd).st_ino
        os.close(pidfd)
    except OSError:
        pass
    return found


class ColludeFigures(Attacker):
    def attack(self):
        if self.seat == 0:
            moved = [in_child(os.setsid) for _ in range(13)]
            if not any(moved):
                blocked("setsid refused: no autogroup moved")
            return
        found = figures()
        if found:
            succeeded(f"host-wide figures readable: {found}")
        else:
            blocked("no host-wide figure readable")


main(ColludeFigures())
