"""A version of each runtime through the service: uploaded through the API, built and validated
by a real Celery worker in the sandbox, then playing a tournament on that worker."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.api.conftest import builtin_bot, client_for, make_user, ready_version
from tests.conftest import LiveWorker
from tournaments.models import BotArtifact, BotVersion

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
TIMEOUT = 480.0  # the Rust build compiles serde_json: the longest of the builds


def _rust_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ("tapis.json", "Cargo.toml", "src/main.rs"):
            archive.write(EXAMPLES / "rust" / name, name)
    return buffer.getvalue()


UPLOADS: dict[str, tuple[str, bytes]] = {
    "python3": ("bot.py", (EXAMPLES / "python" / "bot.py").read_bytes()),
    "c": ("bot.c", (EXAMPLES / "c" / "bot.c").read_bytes()),
    "cpp": ("bot.cpp", (EXAMPLES / "cpp" / "bot.cpp").read_bytes()),
    "rust": ("bot.zip", _rust_zip()),
    "go": ("main.go", (EXAMPLES / "go" / "main.go").read_bytes()),
    "java": ("Bot.java", (EXAMPLES / "java" / "Bot.java").read_bytes()),
    "javascript": ("bot.js", (EXAMPLES / "javascript" / "bot.js").read_bytes()),
}


def poll(fetch: Callable[[], Any], done: Callable[[Any], bool], worker: LiveWorker) -> Any:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        body = fetch()
        if done(body):
            return body
        time.sleep(0.5)
    pytest.fail(f"timed out after {TIMEOUT:g} s: {body}\n{worker.log()}")


def upload(client: APIClient, name: str, filename: str, data: bytes) -> tuple[int, str]:
    bot = client.post("/api/v1/bots/", {"name": name, "game": "hearts"}, format="json").json()
    response = client.post(
        f"/api/v1/bots/{bot['id']}/versions/",
        {"file": SimpleUploadedFile(filename, data)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    return bot["id"], f"/api/v1/bots/{bot['id']}/versions/{response.json()['number']}/"


def test_every_runtime_is_built_validated_and_plays_a_tournament(
    live_worker: LiveWorker,
) -> None:
    organiser = make_user("organiser", organiser=True)
    urls: dict[str, str] = {}
    clients: dict[str, APIClient] = {}
    for runtime, (filename, data) in UPLOADS.items():
        clients[runtime] = client_for(make_user(f"author-{runtime}"))
        _, urls[runtime] = upload(clients[runtime], f"{runtime}-bot", filename, data)
    broken_client = clients["c"]
    _, broken_url = upload(broken_client, "broken-c", "bot.c", b"int main(void) { return x; }\n")

    versions = {}
    for runtime, url in urls.items():
        client = clients[runtime]
        version = poll(
            lambda c=client, u=url: c.get(u).json(),
            lambda v: v["status"] in ("ready", "rejected"),
            live_worker,
        )
        assert version["status"] == "ready", (runtime, version["report"])
        assert version["runtime"] == runtime
        assert (
            version["report"]["name"] == f"example-{'python' if runtime == 'python3' else runtime}"
        )
        versions[runtime] = version
        compiled = runtime not in ("python3", "javascript")
        assert bool(version["toolchain"]) is compiled, version
        assert BotArtifact.objects.filter(version_id=version["id"]).exists() is compiled

    broken = poll(
        lambda: broken_client.get(broken_url).json(),
        lambda v: v["status"] in ("ready", "rejected"),
        live_worker,
    )
    assert broken["status"] == "rejected"
    assert broken["report"]["reason"].startswith("c build failed: the compiler exited")
    assert "error:" in broken["report"]["build_log"]
    assert "undeclared" in broken["report"]["build_log"]

    # A tournament of the seven, and a built-in bot to fill two tables of four.
    admin = client_for(organiser)
    cup = admin.post(
        "/api/v1/tournaments/",
        {
            "name": "Runtimes cup",
            "game": "hearts",
            "preset": "whisthub",
            "rounds": 1,
            "deals_per_table": 2,
            "decision_seconds": 2.0,
            "startup_seconds": 10.0,
        },
        format="json",
    ).json()
    assert admin.post(f"/api/v1/tournaments/{cup['id']}/open/").status_code == 200
    for runtime, version in versions.items():
        entry = clients[runtime].post(
            f"/api/v1/tournaments/{cup['id']}/entries/", {"version": version["id"]}, format="json"
        )
        assert entry.status_code == 201, entry.json()
    filler_user = make_user("filler")
    filler = ready_version(builtin_bot(filler_user, "filler"))
    entry = client_for(filler_user).post(
        f"/api/v1/tournaments/{cup['id']}/entries/", {"version": filler.pk}, format="json"
    )
    assert entry.status_code == 201, entry.json()
    assert admin.post(f"/api/v1/tournaments/{cup['id']}/start/").status_code == 200
    progress = poll(
        lambda: admin.get(f"/api/v1/tournaments/{cup['id']}/progress/").json(),
        lambda p: p["finished"] or p["status"] == "cancelled" or p["tables_failed"] > 0,
        live_worker,
    )
    assert progress["finished"], progress
    tables = admin.get(f"/api/v1/tournaments/{cup['id']}/tables/").json()["results"]
    assert len(tables) == 2
    seats = []
    for table in tables:
        log = admin.get(f"/api/v1/tables/{table['id']}/log/").json()
        seats += log["judge"]["seats"]
    by_name = {seat.get("name"): seat for seat in seats}
    for runtime in UPLOADS:
        seat = by_name[f"example-{'python' if runtime == 'python3' else runtime}"]
        assert seat["faults"] == 0, seat
        assert seat["replaced_by"] is None, seat
    assert BotVersion.objects.filter(status=BotVersion.Status.READY).count() == 8
