"""The bot protocol, version 1: JSON lines on stdin/stdout (docs/protocol.md).

This module builds the judge's messages and parses the bot's, defensively: whatever a bot sends,
parsing either returns a well-typed value or raises :class:`ProtocolFault` carrying the
:class:`~judge.faults.FaultKind` to record. It does no I/O: :class:`LineBuffer` frames the bytes
read from a pipe into lines without ever holding more than the line cap.

>>> buf = LineBuffer(cap=16)
>>> buf.feed(b'{"type":"ready"}\\n{"id":1,')
>>> buf.next_line()
b'{"type":"ready"}'
>>> buf.next_line() is None
True
>>> parse_ready(b'{"type": "ready", "name": "Ada"}')
'Ada'
>>> parse_answer(b'{"id": 7, "action": "QS"}', expected_id=7)
'QS'
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Final

from games.base import JSON, Action
from judge.faults import FaultKind, excerpt

PROTOCOL_VERSION: Final = 1
LINE_CAP: Final = 64 * 1024  # bytes per message, newline excluded
NAME_CHARS: Final = 40
# Observation fields that only grow within a deal: an ``act`` carries only their new entries
# (see ObservationDeltas). The SDK (judge/sdk/tapis_bot.py) keeps its own copy of this tuple.
APPEND_ONLY: Final = ("history", "tricks")
START_SUFFIX: Final = "_start"

# One encoder, built once: json.dumps with keyword arguments builds a new encoder every call.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
_decode = json.JSONDecoder().decode


class ProtocolFault(Exception):
    """A message that breaks the protocol: the fault kind and a detail for the bot's author."""

    def __init__(self, kind: FaultKind, detail: str) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail


class _TooLong:
    """The marker :meth:`LineBuffer.next_line` returns for a line over the cap."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TOO_LONG"


TOO_LONG: Final = _TooLong()


class LineBuffer:
    """Frames a byte stream into lines of at most ``cap`` bytes.

    An over-long line yields :data:`TOO_LONG` once, as soon as the cap is passed (the judge does
    not wait for its end), and the rest of it is dropped as it arrives: the buffer never holds
    more than ``cap`` bytes plus one read.

    >>> buf = LineBuffer(cap=4)
    >>> buf.feed(b"12345678")
    >>> buf.next_line()
    TOO_LONG
    >>> buf.feed(b"9\\nok\\n")
    >>> buf.next_line(), buf.next_line(), buf.next_line()
    (b'ok', None, None)
    """

    __slots__ = ("_buf", "_discarding", "_lines", "cap")

    def __init__(self, cap: int = LINE_CAP) -> None:
        self.cap = cap
        self._buf = bytearray()
        self._lines: deque[bytes | _TooLong] = deque()
        self._discarding = False

    def feed(self, data: bytes) -> None:
        if self._discarding:
            end = data.find(b"\n")
            if end < 0:
                return
            self._discarding = False
            data = data[end + 1 :]
        buf = self._buf
        if not buf and data.endswith(b"\n") and data.find(b"\n") == len(data) - 1:
            # The common case: exactly one whole line.
            self._push(data[:-1])
            return
        buf += data
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            self._push(bytes(buf[start:end]))
            start = end + 1
        del buf[:start]
        if len(buf) > self.cap:
            buf.clear()
            self._lines.append(TOO_LONG)
            self._discarding = True

    def _push(self, line: bytes) -> None:
        if len(line) > self.cap:
            self._lines.append(TOO_LONG)
        else:
            self._lines.append(line[:-1] if line.endswith(b"\r") else line)

    def next_line(self) -> bytes | _TooLong | None:
        """The next complete line (without its newline), TOO_LONG, or None for none yet."""
        return self._lines.popleft() if self._lines else None

    def has_line(self) -> bool:
        return bool(self._lines)

    def clear(self) -> None:
        """Forget every complete line not yet taken (a partial line is kept)."""
        self._lines.clear()


# ---------------------------------------------------------------------------------------------
# The judge's messages
# ---------------------------------------------------------------------------------------------


def encode(message: Mapping[str, JSON]) -> bytes:
    """One message as a compact JSON line (ASCII, ending with a newline).

    >>> encode({"type": "bye"})
    b'{"type":"bye"}\\n'
    """
    return (_encode(message) + "\n").encode()


def hello_message(
    *,
    game: str,
    preset: str,
    options: Mapping[str, JSON],
    seat: int,
    players: int,
    startup: float,
    decision: float,
    bank: float,
) -> dict[str, JSON]:
    return {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "game": game,
        "preset": preset,
        "options": dict(options),
        "seat": seat,
        "players": players,
        "limits": {"startup": startup, "decision": decision, "bank": bank},
    }


class ObservationDeltas:
    """What one seat has already been sent of each append-only list of its observations.

    Protocol 1 sends the lists named in :data:`APPEND_ONLY` (``history``, ``tricks``) as a
    delta: within a deal, the observation of an ``act`` carries only the entries the seat has
    not been sent yet, and ``<key>_start``, the index in the whole list of the first entry
    sent (the number of entries sent before in this deal; 0 at the first ``act`` of a deal).
    Every other field is sent whole (docs/protocol.md, "Observations").

    One instance per seat; :meth:`wire` must be called only for an ``act`` that is sent (the
    judge sends every ``act`` it starts writing, or the bot dies).

    >>> deltas = ObservationDeltas()
    >>> deltas.wire(0, {"turn": 1, "history": ["a", "b"]})
    {'turn': 1, 'history_start': 0, 'history': ['a', 'b']}
    >>> deltas.wire(0, {"turn": 2, "history": ["a", "b", "c"]})
    {'turn': 2, 'history_start': 2, 'history': ['c']}
    >>> deltas.wire(1, {"turn": 0, "history": ["x"]})
    {'turn': 0, 'history_start': 0, 'history': ['x']}
    """

    __slots__ = ("_deal", "_sent")

    def __init__(self) -> None:
        self._deal: int | None = None
        self._sent: dict[str, int] = {}

    def wire(self, deal: int, observation: Mapping[str, JSON]) -> dict[str, JSON]:
        """The observation as the seat is to be sent it now (and remember what it was sent)."""
        if deal != self._deal:
            self._deal = deal
            self._sent = dict.fromkeys(APPEND_ONLY, 0)
        sent = self._sent
        out: dict[str, JSON] = {}
        for key, value in observation.items():
            if key in sent and isinstance(value, list):
                start = sent[key]
                if start > len(value):  # never, for the engines' lists: then send it whole
                    start = 0
                out[key + START_SUFFIX] = start
                out[key] = value[start:]
                sent[key] = len(value)
            else:
                out[key] = value
        return out


def act_line(
    request_id: int, deal: int, observation: JSON, legal_actions: Sequence[Action], bank: float
) -> bytes:
    """The ``act`` message as a line, built without an intermediate dict (it is the hot path).

    >>> act_line(3, 0, {"hand": ["2C"]}, ["2C"], 19.5)
    b'{"type":"act","id":3,"deal":0,"observation":{"hand":["2C"]},"legal_actions":["2C"],"bank":19.5}\\n'
    """
    return (
        f'{{"type":"act","id":{request_id},"deal":{deal},"observation":{_encode(observation)},'
        f'"legal_actions":{_encode(legal_actions)},"bank":{round(bank, 3)!r}}}\n'
    ).encode()


def deal_end_message(
    *, deal: int, points: Sequence[int], totals: Sequence[int], summary: Mapping[str, JSON]
) -> dict[str, JSON]:
    return {
        "type": "deal_end",
        "deal": deal,
        "points": list(points),
        "totals": list(totals),
        "summary": dict(summary),
    }


def game_end_message(*, scores: Sequence[int], places: Sequence[int]) -> dict[str, JSON]:
    return {"type": "game_end", "scores": list(scores), "places": list(places)}


BYE_LINE: Final = encode({"type": "bye"})


# ---------------------------------------------------------------------------------------------
# The bot's messages
# ---------------------------------------------------------------------------------------------


def decode(line: bytes) -> dict[str, JSON]:
    """A line a bot sent, as a JSON object; else :class:`ProtocolFault`.

    >>> decode(b'{"id": 1}')
    {'id': 1}
    >>> decode(b"\\xff")
    Traceback (most recent call last):
    ...
    judge.protocol.ProtocolFault: bad_utf8: not UTF-8 at byte 0: '\\xff'
    """
    try:
        text = line.decode()
    except UnicodeDecodeError as exc:
        raise ProtocolFault(
            FaultKind.BAD_UTF8, f"not UTF-8 at byte {exc.start}: {excerpt(line)}"
        ) from None
    try:
        value = _decode(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, int too long, too deep
        reason = str(exc) if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
        raise ProtocolFault(FaultKind.MALFORMED, f"not JSON ({reason}): {excerpt(text)}") from None
    if not isinstance(value, dict):
        raise ProtocolFault(FaultKind.MALFORMED, f"a message is a JSON object: {excerpt(text)}")
    return value


def parse_ready(line: bytes) -> str | None:
    """The bot's name from its ``ready`` message (None if it gave none)."""
    message = decode(line)
    if message.get("type") != "ready":
        raise ProtocolFault(
            FaultKind.MALFORMED,
            f'expected {{"type": "ready"}} after hello, got {excerpt(line.decode())}',
        )
    name = message.get("name")
    if name is None:
        return None
    if not isinstance(name, str):
        raise ProtocolFault(FaultKind.MALFORMED, "the name in ready must be a string")
    cleaned = "".join(ch for ch in name if ch.isprintable()).strip()
    return cleaned[:NAME_CHARS] or None


def answer_id(message: Mapping[str, JSON]) -> int | None:
    """The id of an answer, or None when it has no integer id."""
    value = message.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def parse_answer(line: bytes, expected_id: int) -> Action:
    """The action of an answer to request ``expected_id``; else :class:`ProtocolFault`.

    The action itself is checked by the engine, not here.
    """
    message = decode(line)
    return check_answer(message, expected_id)


def check_answer(message: Mapping[str, JSON], expected_id: int) -> Action:
    kind = message.get("type", "action")
    if kind != "action":
        raise ProtocolFault(
            FaultKind.MALFORMED, f'an answer has no "type" or "type": "action", not {kind!r}'
        )
    got = answer_id(message)
    if got is None:
        raise ProtocolFault(
            FaultKind.MALFORMED, f'an answer needs an integer "id"; got {message.get("id")!r}'
        )
    if got != expected_id:
        raise ProtocolFault(FaultKind.WRONG_ID, f"answered id {got}, the request was {expected_id}")
    if "action" not in message:
        raise ProtocolFault(FaultKind.MALFORMED, 'an answer needs an "action"')
    return message["action"]
