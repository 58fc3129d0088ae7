"""Seats: one small interface over a bot process and an in-process built-in bot.

A seat is asked for decisions and told notices. Whatever a bot process does, the methods here
either return a value or raise :class:`~judge.protocol.ProtocolFault`: they never block past the
deadline they are given and never hold more than the line cap of a bot's output in memory.

All I/O on a bot's pipes is non-blocking, driven by one ``poll`` object per seat; times come
from the monotonic high-resolution clock (``time.perf_counter``).
"""

from __future__ import annotations

import math
import os
import select
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from games.base import JSON, Action
from judge.bots.base import BuiltinBot
from judge.faults import FaultKind, clip, excerpt
from judge.protocol import (
    TOO_LONG,
    LineBuffer,
    ObservationDeltas,
    ProtocolFault,
    act_line,
    answer_id,
    check_answer,
    decode,
    encode,
    parse_ready,
)

READ_CHUNK = 64 * 1024
Left = Callable[[], float]  # seconds left to wait (<= 0: none)
LOG_CUT_NOTE = "\n[tapis: log cut at {cap} bytes; {dropped} more bytes dropped]\n"


class BotProcessLike(Protocol):
    """What a seat needs of :class:`judge.sandbox.BotProcess`."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> object: ...

    @property
    def stdout(self) -> object: ...

    @property
    def stderr(self) -> object: ...

    def poll(self) -> int | None: ...

    def exit_reason(self) -> str: ...

    def kill(self) -> None: ...


def _fileno(stream: object) -> int:
    fileno = getattr(stream, "fileno", None)
    if fileno is None:
        raise TypeError("a bot process needs real pipes")
    fd: int = fileno()
    return fd


class Seat(Protocol):
    """A bot at a table, process or built-in."""

    name: str | None

    def hello(self, message: Mapping[str, JSON]) -> None: ...

    def ask(
        self,
        request_id: int,
        deal: int,
        observation: dict[str, JSON],
        legal_actions: list[Action],
        bank: float,
        deadline: float,
    ) -> Action: ...

    def notify(self, message: Mapping[str, JSON]) -> None: ...


class BuiltinSeat:
    """A built-in bot: called directly, no JSON, no clock limit (it is trusted code)."""

    def __init__(self, bot: BuiltinBot) -> None:
        self.bot = bot
        self.name: str | None = bot.name

    def hello(self, message: Mapping[str, JSON]) -> None:
        try:
            self.bot.on_hello(message)
        except Exception as exc:
            raise ProtocolFault(FaultKind.INTERNAL, f"built-in bot failed: {exc!r}") from None

    def ask(
        self,
        request_id: int,
        deal: int,
        observation: dict[str, JSON],
        legal_actions: list[Action],
        bank: float,
        deadline: float,
    ) -> Action:
        try:
            return self.bot.act(observation, legal_actions)
        except Exception as exc:
            raise ProtocolFault(FaultKind.INTERNAL, clip(f"built-in bot failed: {exc!r}")) from None

    def notify(self, message: Mapping[str, JSON]) -> None:
        try:
            kind = message.get("type")
            if kind == "deal_end":
                self.bot.on_deal_end(message)
            elif kind == "game_end":
                self.bot.on_game_end(message)
        except Exception:  # a notice needs no answer; a failing built-in is caught at act
            pass


class ProcessSeat:
    """A bot process speaking the protocol on its pipes."""

    def __init__(
        self,
        process: BotProcessLike,
        *,
        line_cap: int,
        log_cap: int,
    ) -> None:
        self.process = process
        self.name: str | None = None
        self._in = _fileno(process.stdin)
        self._out = _fileno(process.stdout)
        self._err = _fileno(process.stderr)
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        self._poll.register(self._err, select.POLLIN)
        self._lines = LineBuffer(line_cap)
        self._log = bytearray()
        self._log_cap = log_cap
        self._log_dropped = 0
        self._pending = b""  # bytes for the bot's stdin not written yet
        self._writing = False  # whether stdin is registered for POLLOUT
        self._stale: set[int] = set()  # ids of requests that timed out: late answers are dropped
        self._deltas = ObservationDeltas()  # append-only lists are sent as deltas
        self.out_closed = False
        self._err_closed = False
        self.broken = False  # the bot's stdin is closed

    # -- low level -----------------------------------------------------------------------------

    def _read_out(self) -> None:
        try:
            data = os.read(self._out, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._lines.feed(data)
        else:
            self.out_closed = True
            self._poll.unregister(self._out)

    def _read_err(self) -> None:
        try:
            data = os.read(self._err, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._err_closed = True
            self._poll.unregister(self._err)
            return
        room = self._log_cap - len(self._log)
        if room > 0:
            self._log += data[:room]
        if len(data) > room:
            self._log_dropped += len(data) - max(room, 0)

    def _write_some(self) -> None:
        if self.broken:
            self._pending = b""
        if not self._pending:
            return
        try:
            written = os.write(self._in, self._pending)
        except BlockingIOError:
            written = 0
        except OSError:  # BrokenPipeError: the bot closed its stdin or exited
            self.broken = True
            self._pending = b""
            written = 0
        self._pending = self._pending[written:]
        want = bool(self._pending)
        if want != self._writing:
            if want:
                self._poll.register(self._in, select.POLLOUT)
            else:
                self._poll.unregister(self._in)
            self._writing = want

    def _pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the pipes, then serve whatever is ready."""
        events = self._poll.poll(max(0, math.ceil(timeout * 1000)))
        for fd, _ in events:
            if fd == self._out:
                self._read_out()
            elif fd == self._err:
                self._read_err()
            elif fd == self._in:
                self._write_some()

    def _send(self, data: bytes, left: Left | None) -> None:
        """Queue ``data`` for the bot's stdin and write what the pipe takes; with ``left``,
        keep at it (serving the other pipes) until all is written or no time is left."""
        self._pending += data
        self._write_some()
        if left is None:
            return
        while self._pending and not self.broken:
            remaining = left()
            if remaining <= 0:
                return
            self._pump(remaining)

    def _crash(self) -> ProtocolFault:
        status = self.process.poll()
        for _ in range(20):
            if status is not None:
                break
            time.sleep(0.001)
            status = self.process.poll()
        if status is None:
            what = "closed its stdout" if self.out_closed else "closed its stdin"
        else:
            what = ended(status)
        reason = self.process.exit_reason()  # e.g. killed at its memory limit
        return ProtocolFault(
            FaultKind.CRASH, f"the bot {what}: {reason}" if reason else f"the bot {what}"
        )

    def _drain_unasked(self) -> None:
        """Read what the bot sent since it was last asked: late answers to timed-out requests
        are dropped; anything else is a message before being asked."""
        self._pump(0)
        lines = self._lines
        while lines.has_line():
            line = lines.next_line()
            if line is TOO_LONG:
                lines.clear()
                raise ProtocolFault(
                    FaultKind.LINE_TOO_LONG,
                    f"a message over {lines.cap} bytes, sent before being asked",
                )
            assert isinstance(line, bytes)
            if self._stale:
                try:
                    late = answer_id(decode(line))
                except ProtocolFault:
                    late = None
                if late in self._stale:
                    self._stale.discard(late)
                    continue
            lines.clear()
            raise ProtocolFault(
                FaultKind.UNSOLICITED, f"sent a message before being asked: {excerpt(line)}"
            )

    # -- the protocol --------------------------------------------------------------------------

    def hello(self, message: Mapping[str, JSON]) -> None:
        """Send ``hello`` (the answer is read by :meth:`await_ready`)."""
        self._send(encode(message), None)

    def await_ready(self, deadline: float, left: Left | None = None) -> None:
        """Wait for ``ready`` until ``deadline`` (or while ``left()`` is positive: the time
        left by the bot's charge, judge/clock.py); sets :attr:`name`."""
        left = left if left is not None else _until(deadline)
        while True:
            line = self._lines.next_line()
            if line is None:
                if self.out_closed or self.broken:
                    raise self._crash()
                remaining = left()
                if remaining <= 0:
                    raise ProtocolFault(FaultKind.TIMEOUT, "no ready within the start-up limit")
                self._pump(remaining)
                continue
            if line is TOO_LONG:
                raise ProtocolFault(FaultKind.LINE_TOO_LONG, f"ready over {self._lines.cap} bytes")
            assert isinstance(line, bytes)
            self.name = parse_ready(line)
            return

    def ask(
        self,
        request_id: int,
        deal: int,
        observation: dict[str, JSON],
        legal_actions: list[Action],
        bank: float,
        deadline: float,
        left: Left | None = None,
    ) -> Action:
        """Send ``act`` and return the bot's action (not yet checked against the rules), within
        ``deadline`` (or while ``left()`` is positive: judge/clock.py).

        The observation goes out with its append-only lists as deltas (ObservationDeltas):
        once :meth:`_send` has queued the line, the bot receives all of it or dies."""
        left = left if left is not None else _until(deadline)
        if self._lines.has_line() or not self.out_closed:
            self._drain_unasked()
        if self.out_closed or self.broken:
            raise self._crash()
        wire = self._deltas.wire(deal, observation)
        self._send(act_line(request_id, deal, wire, legal_actions, bank), left)
        if self.broken:
            raise self._crash()
        if self._pending:
            self._stale.add(request_id)
            raise ProtocolFault(FaultKind.TIMEOUT, "the bot did not read its input in time")
        lines = self._lines
        while True:
            line = lines.next_line()
            if line is None:
                if self.out_closed:
                    raise self._crash()
                remaining = left()
                if remaining <= 0:
                    self._stale.add(request_id)
                    raise ProtocolFault(FaultKind.TIMEOUT, "no answer within the time allowed")
                self._pump(remaining)
                continue
            if line is TOO_LONG:
                raise ProtocolFault(FaultKind.LINE_TOO_LONG, f"an answer over {lines.cap} bytes")
            assert isinstance(line, bytes)
            message = decode(line)
            if self._stale:
                late = answer_id(message)
                if late in self._stale:
                    self._stale.discard(late)
                    continue
            return check_answer(message, request_id)

    def notify(self, message: Mapping[str, JSON]) -> None:
        """Send a notice without waiting: what the pipe does not take now is sent later."""
        self._send(encode(message), None)

    def notify_lines(self, data: bytes) -> None:
        self._send(data, None)

    def finish(self, deadline: float) -> None:
        """After the last notices: flush them, close the bot's stdin and wait until ``deadline``
        for the bot to close its output (reading its log meanwhile). Does not kill."""
        while self._pending and not self.broken:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            self._pump(remaining)
        self.close_stdin()
        while not (self.out_closed and self._err_closed):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            self._pump(remaining)
            self._lines.clear()

    def close_stdin(self) -> None:
        if self._writing:
            self._poll.unregister(self._in)
            self._writing = False
        self._pending = b""
        self.broken = True
        stdin = self.process.stdin
        close = getattr(stdin, "close", None)
        try:
            if close is not None:
                close()
            else:
                os.close(self._in)
        except OSError:
            pass

    def collect_log(self) -> None:
        """Read what is left of the bot's stderr without waiting."""
        for _ in range(64):
            if self._err_closed:
                break
            try:
                data = os.read(self._err, READ_CHUNK)
            except BlockingIOError:
                break
            except OSError:
                break
            if not data:
                self._err_closed = True
                break
            room = self._log_cap - len(self._log)
            if room > 0:
                self._log += data[:room]
            if len(data) > room:
                self._log_dropped += len(data) - max(room, 0)

    def log(self) -> str:
        """The bot's stderr, capped, with a note when it was cut."""
        text = self._log.decode(errors="replace")
        if self._log_dropped:
            text += LOG_CUT_NOTE.format(cap=self._log_cap, dropped=self._log_dropped)
        return text


def _until(deadline: float) -> Left:
    return lambda: deadline - time.perf_counter()


def ended(status: int) -> str:
    """How a bot's process ended, from its exit status: negative for a signal (Python's
    subprocess), 128 + N when bubblewrap's bot was killed by signal N.

    A sandboxed bot is pid 1 of its namespace, which the kernel spares the signals it sends
    itself: ``abort()`` (a failed assert, an uncaught C++ exception) then ends in SIGSEGV.

    >>> ended(3)
    'exited with status 3'
    >>> ended(-9)
    'was killed by signal 9 (SIGKILL)'
    >>> ended(139)
    'exited with status 139: killed by signal 11 (SIGSEGV)'
    """
    if status < 0:
        return f"was killed by {_signal(-status)}"
    if 128 < status <= 128 + signal.SIGRTMAX:
        return f"exited with status {status}: killed by {_signal(status - 128)}"
    return f"exited with status {status}"


def _signal(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def decision_times_summary(times: Sequence[float]) -> tuple[float, float]:
    """Mean and 99th percentile (nearest rank) of decision times; (0, 0) for none.

    >>> decision_times_summary([0.1, 0.2, 0.3, 0.4])
    (0.25, 0.4)
    """
    if not times:
        return 0.0, 0.0
    ordered = sorted(times)
    rank = max(1, math.ceil(0.99 * len(ordered)))
    return sum(ordered) / len(ordered), ordered[rank - 1]
