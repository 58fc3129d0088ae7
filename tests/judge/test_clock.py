"""What a bot is charged (judge/clock.py): pure arithmetic over its readings."""

from __future__ import annotations

from judge.clock import WALL_CAP, Stopwatch, charged


class Host:
    """A wall clock and a bot's (waited, cpu) counters that the test moves by hand."""

    def __init__(self) -> None:
        self.wall = 100.0
        self.waited = 5.0
        self.cpu = 3.0
        self.reads = 0

    def now(self) -> float:
        return self.wall

    def read(self) -> tuple[float, float] | None:
        self.reads += 1
        return self.waited, self.cpu


def test_the_charge_is_the_wall_time_less_the_waits_never_less_than_the_cpu_time() -> None:
    assert charged(2.34, 2.2, 0.1) == 0.14  # a hog's victim: it had the CPU 0.14 s
    assert charged(1.0, 12.0, 1.0) == 1.0  # 13 threads of its own: what it used
    assert charged(2.0, 0.0, 3.5) == 3.5  # threads on several CPUs: all of its CPU time
    assert charged(0.5, 0.0, 0.0) == 0.5  # blocked (not waiting for a CPU): the wall time
    assert charged(0.1, 0.5, 0.0) == 0.0


def test_a_stopwatch_charges_from_its_start() -> None:
    host = Host()
    watch = Stopwatch(host.read, now=host.now)
    host.wall += 2.0
    host.waited += 1.5
    host.cpu += 0.3
    assert watch.charged() == 0.5


def test_waits_do_not_count_against_the_time_left_until_the_wall_cap() -> None:
    host = Host()
    watch = Stopwatch(host.read, now=host.now)
    host.wall += 1.0
    host.waited += 0.9  # starved by others: charged 0.1
    assert round(watch.remaining(1.0), 9) == 0.9
    host.wall += 2.9
    host.waited += 2.9
    assert round(watch.remaining(1.0), 9) == 0.1  # the wall cap, 4 s, is 0.1 s away
    host.wall += 0.1
    assert watch.remaining(1.0) <= 0  # however little it was charged
    assert WALL_CAP == 4.0


def test_no_reading_is_taken_while_the_charge_cannot_have_reached_the_limit() -> None:
    host = Host()
    watch = Stopwatch(host.read, cpus=2, now=host.now)
    host.wall += 0.2
    assert host.reads == 1  # the origin
    assert round(watch.remaining(1.0), 9) == 0.3  # at most 2 CPU s per second: 0.3 s at least
    assert host.reads == 1
    host.wall += 0.4
    assert round(watch.remaining(1.0), 9) == 0.4  # read: 0.6 s charged (not waiting)
    assert host.reads == 2


def test_without_readings_the_wall_clock_applies() -> None:
    host = Host()
    watch = Stopwatch(None, now=host.now)
    host.wall += 0.7
    assert round(watch.charged(), 9) == 0.7
    assert round(watch.remaining(1.0), 9) == 0.3
    host.wall += 10.0
    assert watch.remaining(1.0) < 0  # no cap: the limit itself
