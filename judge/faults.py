"""Faults: every way a bot can fail the protocol, as a typed record.

A fault never raises out of the judge: it is recorded, the judge plays the fallback action (the
first legal action in the game's order) for the decision concerned, and after a crash or too many
faults the seat is handed to a built-in bot for the rest of the table (see docs/protocol.md).

>>> Fault(seat=2, kind=FaultKind.TIMEOUT, deal=0, decision=4, step=17, detail="no answer").as_json()
{'seat': 2, 'kind': 'timeout', 'deal': 0, 'decision': 4, 'step': 17, 'detail': 'no answer'}
"""

from __future__ import annotations

import dataclasses
import enum

from games.base import JSON

DETAIL_CHARS = 300


class FaultKind(enum.StrEnum):
    """What went wrong. The values are what results, logs and the API show."""

    TIMEOUT = "timeout"  # no answer within the decision limit plus the bank (or start-up limit)
    CRASH = "crash"  # the process exited, closed its stdout, or could not be started
    MALFORMED = "malformed"  # not JSON, not an object, a field missing or of the wrong type
    WRONG_ID = "wrong_id"  # an answer to a request that is not the one pending
    ILLEGAL = "illegal"  # an action the rules do not allow now
    LINE_TOO_LONG = "line_too_long"  # a message longer than the line cap
    UNSOLICITED = "unsolicited"  # a message when none was asked for (answering early)
    BAD_UTF8 = "bad_utf8"  # a message that is not valid UTF-8
    INTERNAL = "internal"  # a built-in bot raised (a judge bug, never the bot author's fault)


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    """One fault of one seat.

    ``deal`` and ``decision`` are None for a fault at start-up; ``decision`` counts the seat's
    decisions over the whole table from 0, ``step`` is the index of the action concerned in the
    deal's action list of the replay log.
    """

    seat: int
    kind: FaultKind
    deal: int | None
    decision: int | None
    step: int | None
    detail: str

    def as_json(self) -> dict[str, JSON]:
        return {
            "seat": self.seat,
            "kind": self.kind.value,
            "deal": self.deal,
            "decision": self.decision,
            "step": self.step,
            "detail": self.detail,
        }


def excerpt(data: bytes | str, limit: int = 60) -> str:
    """A short printable excerpt of what a bot sent, for a fault's detail.

    >>> excerpt(b'{"id": 1, "action"')
    '\\'{"id": 1, "action"\\''
    >>> excerpt("x" * 100, limit=5)
    "'xxxxx'... (100 chars)"
    """
    shown = repr(data[:limit])
    if isinstance(data, bytes):
        shown = shown[1:]  # drop the b prefix: authors care about the text
        unit = "bytes"
    else:
        unit = "chars"
    if len(data) > limit:
        shown += f"... ({len(data)} {unit})"
    return shown


def clip(text: str, limit: int = DETAIL_CHARS) -> str:
    """A fault detail no longer than ``limit`` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
