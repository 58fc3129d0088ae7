"""Reads of tables and deals: a table with its seats, its log, a deal and its points."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from django.db.models.fields.json import KeyTransform

from games.base import JSON
from tournaments.models import (
    Deal,
    Fault,
    Seat,
    Table,
)


def bot_label(version_label: str | None, *, substitute: bool, house_bot: str) -> str:
    """The bot of a seat as the API and the replays name it: the entry's version
    (``"Bot v2"``), a house bot (``"house:heuristic"``), or a house bot playing for a withdrawn
    or disqualified entry (``"house:heuristic for Bot v2"``)."""
    if version_label is None:
        return f"house:{house_bot}"
    return f"house:{house_bot} for {version_label}" if substitute else version_label


def bot_in_words(version_label: str | None, *, house_bot: str, substitute: bool) -> str:
    """A seat's bot as the pages name it: the entry's version ("Bot v2"), else the house bot
    as the pages name every built-in bot ("built-in lowest", not its name "house lowest"),
    with the entry it played for when it replaced one ("built-in heuristic (for Bot v2)").

    >>> bot_in_words(None, house_bot="lowest", substitute=False)
    'built-in lowest'
    >>> bot_in_words("Bot v2", house_bot="heuristic", substitute=True)
    'built-in heuristic (for Bot v2)'
    """
    if version_label is None:
        return f"built-in {house_bot}"
    return f"built-in {house_bot} (for {version_label})" if substitute else version_label


def seat_label(*, seat: Seat) -> str:
    """:func:`bot_label` of a seat (its entry's version loaded)."""
    version_label = seat.entry.version.label if seat.entry is not None else None
    return bot_label(version_label, substitute=seat.substitute, house_bot=seat.house_bot)


def table_get(*, table_id: int) -> Table:
    """A table with its tournament, round, seats and faults (DoesNotExist if there is none)."""
    return (
        Table.objects.select_related("tournament", "round")
        .prefetch_related(
            Prefetch(
                "seats",
                queryset=Seat.objects.select_related("entry__version__bot")
                .defer("entry__version__content", "log")
                .order_by("position"),
            ),
            Prefetch("fault_set", queryset=Fault.objects.order_by("pk")),
        )
        .get(pk=table_id)
    )


def table_seats(*, table: Table) -> QuerySet[Seat]:
    return (
        table.seats.select_related("entry__version__bot", "entry__user")
        .defer("entry__version__content")
        .order_by("position")
    )


def table_deal_points(*, table: Table) -> list[dict[str, object]]:
    """Each deal of a table: id, index, points, decisions and faults (no log)."""
    rows = (
        Deal.objects.filter(table=table)
        .order_by("index")
        .values("id", "index", "points", "decisions", "faults")
    )
    return [dict(row) for row in rows]


def table_log(*, table: Table) -> dict[str, JSON]:
    """The complete replay log of a recorded table (games.log format v1 with the judge's
    times, faults and seat summary), rebuilt from its rows."""
    if table.result is None:
        raise ValueError(f"{table} has no recorded result")
    header = dict(table.result.get("replay_header", {}))
    header["deals"] = [deal.log for deal in Deal.objects.filter(table=table).order_by("index")]
    return header


def deal_get(*, deal_id: int) -> Deal:
    """A deal with its table, round and tournament (DoesNotExist if there is none); of the
    tournament, only what says whether the deal may be shown and what it was played by; of
    the table's result, only the replay header (``deal.replay_header``: game, preset, every
    option), not the judge's whole summary."""
    return (
        Deal.objects.select_related("table__tournament", "table__round")
        .annotate(replay_header=KeyTransform("replay_header", "table__result"))
        .only(
            *(f.name for f in Deal._meta.concrete_fields),
            "table__status",
            "table__number",
            "table__round__number",
            "table__round__status",
            "table__tournament__status",
            "table__tournament__duplicate",
            "table__tournament__practice",
            "table__tournament__organiser_id",
            "table__tournament__game",
            "table__tournament__preset",
        )
        .get(pk=deal_id)
    )


def deal_replay(*, deal: Deal) -> dict[str, JSON]:
    """A one-deal replay: the table's header (game, preset, options, seats) and this deal,
    with its tricks, for a viewer."""
    table = deal.table
    header = dict((table.result or {}).get("replay_header", {}))
    for key in ("totals", "scores", "places"):
        header.pop(key, None)
    header["deals"] = [deal.log]
    header["tricks"] = [
        {"leader": t.leader, "cards": t.cards, "winner": t.winner, "points": t.points}
        for t in deal.tricks.order_by("number")
    ]
    header["seats"] = [
        {
            "position": seat.position,
            "entry": seat.entry_id,
            "bot": seat_label(seat=seat),
            "house": seat.is_house,
            "substitute": seat.substitute,
        }
        for seat in table.seats.select_related("entry__version__bot")
        .defer("entry__version__content", "log")
        .order_by("position")
    ]
    return header
