"""The guides of docs/ as the site shows them: their Markdown rendered to HTML (markdown-it-py,
CommonMark with tables; raw HTML in the text is escaped, not passed on).

A guide's links to another guide the site serves go to its page, and to an example bot or the
SDK to where the site serves them (page_selectors.examples); links to files the site does not
serve are left as their text: on the site they would lead nowhere. Headings get GitHub's
anchors (``## Runtimes`` is ``#runtimes``), which the guides' own ``(#runtimes)`` links use.
The guide's first-level title is left out: the page's ``<h1>`` says it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

_SLUG_DROPPED = re.compile(r"[^\w\- ]")


def heading_anchor(text: str) -> str:
    """GitHub's anchor of a heading.

    >>> heading_anchor("Logins, lock-outs and user names")
    'logins-lock-outs-and-user-names'
    >>> heading_anchor("The `act` message")
    'the-act-message'
    """
    return _SLUG_DROPPED.sub("", text.strip().lower()).replace(" ", "-")


def _target(href: str, guides: Mapping[str, str], base: str = "") -> str | None:
    """Where a guide's link goes on the site: itself if absolute or an anchor, the page of a
    served guide or file (``href`` read from the guide's folder ``base`` in docs/), None for
    a file the site does not serve."""
    if href.startswith(("http://", "https://", "mailto:", "#", "/")):
        return href
    path, _, anchor = href.partition("#")
    url = guides.get(posixpath.normpath(posixpath.join(base, path)))
    if url is None:
        return None
    return f"{url}#{anchor}" if anchor else url


def _rewrite(tokens: Sequence[Token], guides: Mapping[str, str], base: str) -> list[Token]:
    kept: list[Token] = []
    skip_title = True
    tables = 0
    heading = ""
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            inline = tokens[index + 1]
            if skip_title and token.tag == "h1":
                index += 3  # heading_open, inline, heading_close
                skip_title = False
                continue
            token.attrSet("id", heading_anchor(inline.content))
        if token.type == "table_open":
            token.attrSet("class", "data")
            tables += 1
            # Each table's scrolling box is a landmark: a name of its own (axe: landmark-unique).
            token.meta["label"] = f"Table {tables}" + (f": {heading}" if heading else "")
        if token.type == "inline" and index and tokens[index - 1].type == "heading_open":
            heading = token.content
        if token.type == "inline" and token.children:
            token.children = _rewrite_links(token.children, guides, base)
        skip_title = skip_title and token.type not in ("paragraph_open", "fence", "table_open")
        kept.append(token)
        index += 1
    return kept


def _rewrite_links(children: list[Token], guides: Mapping[str, str], base: str) -> list[Token]:
    out: list[Token] = []
    dropped = 0  # link_open tokens dropped, whose link_close must go too
    for child in children:
        if child.type == "link_open":
            target = _target(str(child.attrGet("href") or ""), guides, base)
            if target is None:
                dropped += 1
                continue
            child.attrSet("href", target)
        elif child.type == "link_close" and dropped:
            dropped -= 1
            continue
        out.append(child)
    return out


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    renderer: Any = md.renderer  # a RendererHTML, typed as the protocol
    rules = renderer.rules

    def table_open(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        # A wide table scrolls in its own box, reachable from the keyboard (as the site's).
        label = escape(tokens[idx].meta.get("label", "Table"))
        box = f'<div class="table-wrap" role="region" aria-label="{label}" tabindex="0">'
        return box + str(renderer.renderToken(tokens, idx, options, env))

    def table_close(tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return str(renderer.renderToken(tokens, idx, options, env)) + "</div>"

    fence, code_block = rules["fence"], rules["code_block"]

    def focusable(rule: Any) -> Any:
        # A <pre> that scrolls sideways takes the keyboard focus (axe: scrollable-region).
        def render(*args: Any) -> str:
            return str(rule(*args)).replace("<pre>", '<pre tabindex="0">', 1)

        return render

    rules["table_open"] = table_open
    rules["table_close"] = table_close
    rules["fence"] = focusable(fence)
    rules["code_block"] = focusable(code_block)
    return md


def guide_html(*, text: str, guides: Mapping[str, str], base: str = "") -> SafeString:
    """The HTML of a guide's Markdown ``text``; ``guides`` maps a guide's or a served file's
    path from docs/ (``"rules.md"``, ``"examples/python/bot.py"``) to its address, and
    ``base`` is the guide's own folder there (``"examples"``), which its links start from.

    >>> print(guide_html(text="# T\\n\\nSee [the rules](rules.md#moon) and "
    ...       "[the sandbox](sandbox.md).\\n\\n## Two words", guides={"rules.md": "/docs/rules/"}))
    <p>See <a href="/docs/rules/#moon">the rules</a> and the sandbox.</p>
    <h2 id="two-words">Two words</h2>
    <BLANKLINE>
    """
    md = _renderer()
    tokens = _rewrite(md.parse(text), guides, base)
    # The text is the repository's own docs/, and raw HTML in it is escaped by markdown-it.
    return mark_safe(md.renderer.render(tokens, md.options, {}))
