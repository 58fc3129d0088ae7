"""Bad input: every mistake of a client is a 4xx in the documented error shape, never a 500."""

from __future__ import annotations

import doctest
import http.client
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from api import downloads, parsers
from api.downloads import content_disposition
from api.middleware import MAX_URL_LENGTH
from api.parsers import MAX_JSON_DEPTH
from config import health
from judge.package import MAX_ZIP_BYTES
from tests.api.conftest import BOT_FILE, World, assert_error, ready_version
from tournaments.models import BotVersion

TOURNAMENT = {"name": "Cup", "game": "hearts", "rounds": 1, "deals_per_table": 4}


def create(world: World, **changes: Any) -> Any:
    return world.client("organiser").post(
        "/api/v1/tournaments/", {**TOURNAMENT, **changes}, format="json"
    )


# --- tournament settings ------------------------------------------------------------------------


def test_an_unknown_rule_option_names_the_option(world: World) -> None:
    error = assert_error(create(world, options={"jokers": True}), 400, "invalid_option")
    assert "jokers" in error["message"]
    assert list(error["fields"]) == ["options.jokers"]


def test_a_rule_option_out_of_its_allowed_values(world: World) -> None:
    error = assert_error(create(world, options={"pass_count": 9}), 400, "invalid_option")
    assert "options.pass_count" in error["fields"]
    assert "from 1 to 5" in error["message"]  # the allowed values are named
    error = assert_error(create(world, options={"moon": "sun"}), 400, "invalid_option")
    assert "self-minus-26" in error["message"]
    error = assert_error(create(world, options={"td_bonus": "yes"}), 400, "invalid_option")
    assert "options.td_bonus" in error["fields"]


def test_an_unknown_preset(world: World) -> None:
    error = assert_error(create(world, preset="strip-hearts"), 400, "invalid_option")
    assert list(error["fields"]) == ["preset"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"rounds": "three"}, "rounds"),
        ({"rounds": 0}, "rounds"),
        ({"deals_per_table": 10**9}, "deals_per_table"),
        ({"game": "chess"}, "game"),
        ({"duplicate": "perhaps"}, "duplicate"),
        ({"options": ["target_score", 50]}, "options"),
        ({"options": {"target_score": 50.5}}, "options.target_score"),
        ({"options": {"target_score": None}}, "options.target_score"),
        ({"place_points": [4, "two", 1, 0]}, "place_points.1"),
        ({"decision_seconds": -1}, "decision_seconds"),
        ({"registration_opens_at": "next tuesday"}, "registration_opens_at"),
        ({"name": ""}, "name"),
        ({"colour": "green"}, "colour"),
    ],
)
def test_wrong_types_and_unknown_fields(world: World, changes: dict[str, Any], field: str) -> None:
    error = assert_error(create(world, **changes), 400, "invalid")
    assert field in error["fields"], error


def test_missing_fields_are_each_named(world: World) -> None:
    response = world.client("organiser").post("/api/v1/tournaments/", {}, format="json")
    error = assert_error(response, 400, "invalid")
    assert set(error["fields"]) == {"name", "game", "rounds", "deals_per_table"}


def test_domain_checks_of_the_settings(world: World) -> None:
    error = assert_error(create(world, place_points=[1, 2, 3, 4]), 400, "place_points")
    assert "increase" in error["message"]
    assert_error(create(world, seating="knockout"), 400)
    assert_error(create(world, house_bot="genius"), 400, "limits")


def test_a_started_tournament_cannot_change(world: World) -> None:
    response = world.client("organiser").patch(
        f"/api/v1/tournaments/{world.running.pk}/", {"rounds": 5}, format="json"
    )
    error = assert_error(response, 409, "status")
    assert error["details"] == {"status": "running"}


def test_changes_are_checked_like_a_creation(world: World) -> None:
    client = world.client("organiser")
    draft = f"/api/v1/tournaments/{world.draft.pk}/"
    jokers = client.patch(draft, {"options": {"jokers": 1}}, format="json")
    assert_error(jokers, 400, "invalid_option")
    ok = client.patch(draft, {"deals_per_table": 8, "options": {"target_score": 50}}, format="json")
    assert ok.status_code == 200, ok.json()
    assert ok.json()["deals_per_table"] == 8
    assert ok.json()["options"] == {"target_score": 50}
    assert ok.json()["commitment"] == world.draft.commitment


def test_malformed_json(world: World) -> None:
    response = world.client("organiser").post(
        "/api/v1/tournaments/", "{not json", content_type="application/json"
    )
    assert_error(response, 400, "parse_error")


def test_json_with_nan_is_refused(world: World) -> None:
    response = world.client("organiser").post(
        "/api/v1/tournaments/",
        '{"name": "x", "game": "hearts", "rounds": 1, "deals_per_table": 4, '
        '"decision_seconds": NaN}',
        content_type="application/json",
    )
    assert_error(response, 400, "parse_error")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/v1/tournaments/"),
        ("patch", "/api/v1/tournaments/{draft}/"),
        ("post", "/api/v1/tournaments/{open}/entries/"),
        ("post", "/api/v1/bots/"),
        ("post", "/api/v1/auth/token/"),
    ],
)
@pytest.mark.parametrize("depth", [1000, 100_000, MAX_JSON_DEPTH + 1])
def test_deeply_nested_json(world: World, method: str, path: str, depth: int) -> None:
    client = world.client("author" if "entries" in path else "organiser")
    url = path.format(draft=world.draft.pk, open=world.open.pk)
    body = "[" * depth + "]" * depth
    response = getattr(client, method)(url, body, content_type="application/json")
    assert "nested" in assert_error(response, 400, "parse_error")["message"]
    # Nested inside an object, where a field (``options``) takes any JSON: the same.
    body = '{"name": "x", "game": "hearts", "options": ' + '{"a": ' * depth + "1" + "}" * depth
    response = getattr(client, method)(url, body + "}", content_type="application/json")
    assert_error(response, 400, "parse_error")


@pytest.mark.parametrize(
    ("role", "path", "body"),
    [
        ("anonymous", "/api/v1/auth/token/", '{"\\ud800": 1}'),
        ("anonymous", "/api/v1/auth/token/", '{"username": "\\udc00", "password": "x"}'),
        ("anonymous", "/api/v1/auth/signup/", '{"\\ud800": 1}'),
        ("anonymous", "/api/v1/auth/signup/", '{"username": "a\\ud800", "password": "x"}'),
        ("organiser", "/api/v1/tournaments/", '{"name": "x", "game": "\\ud800"}'),
        ("organiser", "/api/v1/tournaments/", '{"name": "x", "options": {"\\udfff": [1]}}'),
        ("author", "/api/v1/bots/", '{"name": "b\\ud800", "game": "hearts"}'),
    ],
)
def test_a_lone_surrogate_is_a_parse_error(
    world: World, settings: Any, role: str, path: str, body: str
) -> None:
    """Half of a UTF-16 pair, escaped in JSON, is no character: refused when parsed (echoed
    in an error message, it could not be encoded and the answer was a 500)."""
    settings.TAPIS_ALLOW_SIGNUP = True
    response = world.client(role).post(path, body, content_type="application/json")
    assert "surrogate" in assert_error(response, 400, "parse_error")["message"]


def test_an_escaped_surrogate_pair_is_a_character(world: World) -> None:
    response = world.client("author").post(
        "/api/v1/bots/",
        '{"name": "b\\ud83c\\udca1", "game": "hearts"}',
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["name"] == "b\U0001f0a1"


def test_json_as_deep_as_allowed_is_parsed(world: World) -> None:
    # The body, ``options`` and ``a`` are three levels.
    nested = "[" * (MAX_JSON_DEPTH - 3) + "]" * (MAX_JSON_DEPTH - 3)
    body = '{"name": "x", "game": "hearts", "rounds": 1, "deals_per_table": 4, "options": '
    response = world.client("organiser").post(
        "/api/v1/tournaments/", body + '{"a": ' + nested + "}}", content_type="application/json"
    )
    assert "options.a" in assert_error(response, 400)["fields"]


def test_filters_and_pages_are_checked(world: World) -> None:
    client = world.client("anonymous")
    assert "status" in assert_error(client.get("/api/v1/tournaments/?status=bogus"), 400)["fields"]
    assert (
        "ordering" in assert_error(client.get("/api/v1/tournaments/?ordering=seed"), 400)["fields"]
    )
    assert_error(client.get("/api/v1/tournaments/?page=999"), 404, "not_found")
    assert "game" in assert_error(client.get("/api/v1/rankings/"), 400)["fields"]
    assert (
        "preset"
        in assert_error(client.get("/api/v1/rankings/?game=hearts&preset=x"), 400)["fields"]
    )
    tables = f"/api/v1/tournaments/{world.finished.pk}/tables/?round=zero"
    assert "round" in assert_error(client.get(tables), 400)["fields"]


# --- entries ------------------------------------------------------------------------------------


def test_a_version_not_ready_cannot_enter(world: World) -> None:
    version = world.pending.versions.get()
    assert version.status == BotVersion.Status.PENDING
    response = world.client("author").post(
        f"/api/v1/tournaments/{world.open.pk}/entries/", {"version": version.pk}, format="json"
    )
    assert_error(response, 400, "version_not_ready")


def test_registering_after_the_start(world: World) -> None:
    response = world.client("author").post(
        f"/api/v1/tournaments/{world.running.pk}/entries/",
        {"version": ready_version(world.bot).pk},
        format="json",
    )
    assert "closed" in assert_error(response, 409, "status")["message"]


def test_another_users_bot_cannot_be_entered(world: World) -> None:
    response = world.client("author").post(
        f"/api/v1/tournaments/{world.open.pk}/entries/",
        {"version": ready_version(world.other_bot).pk},
        format="json",
    )
    assert_error(response, 403, "not_owner")


def test_entering_twice(world: World) -> None:
    client = world.client("author")
    url = f"/api/v1/tournaments/{world.open.pk}/entries/"
    first = client.post(url, {"version": ready_version(world.bot).pk}, format="json")
    assert first.status_code == 201
    again = client.post(url, {"version": ready_version(world.bot).pk}, format="json")
    assert_error(again, 409, "duplicate_entry")


def test_entering_an_unknown_version(world: World) -> None:
    url = f"/api/v1/tournaments/{world.open.pk}/entries/"
    assert_error(world.client("author").post(url, {"version": 10**9}, format="json"), 404)
    assert_error(world.client("author").post(url, {"version": "v1"}, format="json"), 400)


def test_starting_with_too_few_entries(world: World) -> None:
    response = world.client("organiser").post(f"/api/v1/tournaments/{world.draft.pk}/start/")
    assert_error(response, 409, "status")
    world.client("organiser").post(f"/api/v1/tournaments/{world.draft.pk}/open/")
    response = world.client("organiser").post(f"/api/v1/tournaments/{world.draft.pk}/start/")
    assert_error(response, 409, "too_few")


# --- uploads ------------------------------------------------------------------------------------


def upload(world: World, file: Any, role: str = "author") -> Any:
    return world.client(role).post(
        f"/api/v1/bots/{world.bot.pk}/versions/", {"file": file}, format="multipart"
    )


def test_an_upload_becomes_a_pending_version(world: World) -> None:
    response = upload(world, SimpleUploadedFile("mine.py", BOT_FILE.read_bytes()))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["number"], body["status"], body["filename"]) == (2, "pending", "mine.py")
    assert body["size"] == len(BOT_FILE.read_bytes())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bot.txt", b"print('hello')"),
        ("bot.zip", b"this is not a zip archive"),
        ("bot.zip", b"PK\x03\x04 truncated"),
    ],
)
def test_a_malformed_upload(world: World, name: str, content: bytes) -> None:
    assert_error(upload(world, SimpleUploadedFile(name, content)), 400, "bot_package")


def test_a_zip_without_a_manifest(world: World) -> None:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("bot.py", BOT_FILE.read_bytes())
    error = assert_error(upload(world, SimpleUploadedFile("bot.zip", data.getvalue())), 400)
    assert error["code"] == "bot_package"


def test_an_empty_or_missing_file(world: World) -> None:
    assert "file" in assert_error(upload(world, SimpleUploadedFile("bot.py", b"")), 400)["fields"]
    response = world.client("author").post(
        f"/api/v1/bots/{world.bot.pk}/versions/", {}, format="multipart"
    )
    assert "file" in assert_error(response, 400, "invalid")["fields"]


def test_an_upload_must_be_multipart(world: World) -> None:
    response = world.client("author").post(
        f"/api/v1/bots/{world.bot.pk}/versions/", {"file": "print(1)"}, format="json"
    )
    assert_error(response, 415, "unsupported_media_type")


def test_an_oversized_upload(world: World) -> None:
    big = b"#" * (MAX_ZIP_BYTES + 1)
    error = assert_error(upload(world, SimpleUploadedFile("big.py", big)), 413, "too_large")
    assert str(MAX_ZIP_BYTES) in error["message"]


def test_an_oversized_request_is_refused_before_it_is_read(world: World) -> None:
    big = b"#" * (MAX_ZIP_BYTES + 128 * 1024)
    response = upload(world, SimpleUploadedFile("big.py", big))
    assert_error(response, 413, "too_large")


def test_uploading_to_another_users_bot(world: World) -> None:
    response = upload(world, SimpleUploadedFile("mine.py", BOT_FILE.read_bytes()), role="other")
    assert_error(response, 403, "permission_denied")


def test_built_in_versions_have_no_code(world: World) -> None:
    response = world.client("author").get(f"/api/v1/bots/{world.bot.pk}/versions/1/code/")
    assert_error(response, 404, "not_found")


def test_bot_names_are_unique_per_owner(world: World) -> None:
    response = world.client("author").post(
        "/api/v1/bots/", {"name": "alpha", "game": "hearts"}, format="json"
    )
    assert_error(response, 400, "bot_name")


# --- accounts -----------------------------------------------------------------------------------


def test_wrong_credentials(world: World) -> None:
    response = APIClient().post(
        "/api/v1/auth/token/", {"username": "author", "password": "wrong"}, format="json"
    )
    assert_error(response, 400, "invalid_credentials")
    response = APIClient().post("/api/v1/auth/token/", {"username": "author"}, format="json")
    assert "password" in assert_error(response, 400, "invalid")["fields"]


def test_a_wrong_token(world: World) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert_error(client.get("/api/v1/games/"), 401, "authentication_failed")


def test_anonymous_writes_are_asked_for_a_token(world: World) -> None:
    response = APIClient().post("/api/v1/bots/", {"name": "x", "game": "hearts"}, format="json")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_signup_closed(world: World, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = False
    response = APIClient().post(
        "/api/v1/auth/signup/", {"username": "x", "password": "a-long-Passw0rd!"}, format="json"
    )
    assert_error(response, 403, "signup_closed")


def test_signup_checks(world: World, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    client = APIClient()
    weak = client.post("/api/v1/auth/signup/", {"username": "x", "password": "123"}, format="json")
    assert "password" in assert_error(weak, 400, "weak_password")["fields"]
    taken = client.post(
        "/api/v1/auth/signup/",
        {"username": "Author", "password": "a-long-Passw0rd!"},
        format="json",
    )
    assert "username" in assert_error(taken, 400, "username_taken")["fields"]
    bad = client.post(
        "/api/v1/auth/signup/", {"username": "a b/c", "password": "a-long-Passw0rd!"}, format="json"
    )
    assert "username" in assert_error(bad, 400, "invalid")["fields"]


# --- HTTP ---------------------------------------------------------------------------------------


def test_unknown_paths_and_methods(world: World) -> None:
    client = world.client("author")
    assert_error(client.get("/api/v1/no/such/thing/"), 404, "not_found")
    for path in ("/api/", "/api/v2/games/", "/api//v1/games/", "/api/v1x/", "/api/%E2%80%A8/"):
        assert_error(client.get(path), 404, "not_found")
        assert_error(client.post(path, {}, format="json"), 404, "not_found")
    assert_error(client.get("/api/v1/deals/999999/"), 404, "not_found")
    assert_error(client.get("/api/v1/tables/999999/log/"), 404, "not_found")
    assert_error(client.get("/api/v1/games/chess/"), 404, "not_found")
    assert_error(client.delete("/api/v1/games/"), 405, "method_not_allowed")
    assert_error(client.get("/api/v1/games/", HTTP_ACCEPT="text/html"), 406, "not_acceptable")


def test_throttling(world: World, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": "5/minute"},
    }
    anonymous, author = world.client("anonymous"), world.client("author")
    for _ in range(3):
        assert anonymous.get("/api/v1/games/").status_code == 200
    response = anonymous.get("/api/v1/games/")
    assert_error(response, 429, "throttled")
    assert int(response["Retry-After"]) > 0
    for _ in range(5):
        assert author.get("/api/v1/games/").status_code == 200
    assert_error(author.get("/api/v1/games/"), 429, "throttled")


def test_a_client_cannot_pick_its_throttle_identity(world: World, settings: Any) -> None:
    # No proxy in front (TAPIS_NUM_PROXIES=0, the default): X-Forwarded-For is the client's
    # own say, and the throttle counts by the connection's address.
    assert settings.REST_FRAMEWORK["NUM_PROXIES"] == 0
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "3/minute", "user": "5/minute"},
    }
    anonymous = world.client("anonymous")
    for n in range(3):
        response = anonymous.get("/api/v1/games/", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
        assert response.status_code == 200
    response = anonymous.get("/api/v1/games/", HTTP_X_FORWARDED_FOR="198.51.100.99")
    assert_error(response, 429, "throttled")
    # Behind one proxy, the address it saw (the last of X-Forwarded-For) is the client.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    response = anonymous.get("/api/v1/games/", HTTP_X_FORWARDED_FOR="10.0.0.1, 203.0.113.7")
    assert response.status_code == 200


def test_errors_before_the_view_are_json_too(world: World) -> None:
    response = world.client("anonymous").get("/api/v1/games/", HTTP_HOST="evil.example")
    assert_error(response, 400, "bad_request")
    assert "html" in APIClient().get("/", HTTP_HOST="evil.example")["Content-Type"]


def test_a_server_error_keeps_the_shape(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr("tournaments.selectors.tournament_progress", broken)
    client = world.client("anonymous")
    client.raise_request_exception = False
    response = client.get(f"/api/v1/tournaments/{world.running.pk}/progress/")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "server_error"


@pytest.mark.parametrize("path", ["/api/v1/games/", "/api/v2/", "/api/v1/games/nope/"])
def test_an_overlong_url(world: World, path: str) -> None:
    response = world.client("anonymous").get(path, {"q": "x" * MAX_URL_LENGTH})
    assert str(MAX_URL_LENGTH) in assert_error(response, 414, "uri_too_long")["message"]
    assert world.client("anonymous").get(path, {"q": "x" * 100}).status_code in (200, 404)
    outside = world.client("anonymous").get("/", {"q": "x" * MAX_URL_LENGTH})
    assert outside.status_code == 414
    assert outside["Content-Type"].startswith("text/plain")


def test_the_docs_page_is_throttled_in_json(world: World, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "user": None},
    }
    client = world.client("anonymous")
    for _ in range(2):
        assert client.get("/api/v1/docs/").status_code == 200
    assert_error(client.get("/api/v1/docs/"), 429, "throttled")
    assert_error(client.get("/api/v1/schema/"), 429, "throttled")
    assert_error(client.get("/api/v2/"), 429, "throttled")


@pytest.mark.parametrize(
    ("query", "accept"),
    [
        ("format=bogus", "*/*"),
        ("", "text/html"),
        ("format=json", "application/xml"),
    ],
)
def test_schema_errors_are_json(world: World, query: str, accept: str) -> None:
    response = world.client("anonymous").get(f"/api/v1/schema/?{query}", HTTP_ACCEPT=accept)
    assert_error(response, 404 if "bogus" in query else 406)


@pytest.mark.parametrize(
    "version", ["%00", "%0d%0a", "%E2%80%A8", "a%22%3B%20filename%3Devil.html", "2", "%ff"]
)
def test_the_schema_has_one_version(world: World, version: str) -> None:
    client = world.client("anonymous")
    pinned = client.get("/api/v1/schema/?format=json")
    response = client.get(f"/api/v1/schema/?format=json&version={version}&lang={version}")
    assert response.status_code == 200
    assert response.json()["info"]["version"] == "1"
    assert response.json() == pinned.json()
    assert response["Content-Disposition"] == 'inline; filename="Tapis API (1).json"'
    docs = client.get(f"/api/v1/docs/?version={version}&lang={version}")
    assert docs.status_code == 200
    assert b"evil" not in docs.content
    assert b'"/api/v1/schema/"' in docs.content


def test_an_error_is_never_labelled_octet_stream(world: World) -> None:
    client = world.client("other")
    code = f"/api/v1/bots/{world.pending.pk}/versions/1/code/"
    for accept in ("application/octet-stream", "application/octet-stream, */*", "*/*"):
        response = client.get(code, HTTP_ACCEPT=accept)
        assert_error(response, 403, "permission_denied")
    missing = world.client("author").get(
        f"/api/v1/bots/{world.pending.pk}/versions/99/code/",
        HTTP_ACCEPT="application/octet-stream",
    )
    assert_error(missing, 404, "not_found")
    # The file itself still comes as what it is.
    ok = world.client("author").get(code, HTTP_ACCEPT="application/octet-stream")
    assert ok["Content-Type"] == "application/octet-stream"


@pytest.mark.parametrize(
    ("filename", "ascii_name"),
    [
        ("王牌.py", "__.py"),
        ("évité.py", "evite.py"),
        ("bot;x.py", "bot_x.py"),
    ],
)
def test_download_names_follow_rfc_6266(world: World, filename: str, ascii_name: str) -> None:
    response = upload(world, SimpleUploadedFile(filename, BOT_FILE.read_bytes()))
    assert response.status_code == 201, response.json()
    number = response.json()["number"]
    code = world.client("author").get(f"/api/v1/bots/{world.bot.pk}/versions/{number}/code/")
    assert code.status_code == 200
    name = response.json()["filename"]
    assert code["Content-Disposition"] == (
        f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
    )
    # What a client that reads filename* (RFC 6266: all current browsers) makes of it.
    assert unquote(code["Content-Disposition"].rpartition("''")[2]) == name == filename


def test_the_log_download_name(world: World) -> None:
    log = world.client("anonymous").get(f"/api/v1/tables/{world.table_done.pk}/log/")
    assert log["Content-Disposition"] == f'attachment; filename="table-{world.table_done.pk}.json"'


def test_gunicorn_answers_an_overlong_request_line_in_json(tmp_path: Path) -> None:
    """Production's web server: Tapis's 414 up to gunicorn's limit, the worker's beyond it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {
        k: v for k, v in os.environ.items() if k not in django_settings.ENVIRONMENT_VARIABLES
    }
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment["TAPIS_VAR_DIR"] = str(tmp_path / "var")
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi:application",
            "--bind", f"127.0.0.1:{port}",
            "--worker-class", "config.gunicorn.ThreadWorker",
            "--workers", "1",
            "--threads", "2",
        ],
        cwd=Path(__file__).resolve().parents[2],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip

    def ask(target: str) -> tuple[int, dict[str, Any]]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            connection.request("GET", target)
            response = connection.getresponse()
            assert response.getheader("Content-Type") == "application/json"
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "gunicorn did not start"
                time.sleep(0.2)
        for target in ("/api/v1/games/?q=" + "x" * 3000, "/api/v1/games/?q=" + "x" * 5000):
            status, body = ask(target)
            assert status == 414
            assert body["error"]["code"] == "uri_too_long"
            assert set(body["error"]) == {"code", "message", "fields"}
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize(
    "name",
    ["bot.py", "王牌.py", 'a"; filename=evil.html', "a\r\nSet-Cookie: x=1.py", "..\\..\\x.py", ""],
)
def test_a_download_name_is_one_parameter(name: str) -> None:
    value = content_disposition(name, default="bot")
    assert value.isprintable()
    assert value.isascii()
    # One quoted ASCII name (no quote, backslash or ';' inside), then at most filename*.
    match = re.fullmatch(r"attachment; filename=\"([^\"\\;]+)\"(; filename\*=UTF-8''(\S+))?", value)
    assert match, value
    if match[3]:
        assert "\r" not in unquote(match[3])
        assert "\\" not in unquote(match[3])


@pytest.mark.parametrize("module", [downloads, parsers, health])
def test_the_examples_in_the_docstrings(module: Any) -> None:
    assert doctest.testmod(module).failed == 0
