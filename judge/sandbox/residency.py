"""Every page of what a sandbox can open, in the page cache: no page left to carry a bit from
one table to a later one (docs/sandbox.md, "Host-wide channels": the page cache).

A bot that reads pages of a rarely read file loads them into the page cache, which outlives its
table; a later bot could tell which pages are cached by reading them (a major fault, or time).
Before a bot starts, :func:`make_resident` asks the kernel how many pages of each file it can
open are cached (``cachestat``, one system call per file) and reads the files that are not
whole; a bot cannot evict a page (seccomp refuses it), so every page it can touch stays cached
for its table. A runtime's files (many: Python's standard library) are locked in memory
instead, once per process (:func:`keep_resident`, ``mlock``): memory pressure cannot evict them
either, and no check is needed at the next bot.
"""

from __future__ import annotations

import ctypes
import functools
import mmap
import os
import threading
from collections.abc import Iterable

_CACHESTAT = 451  # x86_64 and the generic table alike
_PAGE = mmap.PAGESIZE
_CHUNK = 1 << 20


_locked: dict[tuple[str, ...], bool] = {}  # file sets of this process: locked, or not lockable
_locking = threading.Lock()


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_long,
    ]
    libc.mlock.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    return libc


def keep_resident(files: tuple[str, ...]) -> None:
    """Every page of ``files`` in the page cache: locked there for the life of this process the
    first time (``mlock`` of a read-only mapping), else (no ``CAP_IPC_LOCK`` nor room in
    ``RLIMIT_MEMLOCK``) read by :func:`make_resident` each time."""
    with _locking:
        locked = _locked.get(files)
        if locked is None:
            locked = _locked[files] = _lock_all(files)
    if not locked:
        make_resident(files)


def _lock_all(files: tuple[str, ...]) -> bool:
    """Map and lock every file (its pages read in); False, nothing kept, if one cannot be."""
    libc = _libc()
    mappings: list[tuple[int, int]] = []
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            if not size:
                continue
            address = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        finally:
            os.close(fd)
        if address in (None, ctypes.c_void_p(-1).value):
            break
        mappings.append((address, size))
        if libc.mlock(address, size) != 0:
            break
    else:
        return True
    for address, size in mappings:
        libc.munmap(address, size)
    return False


def make_resident(files: Iterable[str]) -> int:
    """Bring every page of ``files`` into the page cache; the bytes read (0 when all were)."""
    read = 0
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NOATIME)
        except PermissionError:  # O_NOATIME on a file not the judge's own
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone since: nothing of it to open in the sandbox either
        try:
            size = os.fstat(fd).st_size
            if size and cached_pages(fd, size) < (size + _PAGE - 1) // _PAGE:
                read += _read_all(fd, size)
        finally:
            os.close(fd)
    return read


def cached_pages(fd: int, size: int) -> int:
    """How many pages of the first ``size`` bytes of ``fd`` are in the page cache (-1: the
    kernel cannot tell, before 6.5)."""
    if not _cachestat_works():
        return -1
    span = (ctypes.c_uint64 * 2)(0, size)
    stat = (ctypes.c_uint64 * 5)()
    libc = _libc()
    if libc.syscall(_CACHESTAT, fd, ctypes.byref(span), ctypes.byref(stat), 0) != 0:
        return -1
    return int(stat[0])


@functools.cache
def _cachestat_works() -> bool:
    fd = os.open("/proc/self/exe", os.O_RDONLY)
    try:
        span = (ctypes.c_uint64 * 2)(0, 1)
        stat = (ctypes.c_uint64 * 5)()
        done = _libc().syscall(_CACHESTAT, fd, ctypes.byref(span), ctypes.byref(stat), 0)
        return bool(done == 0)
    finally:
        os.close(fd)


def _read_all(fd: int, size: int) -> int:
    buffer = bytearray(_CHUNK)
    view = memoryview(buffer)
    done = 0
    while done < size:
        count = os.preadv(fd, [view], done)
        if count <= 0:
            break
        done += count
    return done
