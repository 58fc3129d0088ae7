"""The one domain error of the tournaments app."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import PermissionDenied
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerError


class NotAllowed(PermissionDenied):
    """A page the member's rights do not open (the organiser right, another's bot), as opposed
    to information hidden for now (a table still playing): the 403 page says which."""


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


# Errors that say the infrastructure is away, not that the work is wrong: the database (the
# services let these through for the task to retry) and, for the tasks, the broker too.
DATABASE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
INFRASTRUCTURE_ERRORS: tuple[type[Exception], ...] = (*DATABASE_ERRORS, BrokerError)
