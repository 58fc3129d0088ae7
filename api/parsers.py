"""Parsers with limits: an upload over the size limit is refused before it is read, and JSON
nested deeper than any request of the API needs, or holding a lone UTF-16 surrogate (``"\\ud800"``:
no character, which no answer echoing it could encode), is refused (a 400 ``parse_error``,
never the ``RecursionError`` or ``UnicodeEncodeError`` the code after it would meet)."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, MultiPartParser

from judge.package import MAX_ZIP_BYTES

from .exceptions import PayloadTooLarge

# The deepest JSON document accepted: the API's requests nest two or three levels (``options``,
# ``place_points``); anything much deeper is a mistake or an attack on the recursion limit.
MAX_JSON_DEPTH = 32

# Room for the multipart framing around the file (boundaries, part headers).
MULTIPART_OVERHEAD = 64 * 1024


class BotUploadParser(MultiPartParser):
    """``multipart/form-data`` of at most one bot package (and its framing)."""

    limit = MAX_ZIP_BYTES + MULTIPART_OVERHEAD

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        request = (parser_context or {}).get("request")
        meta = getattr(request, "META", {})
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except (TypeError, ValueError):
            length = 0
        if length > self.limit:
            raise PayloadTooLarge(
                f"the request is {length} bytes; a bot package may be {MAX_ZIP_BYTES} bytes"
            )
        return super().parse(stream, media_type, parser_context)


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (a scalar is 0), without recursion.

    >>> json_depth(1), json_depth([]), json_depth({"a": [1, {"b": []}]})
    (0, 1, 4)
    """
    return _walk(value)[0]


def _is_text(value: str) -> bool:
    """Whether ``value`` is characters only: no lone surrogate (UTF-8 cannot encode one)."""
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def _walk(value: Any) -> tuple[int, bool]:
    """How deeply ``value`` nests (:func:`json_depth`), and whether every string in it, keys
    included, is text (:func:`_is_text`), without recursion.

    >>> _walk({"a": ["b"]}), _walk(["\\ud800"]), _walk({"\\udc00": 1})
    ((2, True), (1, False), (1, False))
    """
    deepest, text = 0, True
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            text = text and all(_is_text(key) for key in item)
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            text = text and (not isinstance(item, str) or _is_text(item))
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest, text


class LimitedJSONParser(JSONParser):
    """DRF's JSON parser, refusing documents nested deeper than :data:`MAX_JSON_DEPTH` and
    strings holding a lone surrogate."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(
                f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep"
            ) from None
        depth, text = _walk(data)
        if depth > MAX_JSON_DEPTH:
            raise ParseError(f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep")
        if not text:
            raise ParseError(
                "JSON parse error - a string holds a lone surrogate (\\ud800 to \\udfff not "
                "part of a pair), which is no character"
            )
        return data
