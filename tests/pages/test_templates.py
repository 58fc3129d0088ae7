"""The templates' own text: what Django would print instead of reading."""

from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def test_no_comment_tag_spans_lines() -> None:
    """``{# ... #}`` is a one-line comment: over two lines Django prints it on the page (the
    tournament page showed one to every visitor). Longer comments use {% comment %}."""
    spanning = [
        f"{path.relative_to(TEMPLATES)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for text in [path.read_text()]
        for match in re.finditer(r"\{#(?:(?!#\}).)*\n", text, re.S)
    ]
    assert not spanning, spanning


def test_no_template_formats_a_moment_itself() -> None:
    """Every moment goes through ``|timestamp`` (site_pages): in UTC, saying so, in a
    <time> element. ``|date`` wrote them without a zone, some to the minute, some the day."""
    own = [
        f"{path.relative_to(TEMPLATES)}:{text[: match.start()].count(chr(10)) + 1}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for text in [path.read_text()]
        for match in re.finditer(r"\|\s*(date|time)\b", text)
    ]
    assert not own, own
