"""``make run``'s supervisor (python -m config.run) and the demo admin account."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from pytest_django import Settings

BASE_DIR = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def living_in_groups(groups: list[int]) -> list[int]:
    """The processes, zombies aside, whose process group is one of ``groups``."""
    living = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, _ppid, group = stat_file.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) in groups and state != "Z":
            living.append(int(stat_file.parent.name))
    return living


def children_of(pid: int) -> list[int]:
    children = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            children.append(int(stat_file.parent.name))
    return children


def start_demo(tmp_path: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    """``python -m config.run`` on a free port, as ``make run`` runs it (the demo's settings: the
    test environment's database and broker left out), its state in ``tmp_path / "var"``; once
    its health check is ok: the process, the site's address and its log's path. The caller
    stops it (:func:`stop_demo`)."""
    port = free_port()
    environment = {
        k: v for k, v in os.environ.items() if k not in django_settings.ENVIRONMENT_VARIABLES
    }
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment["TAPIS_VAR_DIR"] = str(tmp_path / "var")
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        run = subprocess.Popen(
            [sys.executable, "-m", "config.run", "--port", str(port)],
            cwd=BASE_DIR,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    report: dict[str, object] = {}
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert run.poll() is None, log_path.read_text()
            try:
                status, body = fetch(f"{base}/healthz")
            except OSError:
                time.sleep(0.5)
                continue
            report = json.loads(body)
            if status == 200:
                break
            time.sleep(0.5)
        assert report.get("status") == "ok", (report, log_path.read_text())
    except BaseException:
        stop_demo(run)
        raise
    return run, base, log_path


def stop_demo(run: subprocess.Popen[bytes]) -> None:
    """Kill what is left of a demo (after a failed test; a test of the stop uses Ctrl-C)."""
    if run.poll() is None:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()


@pytest.mark.slow
def test_run_serves_admin_and_a_healthy_healthz_then_stops_on_ctrl_c(tmp_path: Path) -> None:
    run, base, log_path = start_demo(tmp_path)
    try:
        status, body = fetch(f"{base}/admin/login/")
        assert status == 200
        assert b"Django administration" in body or b"Log in" in body
        password = (tmp_path / "var" / "demo_admin_password").read_text().strip()
        assert f"password {password}" in log_path.read_text()
        # "Demo: playing now" is still being played by the worker when the site opens: its
        # slower bots take 0.15 s a decision, for minutes.
        status, body = fetch(f"{base}/")
        running = body.decode().split("Running now")[1].split("Open for registration")[0]
        assert "Demo: playing now" in running
        assert "Demo practice run: /practice/" in log_path.read_text()

        children = children_of(run.pid)
        assert len(children) == 2, children
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=30) == 0, log_path.read_text()
    finally:
        stop_demo(run)

    # A process killed at the end of the stop may take a moment to go.
    deadline = time.monotonic() + 5
    while living_in_groups(children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert living_in_groups(children) == [], "processes left running"
    assert "Stopping Tapis" in log_path.read_text()


@pytest.mark.slow
def test_run_answers_a_missing_page_with_the_sites_page_not_the_debug_page(
    tmp_path: Path,
) -> None:
    """``make run`` runs with DEBUG off: a visitor's missing page is templates/404.html, never
    Django's debug page (its URL patterns, settings, paths); the static files are still served
    (whitenoise, without collectstatic), and under /api/ a 404 is the API's JSON."""
    run, base, _log_path = start_demo(tmp_path)
    try:
        status, body = fetch(f"{base}/no-such-page/")
        page = body.decode()
        assert status == 404
        assert "Nothing here" in page
        assert "/static/tapis.css" in page
        for leak in ("DEBUG = True", "URLconf", "Traceback", str(BASE_DIR)):
            assert leak not in page, leak
        status, body = fetch(f"{base}/deals/999999999/")  # a view's Http404: the same page
        assert status == 404
        assert b"Nothing here" in body
        assert b"DEBUG" not in body

        for asset in ("tapis.css", "replay/replay.js", "admin/css/base.css"):
            status, body = fetch(f"{base}/static/{asset}")
            assert status == 200, asset
            assert body, asset

        status, body = fetch(f"{base}/api/v1/no-such-endpoint/")
        assert status == 404
        assert json.loads(body)["error"]["code"] == "not_found"
    finally:
        stop_demo(run)


@pytest.mark.django_db
def test_demo_admin_is_made_once(settings: Settings, tmp_path: Path) -> None:
    settings.VAR_DIR = tmp_path
    first, second = io.StringIO(), io.StringIO()

    call_command("demo_admin", stdout=first)
    call_command("demo_admin", stdout=second)

    password_file = tmp_path / "demo_admin_password"
    password = password_file.read_text().strip()
    assert f"password {password}" in first.getvalue()
    assert password not in second.getvalue()
    assert str(password_file) in second.getvalue()
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser
    assert admin.check_password(password)


@pytest.mark.django_db
def test_demo_admin_is_refused_in_production(settings: Settings) -> None:
    settings.PRODUCTION = True

    with pytest.raises(CommandError, match="createsuperuser"):
        call_command("demo_admin")
