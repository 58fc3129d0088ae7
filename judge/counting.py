"""What a table's results count for when the judge replaced a seat's bot: the one place that
holds the rule (docs/tournaments.md, "A fault never pays").

A seat whose bot was replaced for faults forfeits the rest of its table: from the deal in
which it was replaced (that deal included) each deal counts at the worst points any seat took
in that deal at that table (by the game's direction of better), and its place at the table is
last, below every seat that was not replaced; of several replaced seats, the one replaced
earlier ranks lower. The built-in bot's real points stay in the log and the replay.

Pure functions of plain values: the judge, the recording, the statistics and the pages apply
the same rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TypeVar

from games.base import JSON, Game, places_for, running_totals

Replaced = Sequence[int | None]
"""For each seat, the index of the deal from which it was replaced, or None."""
P = TypeVar("P", int, float)


def replaced_deal(replaced_at: Mapping[str, JSON] | None) -> int | None:
    """The deal from which a seat counts as replaced, from the judge's ``replaced_at``
    (``{"deal": d, "decision": n}``; a deal of None means before the first deal).

    >>> replaced_deal(None), replaced_deal({"deal": None}), replaced_deal({"deal": 3})
    (None, 0, 3)
    """
    if replaced_at is None:
        return None
    deal = replaced_at.get("deal")
    return deal if isinstance(deal, int) else 0


def counted_points(
    deal_points: Sequence[Sequence[P]], replaced: Replaced, *, lower_is_better: bool
) -> list[list[P]]:
    """Each deal's points as they count: a replaced seat takes, from its deal on, the worst
    points of the deal at its table.

    >>> counted_points([[0, 5, 21, 0], [13, 0, 0, 13]], [None, 1, None, None],
    ...                lower_is_better=True)
    [[0, 5, 21, 0], [13, 13, 0, 13]]
    >>> counted_points([[8, -2], [4, 0]], [0, None], lower_is_better=False)
    [[-2, -2], [0, 0]]
    """
    worst = max if lower_is_better else min
    out: list[list[P]] = []
    for index, points in enumerate(deal_points):
        if not points:
            out.append([])
            continue
        low = worst(points)
        out.append(
            [
                low if start is not None and index >= start else p
                for p, start in zip(points, replaced, strict=True)
            ]
        )
    return out


def counted_places(
    scores: Sequence[int], replaced: Replaced, *, lower_is_better: bool
) -> list[int]:
    """Places at a table (1 = best, ties share): the seats never replaced by their scores,
    then the replaced ones, the later replaced above the earlier, by score among those
    replaced in the same deal.

    >>> counted_places([10, 3, 10, 0], [None, None, None, 2], lower_is_better=True)
    [2, 1, 2, 4]
    >>> counted_places([1, 9, 5, 7], [None, 0, 3, 3], lower_is_better=False)
    [1, 4, 3, 2]
    """
    places = [0] * len(scores)
    groups: list[list[int]] = [[s for s, r in enumerate(replaced) if r is None]]
    starts = sorted({r for r in replaced if r is not None}, reverse=True)
    groups += [[s for s, r in enumerate(replaced) if r == start] for start in starts]
    above = 0
    for group in groups:
        group_places = places_for([scores[s] for s in group], lower_is_better=lower_is_better)
        for seat, place in zip(group, group_places, strict=True):
            places[seat] = above + place
        above += len(group)
    return places


@dataclasses.dataclass(frozen=True, slots=True)
class Counted:
    """A table's results as they count."""

    points: list[list[int]]  # per deal, per seat
    totals: list[int]
    scores: list[int]
    places: list[int]


def counted_table(
    game: Game[object], deal_points: Sequence[Sequence[int]], replaced: Replaced
) -> Counted:
    """A table's points, totals, final scores (by the game's rule) and places as they count.

    >>> import games
    >>> c = counted_table(games.load("hearts"), [[0, 5, 21, 0], [26, 0, 0, 0]], [None] * 3 + [0])
    >>> c.totals, c.scores, c.places
    ([26, 5, 21, 47], [26, 5, 21, 47], [3, 1, 2, 4])
    """
    points = counted_points(deal_points, replaced, lower_is_better=game.lower_is_better)
    scores = game.match_scores(points)
    return Counted(
        points=points,
        totals=running_totals(points, game.players),
        scores=scores,
        places=counted_places(scores, replaced, lower_is_better=game.lower_is_better),
    )
