"""Schemathesis against the OpenAPI schema, through the Django WSGI application in-process.

For every operation, Hypothesis generates a few requests from the schema (bounded: this is
part of the suite, so it stays quick) and each response is checked: never a server error, a
documented status, a documented content type and a body and headers that match the schema.

Generated path ids are mapped, most of the time, onto real objects of the test world (the
random ones would only ever find 404s), and the requests are sent as anonymous, as an author
and as staff (each with a token).

Beside the generated requests, every operation also gets, as a user with a token, the
requests a client's mistake or an attacker would send that Hypothesis does not generate: a
JSON body nested far deeper than any request needs, a URL over the length limit, and an
``Accept: application/octet-stream``; the answers must keep to the schema just the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis import checks

from api import accounts
from api.middleware import MAX_URL_LENGTH
from api.models import ApiToken
from api.parsers import MAX_JSON_DEPTH
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
        ApiToken.objects.get_or_create(
            digest=accounts.token_digest(TOKENS[role]), defaults={"user": user, "prefix": "x"}
        )
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


# --- The cases Hypothesis does not generate, for every operation ------------------------------

OPERATIONS = [result.ok() for result in schema.get_all_operations()]
WITH_JSON_BODY = [
    operation
    for operation in OPERATIONS
    if any(body.media_type == "application/json" for body in operation.body)
]


def _path_parameters(operation: Any, world: World) -> dict[str, Any]:
    """Real ids for the path: the request reaches the view's code, not a 404."""
    parameters: dict[str, Any] = {}
    for parameter in operation.path_parameters:
        if parameter.name == "id":
            real = _real_ids(operation.path)
            parameters["id"] = real[0] if real else 1
        elif parameter.name in ("number", "seat"):
            parameters[parameter.name] = 1
        elif parameter.name == "name":
            parameters["name"] = "hearts"
    return parameters


def _with_token(world: World, role: str = "author") -> dict[str, str]:
    ApiToken.objects.get_or_create(
        digest=accounts.token_digest(TOKENS[role]),
        defaults={"user": world.users[role], "prefix": "x"},
    )
    return {"Authorization": f"Token {TOKENS[role]}"}


def _operation_id(operation: Any) -> str:
    return f"{operation.method.upper()} {operation.path}"


@pytest.mark.parametrize("operation", WITH_JSON_BODY, ids=_operation_id)
def test_deeply_nested_json_keeps_to_the_schema(operation: Any, world: World) -> None:
    headers = _with_token(world, "staff")  # staff may send every body: it gets read
    nested: list[Any] = []
    for _ in range(4 * MAX_JSON_DEPTH):
        nested = [nested]
    case = operation.Case(
        path_parameters=_path_parameters(operation, world),
        body=nested,
        media_type="application/json",
    )
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


@pytest.mark.parametrize("operation", OPERATIONS, ids=_operation_id)
def test_an_overlong_url_keeps_to_the_schema(operation: Any, world: World) -> None:
    headers = _with_token(world)
    case = operation.Case(
        path_parameters=_path_parameters(operation, world), query={"q": "x" * MAX_URL_LENGTH}
    )
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)
    assert response.status_code == 414


@pytest.mark.parametrize("operation", OPERATIONS, ids=_operation_id)
def test_asking_for_octet_stream_keeps_to_the_schema(operation: Any, world: World) -> None:
    headers = {**_with_token(world), "Accept": "application/octet-stream"}
    case = operation.Case(path_parameters=_path_parameters(operation, world))
    response = case.call(headers=headers)
    case.validate_response(response, checks=CHECKS, headers=headers)
    if response.status_code >= 400:
        assert response.headers["content-type"] == ["application/json"]


# --- Swagger UI -----------------------------------------------------------------------------


def test_the_docs_page_loads_nothing_from_elsewhere(world: World) -> None:
    client = Client()
    page = client.get("/api/v1/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert not re.findall(r"(?:https?:)?//[\w.-]+\.\w+/", html), "a file from another site"
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert {asset.rpartition("/")[2] for asset in assets} >= {
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
        "swagger-ui.css",
    }
    assert html.startswith('<!DOCTYPE html>\n<html lang="en">')  # axe: html-has-lang
    for asset in assets:
        assert asset.startswith("/static/drf_spectacular_sidecar/"), asset
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert b"".join(response.streaming_content), asset  # type: ignore[attr-defined]
