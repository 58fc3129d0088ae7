"""The demo holds its load (issue 13): SQLite in WAL mode with a busy timeout and immediate
transactions, so that two processes writing at once wait for each other instead of failing with
"database is locked"; and under /api/ a server error is JSON, even with DEBUG on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from api.views.games import GameList

BASE_DIR = Path(__file__).resolve().parent.parent

# Two processes, each in a transaction that reads, waits, then writes (as a sign-up does while
# the worker records a validation). Deferred transactions: the second writer gets "database is
# locked" at once (a read lock cannot wait to become a write lock). Immediate ones wait.
WRITERS = textwrap.dedent(
    """
    import sys, time
    import django
    django.setup()
    from django.contrib.auth.models import User
    from django.db import connection, transaction

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        print("journal", cursor.fetchone()[0], flush=True)
    with transaction.atomic():
        User.objects.count()
        time.sleep(1.0)
        User.objects.create(username=sys.argv[1])
    print("written", sys.argv[1], flush=True)
    """
)


def test_two_demo_processes_writing_at_once_both_succeed(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        "TAPIS_VAR_DIR": str(tmp_path / "var"),
        "TAPIS_ENV": "demo",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"]
    subprocess.run(migrate, cwd=BASE_DIR, env=env, check=True, timeout=300)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITERS, name],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("signup-a", "signup-b", "signup-c")
    ]
    outputs = [w.communicate(timeout=120) for w in writers]
    for writer, (out, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err[-3000:]
        assert "journal wal" in out
    assert sorted(
        line.split()[1] for out, _ in outputs for line in out.splitlines() if "written" in line
    ) == [
        "signup-a",
        "signup-b",
        "signup-c",
    ]


@pytest.mark.django_db
def test_an_api_server_error_is_json_even_with_debug_on(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DEBUG = True

    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(GameList, "get", broken)
    response = Client(raise_request_exception=False).get("/api/v1/games/")

    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "server_error"
    assert len(response.content) < 1000
