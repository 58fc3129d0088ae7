"""What cannot be closed on a shared kernel (docs/sandbox.md, "Host-wide channels"): numbers the
kernel gives a process about its own objects but takes from the whole host. Seat 0 holds 13
eventfds and maps a page of a rarely read /usr file; seat 1 reads the id of an eventfd of its
own (/proc/self/fdinfo: the lowest free id of the host) and whether its own mapping of that
page is shared with another process (/proc/self/smaps). A known hole: the tournaments never
play two tables of one duplicate round at once on one kernel."""

import mmap
import os

from _attack import PARAMS, Attacker, blocked, main, succeeded

CARDS = 13


def eventfd_id():
    fd = os.eventfd(0)
    try:
        with open(f"/proc/self/fdinfo/{fd}") as info:
            for line in info:
                if line.startswith("eventfd-id:"):
                    return int(line.split()[1])
    finally:
        os.close(fd)
    return -1


def shared_page():
    """Whether this process's mapping of the rare file's first page is mapped elsewhere too."""
    with open(PARAMS["rare_file"], "rb") as f:
        mapping = mmap.mmap(f.fileno(), mmap.PAGESIZE, prot=mmap.PROT_READ)
    mapping[0]  # mapped in
    with open("/proc/self/smaps") as smaps:
        text = smaps.read()
    mapping.close()
    block = text[text.index(PARAMS["rare_file"]) :]
    shared = next(line for line in block.splitlines() if line.startswith("Shared_Clean:"))
    return int(shared.split()[1]) > 0


class ColludeNumbers(Attacker):
    def attack(self):
        self.tries = 0
        if self.seat == 0:
            self.held = [os.eventfd(0) for _ in range(CARDS)]
            with open(PARAMS["rare_file"], "rb") as f:
                self.mapping = mmap.mmap(f.fileno(), mmap.PAGESIZE, prot=mmap.PROT_READ)
            self.mapping[0]  # mapped in, for the partner's smaps

    def on_act(self, observation, legal_actions):
        if self.seat != 1 or self.tries:
            return
        self.tries += 1
        seen = []
        if eventfd_id() >= CARDS:
            seen.append("eventfd ids held elsewhere")
        if shared_page():
            seen.append("a page of the rare file mapped elsewhere")
        if seen:
            succeeded(f"numbers of the whole host: {seen}")
        else:
            blocked("no number of another sandbox")


main(ColludeNumbers())
