"""Two bots talk through the page cache of a rarely read file of /usr, the same in every
sandbox: seat 0 reads it all, then evicts the pages of its hand's bits (posix_fadvise
DONTNEED); seat 1 probes which pages are cached without loading them (mincore,
preadv2(RWF_NOWAIT), cachestat) and reads the bits back. The cache outlives a table: a later
sandbox could read them too."""

import contextlib
import ctypes
import mmap
import os

from _attack import PARAMS, Attacker, blocked, main, must_fail, succeeded, syscall

PAGE = mmap.PAGESIZE
BITS = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1]  # the message: page i evicted if 1
FIRST = 4  # the pages probed start here (away from the file's start, which others may read)
CACHESTAT = 451
_libc = ctypes.CDLL(None, use_errno=True)


def mincore_bits(fd):
    size = (FIRST + len(BITS)) * PAGE
    _libc.mmap.restype = ctypes.c_void_p
    address = _libc.mmap(None, ctypes.c_size_t(size), mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    vector = (ctypes.c_ubyte * (FIRST + len(BITS)))()
    try:
        if _libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(size), vector) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
    finally:
        _libc.munmap(ctypes.c_void_p(address), ctypes.c_size_t(size))
    return [0 if vector[FIRST + i] & 1 else 1 for i in range(len(BITS))]


def nowait_bits(fd):
    bits = [0] * len(BITS)
    for i in reversed(range(len(BITS))):  # backwards: a read's readahead goes forwards
        try:
            os.preadv(fd, [bytearray(1)], (FIRST + i) * PAGE, os.RWF_NOWAIT)
        except BlockingIOError:
            bits[i] = 1
    return bits


def cachestat_bits(fd):
    bits = []
    for i in range(len(BITS)):
        span = (ctypes.c_uint64 * 2)((FIRST + i) * PAGE, PAGE)
        stat = (ctypes.c_uint64 * 5)()
        syscall(CACHESTAT, fd, ctypes.addressof(span), ctypes.addressof(stat), 0)
        bits.append(0 if stat[0] else 1)
    return bits


class ColludeCache(Attacker):
    def attack(self):
        self.tries = 0
        if self.seat != 0:
            return
        fd = os.open(PARAMS["rare_file"], os.O_RDONLY)
        os.pread(fd, (FIRST + len(BITS)) * PAGE, 0)  # every page cached
        for i, bit in enumerate(BITS):
            if bit:
                must_fail(
                    f"evict page {FIRST + i}",
                    lambda i=i: os.posix_fadvise(
                        fd, (FIRST + i) * PAGE, PAGE, os.POSIX_FADV_DONTNEED
                    ),
                )
                break  # once is evidence enough
        for i, bit in enumerate(BITS):
            if bit:
                with contextlib.suppress(OSError):
                    os.posix_fadvise(fd, (FIRST + i) * PAGE, PAGE, os.POSIX_FADV_DONTNEED)
        os.close(fd)

    def on_act(self, observation, legal_actions):
        if self.seat != 1 or self.tries:
            return
        self.tries += 1
        fd = os.open(PARAMS["rare_file"], os.O_RDONLY)
        read = []
        for label, probe in (
            ("mincore", mincore_bits),
            ("cachestat", cachestat_bits),
            ("preadv2 RWF_NOWAIT", nowait_bits),
        ):
            try:
                bits = probe(fd)
            except OSError as exc:
                blocked(f"{label}: errno {exc.errno}")
                continue
            if bits == BITS:
                read.append(label)
            else:
                blocked(f"{label}: read {bits}, not the partner's bits")
        os.close(fd)
        if read:
            succeeded(f"read the partner's {len(BITS)} bits through {read}")


main(ColludeCache())
