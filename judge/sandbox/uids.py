"""Host uids: one of the sandbox range per running bot when the judge runs as root."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from judge._fds import try_lock
from judge.sandbox.limits import SandboxError

# Host uids given to sandboxes when the judge runs as root: one per running bot,
# never 0, never "nobody" (shared with NFS and some daemons), outside the
# usual /etc/subuid ranges (100000-165535 per user). Uid and gid are equal.
# TAPIS_SANDBOX_UID_BASE moves the range (e.g. into a container's mapped uids).
SANDBOX_UID_BASE = 1_100_000
SANDBOX_UID_COUNT = 4096
_UID_LOCK_DIR = Path("/run/tapis-sandbox")


class _UidSlot:
    """A host uid reserved for one sandbox while its lock file is held."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # drops the flock
            self._fd = None


def _uid_base() -> int:
    configured = os.environ.get("TAPIS_SANDBOX_UID_BASE")
    if not configured:
        return SANDBOX_UID_BASE
    try:
        base = int(configured)
    except ValueError:
        base = 0
    if base < 1000 or base + SANDBOX_UID_COUNT > 2**32 - 2:
        raise SandboxError(f"TAPIS_SANDBOX_UID_BASE={configured!r}: a uid from 1000 up is needed")
    return base


def _acquire_uid() -> _UidSlot:
    try:
        _UID_LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    except OSError as exc:
        raise SandboxError(f"cannot create {_UID_LOCK_DIR}: {exc}") from exc
    base = _uid_base()
    start = secrets.randbelow(SANDBOX_UID_COUNT)
    for i in range(SANDBOX_UID_COUNT):
        uid = base + (start + i) % SANDBOX_UID_COUNT
        fd = try_lock(_UID_LOCK_DIR / f"{uid}.lock")
        if fd is not None:
            return _UidSlot(uid, fd)
    raise SandboxError(f"all {SANDBOX_UID_COUNT} sandbox uids are in use")
