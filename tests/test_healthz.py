"""/healthz reports the database, the broker and the workers, each correctly."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from django.test import Client

from config.health import _without_password

if TYPE_CHECKING:
    from tests.conftest import LiveWorker


BASE_DIR = Path(__file__).resolve().parent.parent


def closed_port() -> int:
    """A local TCP port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def get_health(client: Client) -> tuple[int, dict[str, Any]]:
    response = client.get("/healthz")
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


@pytest.mark.slow
def test_all_up(client: Client, live_worker: LiveWorker) -> None:
    status, report = get_health(client)

    assert status == 200, report
    assert report["status"] == "ok"
    assert report["failing"] == []
    assert report["database"] == {"ok": True, "detail": "postgresql reachable"}
    assert report["broker"]["ok"] is True
    assert report["broker"]["detail"].startswith("redis://")
    assert report["workers"]["ok"] is True
    assert report["workers"]["count"] == 1
    assert report["workers"]["hostnames"][0].startswith("tapis-test-")


@pytest.mark.slow
def test_worker_stopped(client: Client, live_worker: LiveWorker) -> None:
    live_worker.stop()

    status, report = get_health(client)

    assert status == 503
    assert report["status"] == "fail"
    assert report["failing"] == ["workers"]
    assert report["database"]["ok"] is True
    assert report["broker"]["ok"] is True
    assert report["workers"] == {
        "ok": False,
        "count": 0,
        "hostnames": [],
        "detail": "no worker answered a ping within 1 s",
    }


@pytest.mark.django_db
def test_broker_down(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # Celery reads CELERY_BROKER_URL from the environment before its own settings.
    monkeypatch.setenv("CELERY_BROKER_URL", f"redis://127.0.0.1:{closed_port()}/0")

    status, report = get_health(client)

    assert status == 503
    assert report["failing"] == ["broker", "workers"]
    assert report["database"]["ok"] is True
    assert report["broker"]["ok"] is False
    assert "unreachable" in report["broker"]["detail"]
    assert "refused" in report["broker"]["detail"].lower()
    assert report["workers"]["detail"] == "not asked: no broker"


def test_database_down() -> None:
    environment = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{closed_port()}/tapis",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    code = (
        "import json, django; django.setup()\n"
        "from config.health import health_report\n"
        "print(json.dumps(health_report()))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    report = json.loads(completed.stdout)

    assert "database" in report["failing"]
    assert report["database"]["ok"] is False
    assert report["database"]["detail"].startswith("unreachable: OperationalError")


@pytest.mark.django_db
def test_healthz_is_read_only_and_never_cached(client: Client) -> None:
    assert client.post("/healthz").status_code == 405
    assert "no-cache" in client.head("/healthz")["Cache-Control"]


def test_broker_password_is_masked() -> None:
    assert _without_password("redis://:s3cret@cache:6379/0") == "redis://:**@cache:6379/0"
    assert _without_password("redis://tapis:s3cret@cache/0") == "redis://tapis:**@cache/0"
    assert _without_password("redis://127.0.0.1:6379/1") == "redis://127.0.0.1:6379/1"
