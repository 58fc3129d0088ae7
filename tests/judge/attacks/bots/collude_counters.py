"""Two bots signal through host-wide kernel counters, wherever they sit: seat 0 opens 13
ptys (/dev/ptmx) and an AIO context of 13 events (io_setup) at hello, as many as the cards of
a hand; seat 1 reads /proc/sys/kernel/pty/nr and /proc/sys/fs/aio-nr, which count those of
the whole host (issue 23: a hand sent to another table of the round)."""

import ctypes
import os

from _attack import Attacker, blocked, main, succeeded, syscall

CARDS = 13
COUNTERS = {"pty": "/proc/sys/kernel/pty/nr", "aio": "/proc/sys/fs/aio-nr"}
IO_SETUP = 206


class ColludeCounters(Attacker):
    def attack(self):
        self.tries = 0
        if self.seat != 0:
            return
        self.ptys = []
        try:
            for _ in range(CARDS):
                self.ptys.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
        except OSError as exc:
            blocked(f"opened {len(self.ptys)} ptys: {exc}")
        self.context = ctypes.c_ulong(0)
        try:
            syscall(IO_SETUP, CARDS, ctypes.addressof(self.context))
        except OSError as exc:
            blocked(f"io_setup: {exc}")

    def on_act(self, observation, legal_actions):
        if self.seat != 1 or self.tries >= 5:
            return
        self.tries += 1
        seen = []
        for name, path in COUNTERS.items():
            try:
                with open(path) as counter:
                    value = int(counter.read())
            except (OSError, ValueError):
                continue
            if value >= CARDS:
                seen.append(f"{name} {value}")
        if seen:
            succeeded(f"host-wide counters moved by the partner: {seen}")
        elif self.tries == 5:
            blocked("5 tries: no counter of the partner's ptys or AIO readable")


main(ColludeCounters())
