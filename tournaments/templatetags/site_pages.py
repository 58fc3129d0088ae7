"""Template tags of the site for its largest tables, rendered in Python: a tournament's
crosstable has a cell per pair of entries (2,304 for 48 entries) and its rounds a link per
seat, which through template nodes cost most of the page's time."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from tournaments.page_selectors import CrossCell, SeatLine

register = template.Library()


@cache
def _bot_url_pattern() -> str:
    marker = 987654321
    return reverse("tournaments:bot-detail", args=[marker]).replace(str(marker), "{}")


@register.simple_tag
def crosstable_cells(cells: Sequence[CrossCell | None]) -> SafeString:
    """The <td> of one row of the crosstable (the diagonal, the entry against itself, shaded
    and named for screen readers). A cell's label is made of two integers: nothing to
    escape."""
    return mark_safe(
        "".join(
            '<td class="self"><span class="visually-hidden">itself</span></td>'
            if cell is None
            else f"<td>{int(cell.ahead)}\u2013{int(cell.behind)}</td>"
            if cell.met
            else "<td></td>"
            for cell in cells
        )
    )


@register.simple_tag
def seat_list(seats: Sequence[SeatLine], results_shown: bool) -> SafeString:
    """A table's seats on one line: "0: Bot v1 (place 2, score 13); 1: ...". The label is
    escaped; the rest is integers."""
    pattern = _bot_url_pattern()
    parts = []
    for seat in seats:
        label = escape(seat.label)
        name = (
            f'<a href="{pattern.format(int(seat.bot_id))}">{label}</a>'
            if seat.bot_id is not None
            else label
        )
        result = (
            f" (place {int(seat.place)}, score {int(seat.score or 0)})"
            if results_shown and seat.place is not None
            else ""
        )
        css = ' class="mine"' if seat.mine else ""
        parts.append(f"<span{css}>{int(seat.position)}: {name}{result}</span>")
    return mark_safe("; ".join(parts))
