"""The whole story of a bot author, through the API alone, against a real Celery worker (a
subprocess on the real Redis broker and PostgreSQL database) that validates the uploads and
plays the tables in the sandbox.

Only the organiser's account exists beforehand (organisers are named by the site's staff).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from tests.api.conftest import BOT_FILE, make_user
from tests.conftest import LiveWorker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TIMEOUT = 240.0


def poll(
    fetch: Callable[[], dict[str, Any]],
    done: Callable[[dict[str, Any]], bool],
    worker: LiveWorker,
    what: str,
) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        body = fetch()
        if done(body):
            return body
        time.sleep(0.5)
    pytest.fail(f"timed out after {TIMEOUT:g} s waiting for {what}: {body}\n{worker.log()}")


def sign_up(username: str) -> APIClient:
    response = APIClient().post(
        "/api/v1/auth/signup/",
        {"username": username, "password": f"{username}-Passw0rd!"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    # Then, as any client would later: a token from the username and password.
    token = APIClient().post(
        "/api/v1/auth/token/",
        {"username": username, "password": f"{username}-Passw0rd!"},
        format="json",
    )
    assert token.status_code == 200
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    return client


def upload_ready_bot(client: APIClient, name: str, worker: LiveWorker) -> int:
    """Create a bot, upload its file, wait until the worker has validated it: its version id."""
    bot = client.post("/api/v1/bots/", {"name": name, "game": "hearts"}, format="json").json()
    version = client.post(
        f"/api/v1/bots/{bot['id']}/versions/",
        {"file": SimpleUploadedFile(f"{name}.py", BOT_FILE.read_bytes())},
        format="multipart",
    ).json()
    assert version["status"] == "pending"
    url = f"/api/v1/bots/{bot['id']}/versions/{version['number']}/"
    ready = poll(
        lambda: client.get(url).json(),
        lambda v: v["status"] in ("ready", "rejected"),
        worker,
        f"the validation of {name}",
    )
    assert ready["status"] == "ready", ready["report"]
    assert ready["report"]["ok"] is True
    return int(version["id"])


def test_the_whole_story_through_the_api(live_worker: LiveWorker, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    make_user("organiser", organiser=True)
    organiser = APIClient()
    token = organiser.post(
        "/api/v1/auth/token/",
        {"username": "organiser", "password": "organiser-secret-pw"},
        format="json",
    ).json()["token"]
    organiser.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    # Two authors sign up and upload a bot each; the worker validates them in the sandbox.
    alice, bob = sign_up("alice"), sign_up("bob")
    alice_version = upload_ready_bot(alice, "alice-bot", live_worker)
    bob_version = upload_ready_bot(bob, "bob-bot", live_worker)

    # The organiser creates and opens a tournament; its seed's commitment is public at once.
    cup = organiser.post(
        "/api/v1/tournaments/",
        {
            "name": "Story cup",
            "game": "hearts",
            "preset": "whisthub",
            "rounds": 2,
            "deals_per_table": 2,
            "decision_seconds": 2.0,
            "startup_seconds": 10.0,
        },
        format="json",
    ).json()
    commitment = cup["commitment"]
    assert organiser.post(f"/api/v1/tournaments/{cup['id']}/open/").json()["status"] == "open"

    # Both register; the organiser starts it.
    for client, version in ((alice, alice_version), (bob, bob_version)):
        entry = client.post(
            f"/api/v1/tournaments/{cup['id']}/entries/", {"version": version}, format="json"
        )
        assert entry.status_code == 201, entry.json()
    started = organiser.post(f"/api/v1/tournaments/{cup['id']}/start/").json()
    assert (started["status"], started["seed"]) == ("running", None)

    # Alice polls the progress until the worker has played every table.
    progress = poll(
        lambda: alice.get(f"/api/v1/tournaments/{cup['id']}/progress/").json(),
        lambda p: p["finished"] or p["status"] == "cancelled" or p["tables_failed"] > 0,
        live_worker,
        "the tournament to finish",
    )
    assert progress["finished"], progress
    assert progress["tables_done"] == progress["tables_total"] == 2

    # The standings, the seed that matches the commitment.
    standings = alice.get(f"/api/v1/tournaments/{cup['id']}/standings/").json()["results"]
    assert sorted(s["bot_name"] for s in standings) == ["alice-bot", "bob-bot"]
    assert sorted(s["rank"] for s in standings) == [1, 2]
    assert all(s["tables"] == 2 for s in standings)
    finished = alice.get(f"/api/v1/tournaments/{cup['id']}/").json()
    assert hashlib.sha256(finished["seed"].encode()).hexdigest() == commitment

    # A replay of a deal, and its audit through the engine.
    tables = alice.get(f"/api/v1/tournaments/{cup['id']}/tables/").json()["results"]
    assert len(tables) == 2
    table = alice.get(f"/api/v1/tables/{tables[0]['id']}/").json()
    assert table["visible"] is True
    deal_id = table["deals"][0]["id"]
    replay = alice.get(f"/api/v1/deals/{deal_id}/").json()
    assert len(replay["tricks"]) == 13
    assert len(replay["decisions"]) == 56
    assert sum(replay["points"]) in (26, 78)
    labels = [s["bot"] for s in replay["seats"]]
    assert "alice-bot v1" in labels
    assert "bob-bot v1" in labels
    audit = alice.get(f"/api/v1/deals/{deal_id}/audit/").json()
    assert audit["ok"] is True, audit["problems"]
    log = alice.get(f"/api/v1/tables/{tables[0]['id']}/log/").json()
    assert len(log["deals"]) == 2

    # The rankings now list both bots.
    rankings = alice.get("/api/v1/rankings/?game=hearts").json()["results"]
    assert sorted(r["bot_name"] for r in rankings) == ["alice-bot", "bob-bot"]
    assert all(r["tables"] == 2 for r in rankings)
