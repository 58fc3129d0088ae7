"""The lean replay path (api/replays.py), through the WSGI application as gunicorn calls it:
it answers anonymous GETs of shown replays exactly as the view would, and hands everything
else to the view."""

from __future__ import annotations

import dataclasses
import doctest
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core import signals
from django.db import close_old_connections, connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from api import accounts, replays
from api.views import deals as deal_views
from config.wsgi import application
from tournaments import selectors
from tournaments.models import DealReplay, Table

from .conftest import World, assert_error

pytestmark = pytest.mark.django_db


@dataclasses.dataclass
class Answer:
    status_code: int
    headers: dict[str, str]
    content: bytes

    def __getitem__(self, name: str) -> str:
        return self.headers[name]

    def json(self) -> Any:
        return json.loads(self.content)


Get = Callable[..., Answer]


@pytest.fixture
def wsgi() -> Iterator[Get]:
    """Requests to the WSGI application (what gunicorn calls). It closes "old" database
    connections around each request, which would close the test's, in its transaction:
    Django's test client turns that off the same way."""

    def call(path: str, method: str = "GET", token: str | None = None, **environ: Any) -> Answer:
        if token is not None:
            environ["HTTP_AUTHORIZATION"] = f"Token {token}"
        request = RequestFactory().generic(method, path, **environ)
        # As a WSGI server gives it (WSGIRequest decoded it in place): UTF-8 bytes as latin-1.
        request.environ["PATH_INFO"] = request.path_info.encode().decode("iso-8859-1")
        started: list[Any] = []
        chunks = application(request.environ, lambda *args: started.append(args))  # type: ignore[arg-type]
        try:
            content = b"".join(chunks)
        finally:
            getattr(chunks, "close", lambda: None)()
        status, headers = started[0][:2]
        return Answer(int(status.split()[0]), dict(headers), content)

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield call
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def _token(world: World, role: str) -> str:
    return accounts.token_issue(user=world.users[role]).key


def _not_called(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the lean path should have answered")


def test_anonymous_replays_are_answered_before_django_in_one_query(
    world: World, wsgi: Get, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deal_views.DealReplay, "get", _not_called)
    pk = world.deal_done.pk
    for _ in range(2):  # nothing kept between requests: the query each time
        with CaptureQueriesContext(connection) as queries:
            answer = wsgi(f"/api/v1/deals/{pk}/")
        assert answer.status_code == 200
        assert len(queries) == 1
        assert answer.content.decode() == DealReplay.objects.get(deal_id=pk).document


def test_the_lean_answer_is_the_views_byte_for_byte(world: World, wsgi: Get) -> None:
    """An anonymous client gets the lean path's answer, a logged-in one the view's (through
    all of Django's middleware): the same body and the same headers."""
    path = f"/api/v1/deals/{world.deal_done.pk}/"
    lean, view = wsgi(path), wsgi(path, token=_token(world, "author"))
    assert lean.status_code == view.status_code == 200
    assert lean.content == view.content
    assert lean.headers == view.headers
    assert lean["Content-Type"] == "application/json"
    assert int(lean["Content-Length"]) == len(lean.content)
    assert "max-age" in lean["Cache-Control"]
    assert lean["X-Frame-Options"] == "DENY"  # a header of Django's middleware


@pytest.mark.parametrize(
    ("environ", "status", "code"),
    [
        ({"HTTP_ACCEPT": "text/html"}, 406, "not_acceptable"),  # DRF's content negotiation
        ({"QUERY_STRING": "format=xml"}, 404, "not_found"),  # DRF's format: no such renderer
        ({"HTTP_AUTHORIZATION": "Token not-a-token"}, 401, "authentication_failed"),
        ({"HTTP_HOST": "evil.example"}, 400, "bad_request"),  # a host the site does not serve
    ],
)
def test_requests_the_lean_path_does_not_answer_get_the_views_answer(
    world: World, wsgi: Get, environ: dict[str, str], status: int, code: str
) -> None:
    assert_error(wsgi(f"/api/v1/deals/{world.deal_done.pk}/", **environ), status, code)


def test_hidden_and_missing_deals_get_the_views_answer(world: World, wsgi: Get) -> None:
    deal = world.deal_done
    assert_error(wsgi(f"/api/v1/deals/{10**9}/"), 404, "not_found")
    Table.objects.filter(pk=deal.table_id).update(status=Table.Status.RUNNING)
    hidden = wsgi(f"/api/v1/deals/{deal.pk}/")
    assert_error(hidden, 403, "hidden")
    assert b"hands" not in hidden.content


def test_other_methods_and_odd_paths_go_to_the_view(world: World, wsgi: Get) -> None:
    pk = world.deal_done.pk
    assert (
        wsgi(f"/api/v1/deals/{pk}/", method="HEAD").status_code == 200
    )  # (gunicorn strips the body)
    assert_error(wsgi(f"/api/v1/deals/{pk}/", method="POST"), 405, "method_not_allowed")
    indented = wsgi(f"/api/v1/deals/{pk}/", HTTP_ACCEPT="application/json; indent=4")
    assert indented.content == wsgi(f"/api/v1/deals/{pk}/").content
    # The URL takes ASCII digits only (int("\u0661") is 1; it comes percent-encoded); a
    # number past bigint is no deal.
    for path in ("/api/v1/deals/%D9%A1/", f"/api/v1/deals/{2**64}/", f"/api/v1/deals/{pk}"):
        assert_error(wsgi(path), 404, "not_found")


def test_the_lean_path_throttles_like_the_view(world: World, wsgi: Get, settings: Any) -> None:
    """The same counters as every other endpoint (a client's requests add up), and the same
    429."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": None},
    }
    path = f"/api/v1/deals/{world.deal_done.pk}/"
    assert wsgi("/api/v1/games/").status_code == 200
    assert wsgi(path).status_code == 200
    assert wsgi(path).status_code == 200
    lean, view = wsgi(path), wsgi("/api/v1/games/")
    for refused in (lean, view):
        assert_error(refused, 429, "throttled")
        assert int(refused["Retry-After"]) > 0
    assert lean.content == view.content
    assert lean["Allow"] == "GET, HEAD, OPTIONS"
    assert wsgi(path, token=_token(world, "author")).status_code == 200  # counted per user


def test_when_the_lean_path_fails_the_view_answers(
    world: World, wsgi: Get, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real = selectors.deal_replay_stored
    calls: list[int] = []

    def fails_once(*, deal_id: int) -> Any:
        calls.append(deal_id)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        return real(deal_id=deal_id)

    monkeypatch.setattr(selectors, "deal_replay_stored", fails_once)
    with caplog.at_level(logging.ERROR, logger="api.replays"):
        answer = wsgi(f"/api/v1/deals/{world.deal_done.pk}/")
    assert answer.status_code == 200
    assert answer.json()["id"] == world.deal_done.pk
    assert len(calls) == 2
    assert "the view answers instead" in caplog.text


def test_the_lean_paths_docstring_examples_hold() -> None:
    results = doctest.testmod(replays)
    assert results.attempted > 0
    assert results.failed == 0
