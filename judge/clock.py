"""What a bot is charged for a decision or a start-up: time it had a CPU for, not time it waited.

The judge's clock was the wall clock, and on a busy host (another table's bots, other jobs, a
hog that spins 13 threads) a bot waits for a CPU through no fault of its own: its opponents
timed out and were replaced. So where the sandbox has CPU accounting (a cgroup: cpuacct, or
cgroup v2's ``cpu.stat``) a bot is charged

    max(wall time - time its threads waited for a CPU, CPU time of its sandbox)

- the wait is each thread's ``run_delay`` (/proc/TID/schedstat), which another bot can make
  grow but never shrink, and which is subtracted: another bot's load costs it nothing;
- never less than the CPU time its whole sandbox used (every thread, every process): a bot
  cannot lower its charge by making its own threads wait for each other;
- and the decision ends at ``WALL_CAP`` times the time allowed on the wall clock whatever it
  was charged, so that a starved table still ends.

Without CPU accounting (no cgroup, ``--sandbox none``) a bot is charged the wall time, as before
(docs/protocol.md, "Clock"). Pure arithmetic over the readings: judge/sandbox/cgroups.py reads
them.
"""

from __future__ import annotations

import time
from collections.abc import Callable

WALL_CAP = 4.0  # a decision or start-up ends at this many times its limit of wall time

Reading = tuple[float, float]  # (seconds waited for a CPU, CPU seconds) since some origin


def charged(wall: float, waited: float, cpu: float) -> float:
    """What a bot is charged for ``wall`` seconds in which its threads waited ``waited``
    seconds for a CPU and its sandbox used ``cpu`` seconds of CPU.

    >>> charged(2.34, 2.2, 0.1)  # a victim of a hog: charged what it ran
    0.14
    >>> charged(1.0, 12.0, 1.0)  # 13 threads of its own on one CPU: its CPU time
    1.0
    >>> charged(0.5, 0.0, 0.0)  # idle, not waiting (blocked): the wall time
    0.5
    """
    return round(max(wall - waited, cpu, 0.0), 9)


class Stopwatch:
    """The charge of one decision (or start-up) of one bot, from now.

    ``read`` gives the bot's cumulative (waited, cpu) seconds, or None: the wall clock alone
    applies. ``cpus`` is how many CPUs the bot may use at once (its CPU time can grow that much
    faster than the wall clock): between two readings the stopwatch knows a lower bound of the
    time left, so waiting on a pipe needs no reading until it has passed.
    """

    def __init__(
        self,
        read: Callable[[], Reading | None] | None,
        *,
        cpus: int = 1,
        started: float | None = None,
        now: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._now = now
        self._read = read
        self._cpus = max(1, cpus)
        self.started = now() if started is None else started
        self._origin = read() if read is not None else None

    def charged(self) -> float:
        """Seconds charged since the start."""
        wall = self._now() - self.started
        if self._origin is None or self._read is None:
            return wall
        reading = self._read()
        if reading is None:  # the sandbox is gone (the bot died): its last moments
            return wall
        return charged(wall, reading[0] - self._origin[0], reading[1] - self._origin[1])

    def remaining(self, allowed: float) -> float:
        """Seconds to wait at most before the charge may reach ``allowed`` (<= 0: it has, or
        the wall clock has reached ``WALL_CAP`` times it)."""
        wall = self._now() - self.started
        cap = WALL_CAP * allowed - wall
        if self._origin is None:
            return allowed - wall
        if cap <= 0:
            return 0.0
        if wall * self._cpus < allowed:  # the charge grows at most cpus times the wall time
            return min(cap, (allowed - wall * self._cpus) / self._cpus)
        return min(cap, allowed - self.charged())
