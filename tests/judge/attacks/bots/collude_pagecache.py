"""Two bots of one author at two tables played one after the other on one machine (the tables
of a duplicate round) talk through the page cache, which outlives a table: the first reads
the pages of its hand's bits of a rarely read file (loading them into the cache), the second
reads every page and counts its major faults (/proc/self/stat): a page read without one was
cached, a bit set. MADV_RANDOM keeps the kernel from reading ahead."""

import mmap
import os

from _attack import PARAMS, Attacker, blocked, main, succeeded

PAGE = mmap.PAGESIZE
BITS = [1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1]  # the message: page i read if 1
FIRST = 4  # the pages used start here (away from the file's start, which others may read)


def major_faults():
    with open("/proc/self/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[9])


def mapped():
    fd = os.open(PARAMS["rare_file"], os.O_RDONLY)
    try:
        pages = mmap.mmap(fd, (FIRST + len(BITS)) * PAGE, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    pages.madvise(mmap.MADV_RANDOM)
    return pages


class ColludePagecache(Attacker):
    def attack(self):
        try:
            pages = mapped()
        except OSError as exc:
            blocked(f"open {PARAMS['rare_file']}: errno {exc.errno}")
            return
        if PARAMS["role"] == "write":
            touched = sum(pages[(FIRST + i) * PAGE] for i, bit in enumerate(BITS) if bit)
            blocked(f"wrote its bits (sum {touched}): the next table's bot tells")
            return
        bits = []
        for i in range(len(BITS)):
            before = major_faults()
            pages[(FIRST + i) * PAGE]
            bits.append(1 if major_faults() == before else 0)
        if bits == BITS:
            succeeded(f"read the earlier table's {len(BITS)} bits by major faults")
        else:
            blocked(f"read {bits}, not the earlier table's bits")


main(ColludePagecache())
