"""Waiting on and locking file descriptors: small helpers that the sandbox, the launchers
and the runner share."""

from __future__ import annotations

import fcntl
import math
import os
import select
import time
from pathlib import Path


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
