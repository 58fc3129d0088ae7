"""Parsers with limits: an upload over the size limit is refused before it is read."""

from __future__ import annotations

from typing import Any

from rest_framework.parsers import MultiPartParser

from judge.package import MAX_ZIP_BYTES

from .exceptions import PayloadTooLarge

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
