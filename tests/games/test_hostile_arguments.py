"""Bad arguments get the engine's own errors, compiled or not: a mypyc-compiled function raises
TypeError when an argument is not of its declared type, so the entry points that hostile input
reaches take ``object`` and check it themselves. Run in both modes by make pytest."""

from __future__ import annotations

from typing import Any

import pytest

import games
from games import GameError, IllegalActionError, parse_card


def whisthub() -> Any:  # Any: the tests call with arguments of the wrong types on purpose
    return games.load("hearts", "whisthub")


@pytest.mark.parametrize("bad", [5, 1.5, None, b"QS", ["QS"]])
def test_parse_card_refuses_a_non_string_with_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="a card is a string"):
        parse_card(bad)


@pytest.mark.parametrize("bad", ["0", 1.5, None, True, -1, 4])
def test_observation_refuses_a_bad_seat_with_value_error(bad: object) -> None:
    state = whisthub().new_deal(3, seed=1)
    with pytest.raises(ValueError, match="no seat"):
        state.observation(bad)


@pytest.mark.parametrize("bad", ["2C", 2.0, None, 52, -1])
def test_apply_card_refuses_a_bad_card_id(bad: object) -> None:
    state = whisthub().new_deal(3, seed=1)
    with pytest.raises(IllegalActionError, match="not a card id"):
        state.apply_card(bad)
    assert state.history() == []


@pytest.mark.parametrize("bad", [("2C",), {"card": "2C"}, 0, 2.5, None, b"2C", {"2C"}])
def test_apply_action_refuses_anything_but_a_card_name_when_playing(bad: object) -> None:
    state = whisthub().new_deal(3, seed=1)  # deal 3: no pass, the holder of 2C leads it
    with pytest.raises(IllegalActionError):
        state.apply_action(bad)
    assert state.history() == []


def test_a_pass_may_be_a_tuple_and_anything_else_is_refused() -> None:
    state = whisthub().new_deal(0, seed=1)
    first = state.legal_actions()[0]
    assert isinstance(first, list)
    for bad in ({"cards": first}, "2C", 3, None, {*first}):
        with pytest.raises(IllegalActionError, match="pass exactly 3 cards"):
            state.apply_action(bad)
    state.apply_action(tuple(first))
    assert state.history() == [(0, first)]


@pytest.mark.parametrize("bad", ["1", 1.5, True, -1, None])
def test_new_deal_refuses_a_bad_deal_index(bad: object) -> None:
    with pytest.raises(GameError, match="a deal index is a non-negative integer"):
        whisthub().new_deal(bad, seed=1)


@pytest.mark.parametrize("bad", ["1", 1.5, True, -1])
def test_new_deal_refuses_a_bad_seed(bad: object) -> None:
    with pytest.raises(ValueError, match="a seed is a non-negative integer"):
        whisthub().new_deal(0, seed=bad)
