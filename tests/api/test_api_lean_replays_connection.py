"""The lean replay path (api/replays.py) when the database has closed its connection: in a
module of its own, as it needs a world committed to the database (the other modules' worlds
live in a transaction of the test's connection, which this test kills)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.db import connection, connections
from django.test import RequestFactory

from config.wsgi import application

from .conftest import build_world


@pytest.mark.django_db(transaction=True)
def test_after_the_database_closed_the_connection_the_view_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The lean path skips the health check of the connection: when the connection has died
    (the database restarted), its query fails, it hands the request on, and Django's handler
    closes the dead connection and answers through a new one."""
    world = build_world()
    application(RequestFactory().get("/api/v1/games/").environ, lambda *args: None)  # type: ignore[arg-type]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    other.close()
    started: list[Any] = []
    request = RequestFactory().get(f"/api/v1/deals/{world.deal_done.pk}/")
    with caplog.at_level(logging.ERROR, logger="api.replays"):
        body = b"".join(application(request.environ, lambda *args: started.append(args)))  # type: ignore[arg-type]
    assert started[0][0] == "200 OK"
    assert json.loads(body)["id"] == world.deal_done.pk
    assert "the view answers instead" in caplog.text
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone() != (pid,)
