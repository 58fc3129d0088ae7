"""Two bots signal through a futex on a shared mapping of a file of /usr, the same file in
every sandbox: a futex without FUTEX_PRIVATE_FLAG there is keyed by the file, not by the
process. Seat 1 waits on it in a thread; seat 0 wakes it at each of its decisions."""

import ctypes
import errno
import mmap
import os
import threading
import time

from _attack import Attacker, blocked, main, succeeded

SHARED = "/usr/bin/true"
FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 0, 1
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class Timespec(ctypes.Structure):
    _fields_ = (("sec", ctypes.c_long), ("nsec", ctypes.c_long))


def shared_word():
    """The address of the first word of SHARED, mapped shared and read-only, and its value."""
    fd = os.open(SHARED, os.O_RDONLY)
    _libc.mmap.restype = ctypes.c_void_p
    address = _libc.mmap(None, ctypes.c_size_t(4096), mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    os.close(fd)
    return address, ctypes.c_uint32.from_address(address).value


def futex(address, op, value, timeout=None):
    ctypes.set_errno(0)
    rc = _libc.syscall(
        ctypes.c_long(FUTEX),
        ctypes.c_void_p(address),
        ctypes.c_long(op),
        ctypes.c_long(value),
        ctypes.byref(timeout) if timeout is not None else None,
        None,
        ctypes.c_long(0),
    )
    return rc, ctypes.get_errno()


class ColludeFutex(Attacker):
    def attack(self):
        self.tries, self.woken, self.waits = 0, 0, []
        self.address, self.value = shared_word()
        if self.seat == 1:
            threading.Thread(target=self.wait, daemon=True).start()

    def wait(self):
        for _ in range(200):
            rc, error = futex(self.address, FUTEX_WAIT, self.value, Timespec(0, 100_000_000))
            if rc == 0:
                self.woken += 1
            else:
                self.waits.append(errno.errorcode.get(error, error))
                if error != errno.ETIMEDOUT:
                    time.sleep(0.02)  # refused or returned at once: no spin

    def on_act(self, observation, legal_actions):
        if self.tries >= 10:
            return
        self.tries += 1
        if self.seat == 1:
            if self.woken:
                succeeded(f"woken {self.woken} times by the partner's futex wake")
            elif self.tries == 10:
                blocked(f"never woken; waits ended with {sorted(set(self.waits))}")
            return
        rc, error = futex(self.address, FUTEX_WAKE, 1)
        if rc > 0:
            succeeded(f"woke {rc} waiter of another sandbox")
        elif rc < 0 and self.tries == 1:
            blocked(f"shared futex wake refused: {errno.errorcode.get(error, error)}")
        elif self.tries == 10:
            blocked("10 wakes reached nobody")


main(ColludeFutex())
