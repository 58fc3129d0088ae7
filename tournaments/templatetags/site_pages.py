"""Template tags of the site for its largest tables, rendered in Python: a tournament's
crosstable has a cell per pair of entries (2,304 for 48 entries) and its rounds a link per
seat, which through template nodes cost most of the page's time."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
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
    and named for screen readers)."""
    parts = []
    for cell in cells:
        if cell is None:
            parts.append('<td class="self"><span class="visually-hidden">itself</span></td>')
        else:
            parts.append(format_html("<td>{}</td>", cell.label))
    return mark_safe("".join(parts))


@register.simple_tag
def seat_list(seats: Sequence[SeatLine], results_shown: bool) -> SafeString:
    """A table's seats on one line: "0: Bot v1 (place 2, score 13); 1: ..."."""
    pattern = _bot_url_pattern()

    def one(seat: SeatLine) -> SafeString:
        name = (
            format_html('<a href="{}">{}</a>', pattern.format(seat.bot_id), seat.label)
            if seat.bot_id is not None
            else format_html("{}", seat.label)
        )
        result = (
            format_html(" (place {}, score {})", seat.place, seat.score)
            if results_shown and seat.place is not None
            else ""
        )
        css = ' class="mine"' if seat.mine else ""
        return format_html("<span{}>{}: {}{}</span>", mark_safe(css), seat.position, name, result)

    return format_html_join("; ", "{}", ((one(seat),) for seat in seats))
