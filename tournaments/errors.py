"""The one domain error of the tournaments app."""

from __future__ import annotations

from collections.abc import Mapping


class ApplicationError(Exception):
    """A request the domain refuses (bad options, wrong status, registration closed...).

    ``code`` is a short machine-readable reason; ``extra`` holds details (the option at fault,
    the allowed values) for the API to show. The API maps it to a 4xx answer.
    """

    def __init__(
        self, message: str, *, code: str = "invalid", extra: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.extra = dict(extra or {})

    def __str__(self) -> str:
        return self.message
