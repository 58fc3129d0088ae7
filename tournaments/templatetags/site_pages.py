"""Template tags of the site for its largest tables, rendered in Python: a tournament's
crosstable has a cell per pair of entries (2,304 for 48 entries) and a round's page a link per
seat, which through template nodes cost most of the page's time; and the standings' interval
bars."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from fractions import Fraction
from functools import cache

from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from tournaments.models import Entry
from tournaments.page_selectors import CrossCell, CrossGrid, Crosstable, EntryConfidence, SeatLine
from tournaments.page_selectors.common import game_title
from tournaments.page_selectors.deals import card_view
from tournaments.page_selectors.tournaments import signed
from tournaments.replay_steps import NAME_CLOSE, NAME_OPEN

register = template.Library()


@cache
def _bot_url_pattern() -> str:
    marker = 987654321
    return reverse("tournaments:bot-detail", args=[marker]).replace(str(marker), "{}")


def _cross_cell(cell: CrossCell | None) -> str:
    if cell is None:
        return '<td class="self"><span class="visually-hidden">itself</span></td>'
    if not cell.deals:
        return '<td><span class="visually-hidden">never met</span></td>'
    interval = (
        f"{signed(cell.low, 1)} to {signed(cell.high, 1)}"
        if cell.low is not None and cell.high is not None
        else "no interval"
    )
    verdict = cell.verdict
    mean = signed(cell.mean, 1)
    if verdict:
        mean = f'<strong>{mean}</strong><span class="visually-hidden"> significant</span>'
    deals = f"{int(cell.deals)} deal{'s' if cell.deals != 1 else ''}"
    css = f' class="sig-{verdict}"' if verdict else ""
    return (
        f'<td{css}>{mean}<span class="cell-detail">{interval}</span>'
        f'<span class="cell-detail">{deals}</span></td>'
    )


@register.simple_tag
def crosstable_cells(cells: Sequence[CrossCell | None]) -> SafeString:
    """The <td> of one row of the crosstable: the mean difference per deal (in bold and shaded
    when significant, and said so to screen readers), its interval and the deals compared; the
    diagonal, the entry against itself, shaded. Only numbers: nothing to escape."""
    return mark_safe("".join(_cross_cell(cell) for cell in cells))


@register.simple_tag
def interval_bar(confidence: EntryConfidence) -> SafeString:
    """An entry's 95% interval drawn on the standings' common scale (inline SVG, stretched to
    its box): the table's average as a vertical line, the interval as a bar, the mean as a
    tick. Its label and title say the figures in words (they are also in the cell's text)."""
    bar = confidence.bar
    summary = escape(confidence.summary)
    width = max(bar.high - bar.low, 0.8)
    return mark_safe(
        '<svg class="ci-bar" viewBox="0 0 100 10" preserveAspectRatio="none" role="img" '
        f'aria-label="{summary}"><title>{summary}</title>'
        f'<line class="zero" x1="{bar.zero}" x2="{bar.zero}" y1="0" y2="10" '
        'vector-effect="non-scaling-stroke"/>'
        f'<rect class="interval" x="{bar.low}" y="3" width="{width:.2f}" height="4"/>'
        f'<rect class="mean" x="{max(bar.mean - 0.6, 0):.2f}" y="0.5" width="1.2" height="9"/>'
        "</svg>"
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
        replaced = (
            f", replaced at deal {int(seat.replaced_number)}"
            if seat.replaced_number is not None
            else ""
        )
        result = (
            f" (place {int(seat.place)}, score {int(seat.score or 0)}{replaced})"
            if results_shown and seat.place is not None
            else ""
        )
        css = ' class="mine"' if seat.mine else ""
        parts.append(f"<span{css}>{int(seat.position)}: {name}{result}</span>")
    return mark_safe("; ".join(parts))


@register.filter
def crosstable_rows(
    crosstable: Crosstable, grid: CrossGrid
) -> list[tuple[int, Entry, list[CrossCell | None]]]:
    """The rows of one grid of the crosstable (the entry's place, the entry, its cells), for
    the template's loop: ``{% for number, entry, cells in page.crosstable|crosstable_rows:grid
    %}``."""
    return crosstable.rows(grid)


_CARD_IN_TEXT = re.compile(r"\b[2-9TJQKA][SHDC]\b")
# A seat's name in a step's sentence (replay_steps.NAME_OPEN ... NAME_CLOSE): never cards.
_NAME_IN_TEXT = re.compile(f"{NAME_OPEN}([^{NAME_CLOSE}]*){NAME_CLOSE}")


def _cards_drawn(text: str) -> str:
    escaped = str(escape(text))
    return _CARD_IN_TEXT.sub(lambda match: str(card_view(match.group(0))), escaped)


@register.filter
def card_sentence(text: object) -> SafeString:
    """A step's sentence ("Bob discards TH") with its card names drawn as the page's cards
    (10♥), as replay.js's ``sentence`` draws them above: the table of every decision, the
    page without JavaScript, says the same as the viewer. A seat's name (isolated by
    :mod:`tournaments.replay_steps`) is a ``<bdi>`` and never drawn as cards, whatever it
    looks like.

    >>> print(card_sentence("<b> discards TH"))
    &lt;b&gt; discards <span class="pcard sH">10<span aria-hidden="true">♥</span><span \
class="visually-hidden"> of hearts</span></span>
    >>> print(card_sentence(NAME_OPEN + "QS v1" + NAME_CLOSE + " plays 2C"))
    <bdi>QS v1</bdi> plays <span class="pcard sC">2<span aria-hidden="true">♣</span><span \
class="visually-hidden"> of clubs</span></span>
    """
    parts = []
    at = 0
    text = str(text)
    for match in _NAME_IN_TEXT.finditer(text):
        parts.append(_cards_drawn(text[at : match.start()]))
        parts.append(f"<bdi>{escape(match.group(1))}</bdi>")
        at = match.end()
    parts.append(_cards_drawn(text[at:]))
    return mark_safe("".join(parts))  # escaped above; the cards are format_html's markup


@register.filter(name="game_title")
def game_title_filter(name: object) -> str:
    """A game's title as the public pages write it (``{{ bot.game|game_title }}``): members'
    pages say "Jeu du Roi" too, not the engine's name ("roi").

    >>> game_title_filter("roi")
    'Jeu du Roi'
    """
    return game_title(str(name))


NOTHING = "\N{EN DASH}"  # what the pages show for a missing figure


@register.filter
def milliseconds(seconds: object) -> str:
    """A decision's time in milliseconds, one decimal, as the table pages give them ("Mean
    (ms)"): the version and seat log pages said "0.000214 s" and "0.0002 s".

    >>> milliseconds(0.000214), milliseconds(1.5), milliseconds(None) == NOTHING
    ('0.2 ms', '1,500.0 ms', True)
    """
    if not isinstance(seconds, int | float):
        return NOTHING
    return f"{seconds * 1000:,.1f} ms"


@register.filter
def plus_minus(value: object) -> str:
    """A score against an average with its sign, as the standings' other figures ("+16",
    "\u221238" with a true minus, "+2.5", "0"): the column said "16" and "-38".

    >>> plus_minus(16.0), plus_minus(-38), plus_minus(Fraction(5, 2)), plus_minus(-0.01)
    ('+16', '\u221238', '+2.5', '0')
    >>> plus_minus(None) == NOTHING
    True
    """
    if not isinstance(value, int | float | Fraction | Decimal):  # the standings' are Fractions
        return NOTHING
    text = signed(float(value), 1)
    return "0" if text == "0.0" else text.removesuffix(".0")


@register.filter
def family_title(family: object) -> str:
    """A rating family ("roi/classic") as the rankings write it.

    >>> family_title("roi/classic")
    'Jeu du Roi, classic'
    """
    game, _, preset = str(family).partition("/")
    return f"{game_title(game)}, {preset}" if preset else game_title(game)


@register.filter
def timestamp(moment: object) -> str:
    """A moment as every page writes it: in UTC, saying so, in a ``<time>`` element whose
    ``datetime`` is the exact instant (``{{ bot.created_at|timestamp }}``). The pages used
    ``|date`` with no zone, some with the day only: one format everywhere now.

    >>> from datetime import timedelta, timezone
    >>> paris = timezone(timedelta(hours=1))
    >>> print(timestamp(datetime(2026, 11, 24, 9, 41, 7, tzinfo=paris)))
    <time datetime="2026-11-24T08:41:07Z">2026-11-24 08:41 UTC</time>
    >>> timestamp(None) == NOTHING
    True
    """
    if not isinstance(moment, datetime):
        return NOTHING
    # A naive moment (none is stored so: USE_TZ) is taken as UTC, the site's time zone.
    utc = moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return format_html(
        '<time datetime="{}">{} UTC</time>',
        utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
        utc.strftime("%Y-%m-%d %H:%M"),
    )
