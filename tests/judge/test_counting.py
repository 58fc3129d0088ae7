"""A fault never pays: how a replaced seat's deals and place count (judge.counting), and a
real table whose crashing bot the heuristic bot finished."""

from __future__ import annotations

from typing import Any

import games
from judge.counting import counted_places, counted_points, counted_table, replaced_deal
from tests.judge.conftest import ScriptedBot, play

READY = ["send", '{"type": "ready", "name": "scripted"}']


def test_from_its_deal_on_a_replaced_seat_takes_the_worst_points_of_each_deal() -> None:
    points = [[3, 10, 13, 0], [0, 1, 4, 21], [26, 0, 0, 0]]
    assert counted_points(points, [None, 1, None, None], lower_is_better=True) == [
        [3, 10, 13, 0],
        [0, 21, 4, 21],
        [26, 26, 0, 0],
    ]
    # Higher is better (the Jeu du Roi): the worst is the lowest.
    assert counted_points([[-2, -8, 0, -16]], [None, None, 0, None], lower_is_better=False) == [
        [-2, -8, -16, -16]
    ]
    # Nobody replaced: nothing changes.
    assert counted_points(points, [None] * 4, lower_is_better=True) == points


def test_a_replaced_seat_is_last_the_earlier_replaced_lowest() -> None:
    # The replaced seat 3 has the best score but is last.
    assert counted_places([20, 30, 40, 5], [None, None, None, 3], lower_is_better=True) == [
        1,
        2,
        3,
        4,
    ]
    # Seat 0 replaced at deal 1, seat 1 at deal 4: seat 1 ranks above seat 0.
    assert counted_places([1, 50, 10, 12], [1, 4, None, None], lower_is_better=True) == [
        4,
        3,
        1,
        2,
    ]
    # Two replaced in the same deal: by score between them; ties share among the rest.
    assert counted_places([9, 9, 7, 8], [None, None, 2, 2], lower_is_better=False) == [1, 1, 4, 3]


def test_the_deal_comes_from_the_judges_replaced_at() -> None:
    assert replaced_deal(None) is None
    assert replaced_deal({"deal": None, "decision": None}) == 0  # at start-up: every deal
    assert replaced_deal({"deal": 2, "decision": 30}) == 2


def test_a_replaced_seat_of_the_jeu_du_roi_is_floored_by_the_games_rule() -> None:
    roi = games.load("roi")
    deals = [[-2 * n for n in (3, 4, 2, 4)]] + [[0, 0, 0, 0]] * 9
    counted = counted_table(roi, deals, [0, None, None, None])
    assert counted.points[0] == [-8, -8, -4, -8]
    assert counted.scores == [0, 0, 0, 0]  # floored at 0 by the Roi's own rule
    assert counted.places == [4, 1, 1, 1]


def test_a_table_whose_bot_crashed_counts_it_last(scripted_bot: ScriptedBot) -> None:
    """A bot that crashes at its 15th decision (deal 2 of Hearts: 14 decisions a deal) is
    replaced by the heuristic bot, which beats the lowest-card bots: the judge's result
    counts the seat at the worst of each deal from deal 2 and last at the table."""
    script: list[Any] = [READY]
    script += [["expect_act"], ["answer"]] * 14
    script += [["expect_act"], ["exit", 3]]
    result = play([scripted_bot(script)], game="hearts", deals=6, fill="builtin:lowest")
    seat = result.seats[0]
    assert seat.replaced
    assert seat.replaced_deal == 1
    played = [list(p) for p in result.deal_points]
    counted = [list(p) for p in result.counted_points]
    assert counted[0] == played[0]
    for deal_played, deal_counted in zip(played[1:], counted[1:], strict=True):
        assert deal_counted[0] == max(deal_played)
        assert deal_counted[1:] == deal_played[1:]
    # What the heuristic bot really took stays in the log, credited to it.
    assert [e["points"] for e in result.log["deals"]] == played  # type: ignore[index, union-attr]
    assert seat.total == sum(p[0] for p in counted)
    assert seat.place == 4
    assert sorted(s.place for s in result.seats[1:]) == sorted(
        games.places_for([s.total for s in result.seats[1:]], lower_is_better=True)
    )
    assert result.as_json(with_log=False)["seats"][0]["replaced_deal"] == 1  # type: ignore[index, call-overload]
