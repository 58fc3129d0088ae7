"""Schemathesis against the OpenAPI schema, through the Django WSGI application in-process.

For every operation, Hypothesis generates a few requests from the schema (bounded: this is
part of the suite, so it stays quick) and each response is checked: never a server error, a
documented status, a documented content type and a body and headers that match the schema.

Generated path ids are mapped, most of the time, onto real objects of the test world (the
random ones would only ever find 404s), and the requests are sent as anonymous, as an author
and as staff.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis import checks

from config.wsgi import application
from tests.api.conftest import World
from tournaments.models import Bot, Deal, Table, Tournament

MAX_EXAMPLES = 6

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
]

# A fixed token per role, (re)made before every call: a generated DELETE /auth/token/ may
# revoke it.
TOKENS = {"author": "a" * 40, "staff": "s" * 40}


def _real_ids(path: str) -> list[int]:
    for prefix, model in (
        ("/api/v1/bots/", Bot),
        ("/api/v1/tournaments/", Tournament),
        ("/api/v1/tables/", Table),
        ("/api/v1/deals/", Deal),
    ):
        if path.startswith(prefix):
            return list(model.objects.order_by("pk").values_list("pk", flat=True))
    return []


@pytest.fixture(autouse=True)
def _open_service(settings: Any) -> Iterator[None]:
    """Sign-up open and no throttling: the run exercises the endpoints, not the limits.

    The WSGI application closes "old" database connections around each request, which
    would close the test's connection, in its transaction; Django's test client turns that
    off the same way."""
    settings.TAPIS_ALLOW_SIGNUP = True
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


# Loaded when the module is collected: generating the schema reads no database.
# The coverage phase (hundreds of boundary cases per operation) is left out to keep it quick;
# Hypothesis generates valid and invalid requests (positive and negative modes).
CONFIG = schemathesis.Config.from_dict({"phases": {"coverage": {"enabled": False}}})
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application, config=CONFIG)


@schema.hook  # type: ignore[untyped-decorator]
def map_path_parameters(context: Any, path_parameters: dict[str, Any] | None) -> Any:
    """Most generated ids become ids of real objects of the world."""
    if not path_parameters:
        return path_parameters
    path = context.operation.path
    real = _real_ids(path)
    value = path_parameters.get("id")
    if real and isinstance(value, int) and value % 5:  # four times in five: a real one
        path_parameters["id"] = real[value % len(real)]
    number = path_parameters.get("number")
    if isinstance(number, int) and number % 3:
        path_parameters["number"] = 1 + number % 2
    name = path_parameters.get("name")
    if isinstance(name, str) and len(name) % 2:
        path_parameters["name"] = "hearts"
    return path_parameters


BOUNDED = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


def call_and_check(case: Any, world: World, role: str) -> None:
    headers = {}
    user = world.users[role]
    if user is not None:
        Token.objects.get_or_create(user=user, defaults={"key": TOKENS[role]})
        headers["Authorization"] = f"Token {TOKENS[role]}"
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)


# One test per kind of client (schemathesis' lazy schemas take no parametrized fixtures).


@schema.parametrize()
@BOUNDED
def test_anonymous_requests_keep_to_the_schema(case: Any, world: World) -> None:
    call_and_check(case, world, "anonymous")


@schema.parametrize()
@BOUNDED
def test_an_authors_requests_keep_to_the_schema(case: Any, world: World) -> None:
    call_and_check(case, world, "author")


@schema.parametrize()
@BOUNDED
def test_staff_requests_keep_to_the_schema(case: Any, world: World) -> None:
    call_and_check(case, world, "staff")
