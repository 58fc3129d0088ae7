"""Parsers with limits: an upload over the size limit is refused before it is read, and JSON
nested deeper than any request of the API needs is refused (a 400 ``parse_error``, never the
``RecursionError`` the parser or the code after it would meet)."""

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
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


class LimitedJSONParser(JSONParser):
    """DRF's JSON parser, refusing documents nested deeper than :data:`MAX_JSON_DEPTH`."""

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(
                f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep"
            ) from None
        if json_depth(data) > MAX_JSON_DEPTH:
            raise ParseError(f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep")
        return data
