"""Protocol v1 framing and parsing, without processes: every malformed input becomes a typed
fault, never an exception of another kind, and the line buffer never grows past its cap."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judge.faults import Fault, FaultKind, excerpt
from judge.protocol import (
    BYE_LINE,
    PROTOCOL_VERSION,
    TOO_LONG,
    LineBuffer,
    ProtocolFault,
    act_line,
    deal_end_message,
    decode,
    encode,
    game_end_message,
    hello_message,
    parse_answer,
    parse_ready,
)


def lines_of(buf: LineBuffer) -> list[object]:
    out: list[object] = []
    while (line := buf.next_line()) is not None:
        out.append(line)
    return out


def test_lines_are_framed_across_reads() -> None:
    buf = LineBuffer(cap=100)
    buf.feed(b'{"a":1}\n{"b"')
    buf.feed(b":2}\r\n\n")
    buf.feed(b'{"c":3}')
    assert lines_of(buf) == [b'{"a":1}', b'{"b":2}', b""]
    buf.feed(b"\n")
    assert lines_of(buf) == [b'{"c":3}']


def test_an_over_long_line_is_reported_once_and_its_rest_dropped() -> None:
    buf = LineBuffer(cap=10)
    buf.feed(b"x" * 11)
    assert lines_of(buf) == [TOO_LONG]
    for _ in range(1000):  # 64 KB more of the same line: nothing kept, nothing reported
        buf.feed(b"y" * 64)
        assert len(buf._buf) == 0
    assert lines_of(buf) == []
    buf.feed(b"yyy\nok\n")
    assert lines_of(buf) == [b"ok"]


def test_a_whole_over_long_line_in_one_read_is_too_long() -> None:
    buf = LineBuffer(cap=4)
    buf.feed(b"12345\n1234\n")
    assert lines_of(buf) == [TOO_LONG, b"1234"]


# No deadline: on a loaded machine one example may wait for a CPU longer than Hypothesis's
# 200 ms, which says nothing about the code under test.
UNTIMED = settings(deadline=None)


@UNTIMED
@given(st.lists(st.binary(max_size=300), max_size=30), st.integers(min_value=1, max_value=64))
def test_the_buffer_never_holds_more_than_the_cap_and_one_read(
    chunks: list[bytes], cap: int
) -> None:
    buf = LineBuffer(cap=cap)
    for chunk in chunks:
        buf.feed(chunk)
        assert len(buf._buf) <= cap
        for line in lines_of(buf):
            assert line is TOO_LONG or (isinstance(line, bytes) and len(line) <= cap)


@UNTIMED
@given(st.lists(st.binary(max_size=50).filter(lambda b: b"\n" not in b), max_size=20))
def test_short_lines_come_out_as_they_went_in(lines: list[bytes]) -> None:
    data = b"".join(line + b"\n" for line in lines)
    buf = LineBuffer(cap=64)
    for i in range(0, len(data), 7):
        buf.feed(data[i : i + 7])
    expected = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    assert lines_of(buf) == expected


def test_judge_messages_are_compact_json_lines() -> None:
    hello = hello_message(
        game="hearts",
        preset="whisthub",
        options={"players": 4},
        seat=2,
        players=4,
        startup=5.0,
        decision=1.0,
        bank=20.0,
    )
    line = encode(hello)
    assert line.endswith(b"\n")
    assert b" " not in line
    assert json.loads(line) == {
        "type": "hello",
        "protocol": PROTOCOL_VERSION,
        "game": "hearts",
        "preset": "whisthub",
        "options": {"players": 4},
        "seat": 2,
        "players": 4,
        "limits": {"startup": 5.0, "decision": 1.0, "bank": 20.0},
    }
    act = json.loads(act_line(9, 2, {"hand": ["2C", "QS"]}, [["2C", "QS"]], 12.3456))
    assert act == {
        "type": "act",
        "id": 9,
        "deal": 2,
        "observation": {"hand": ["2C", "QS"]},
        "legal_actions": [["2C", "QS"]],
        "bank": 12.346,
    }
    assert json.loads(encode(deal_end_message(deal=1, points=[1], totals=[2], summary={}))) == {
        "type": "deal_end",
        "deal": 1,
        "points": [1],
        "totals": [2],
        "summary": {},
    }
    assert json.loads(encode(game_end_message(scores=[3], places=[1])))["type"] == "game_end"
    assert json.loads(BYE_LINE) == {"type": "bye"}


def test_ready_gives_a_clean_name() -> None:
    assert parse_ready(b'{"type":"ready"}') is None
    assert parse_ready(b'{"type":"ready","name":"  Ada\\u0007 "}') == "Ada"
    assert parse_ready(b'{"type":"ready","name":"' + b"n" * 100 + b'"}') == "n" * 40
    with pytest.raises(ProtocolFault) as info:
        parse_ready(b'{"type":"ready","name":5}')
    assert info.value.kind is FaultKind.MALFORMED
    with pytest.raises(ProtocolFault):
        parse_ready(b'{"type":"act"}')


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b"", FaultKind.MALFORMED),
        (b"nope", FaultKind.MALFORMED),
        (b"\xc3\x28", FaultKind.BAD_UTF8),
        (b'"just a string"', FaultKind.MALFORMED),
        (b"[" * 100_000, FaultKind.MALFORMED),  # too deep: RecursionError inside json
        (b'{"id": 1' + b"1" * 5000 + b', "action": "2C"}', FaultKind.MALFORMED),
        (b'{"action": "2C"}', FaultKind.MALFORMED),
        (b'{"id": true, "action": "2C"}', FaultKind.MALFORMED),
        (b'{"id": 1.0, "action": "2C"}', FaultKind.MALFORMED),
        (b'{"id": 1}', FaultKind.MALFORMED),
        (b'{"id": 2, "action": "2C"}', FaultKind.WRONG_ID),
        (b'{"type": "ready", "id": 1, "action": "2C"}', FaultKind.MALFORMED),
    ],
)
def test_bad_answers_are_typed_faults(line: bytes, kind: FaultKind) -> None:
    with pytest.raises(ProtocolFault) as info:
        parse_answer(line, expected_id=1)
    assert info.value.kind is kind
    assert len(info.value.detail) < 200


def test_good_answers() -> None:
    assert parse_answer(b'{"id": 1, "action": "2C"}', expected_id=1) == "2C"
    assert parse_answer(b'{"type":"action","id":1,"action":["2C","3C","4C"]}', 1) == [
        "2C",
        "3C",
        "4C",
    ]
    assert parse_answer(b'{"id": 1, "action": null, "extra": 1}', 1) is None


@UNTIMED
@given(st.binary(max_size=200))
def test_any_bytes_parse_to_an_answer_or_a_typed_fault(data: bytes) -> None:
    try:
        parse_answer(data, expected_id=1)
    except ProtocolFault as fault:
        kind = fault.kind
    else:
        kind = None
    assert kind is None or isinstance(kind, FaultKind)


def test_decode_wants_an_object() -> None:
    assert decode(b'{"a": [1]}') == {"a": [1]}
    with pytest.raises(ProtocolFault):
        decode(b"[]")


def test_faults_and_excerpts_are_short() -> None:
    assert excerpt(b"x" * 1000).endswith("... (1000 bytes)")
    fault = Fault(1, FaultKind.ILLEGAL, 0, 3, 12, "you do not hold QS")
    assert fault.as_json()["kind"] == "illegal"
