"""``Content-Disposition`` for every file the API hands out (RFC 6266).

A file name comes from a user (an uploaded bot's name) or a request: it must never break the
header nor add a parameter to it. :func:`content_disposition` always writes a quoted ASCII
``filename=`` (for old clients), and ``filename*=UTF-8''...`` with the name percent-encoded
(RFC 8187) when the ASCII form had to change it.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

# What the quoted ASCII name may hold: visible ASCII and spaces, but no quote nor backslash
# (escaping them is allowed, but clients disagree about it) nor ``;`` (naive parsers split
# the header on it): those are replaced.
_NOT_QUOTABLE = re.compile(r'[^\x20-\x7e]|[";\\]')
# Characters no file system likes (path separators, control characters).
_NOT_IN_NAMES = re.compile(r"[\x00-\x1f\x7f/\\]")


def ascii_filename(filename: str, default: str = "download") -> str:
    """``filename`` as printable ASCII without quotes, backslashes or semicolons.

    >>> ascii_filename('a"; filename=evil.html'), ascii_filename("été.py")
    ('a__ filename=evil.html', 'ete.py')
    >>> ascii_filename("\\u738b.py"), ascii_filename("")
    ('_.py', 'download')
    """
    # Each character on its own: accents are dropped (é -> e), the rest replaced.
    kept = []
    for ch in filename:
        folded = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
        kept.append(_NOT_QUOTABLE.sub("_", folded or ch))
    return "".join(kept).strip() or default


def content_disposition(filename: str, *, inline: bool = False, default: str = "download") -> str:
    """The header's value for a file called ``filename``.

    >>> content_disposition("table-4.json")
    'attachment; filename="table-4.json"'
    >>> content_disposition("王 bot.py")
    'attachment; filename="_ bot.py"; filename*=UTF-8\\'\\'%E7%8E%8B%20bot.py'
    >>> content_disposition('a"; filename=evil.html', inline=True)
    'inline; filename="a__ filename=evil.html"; filename*=UTF-8\\'\\'a%22%3B%20filename%3Devil.html'
    """
    name = _NOT_IN_NAMES.sub("_", filename).strip() or default
    fallback = ascii_filename(name, default)
    value = f'{"inline" if inline else "attachment"}; filename="{fallback}"'
    if fallback != name:
        value += f"; filename*=UTF-8''{quote(name, safe='')}"
    return value
