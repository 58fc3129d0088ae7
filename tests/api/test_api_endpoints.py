"""What the endpoints answer: accounts, games, bots, tournaments, fair dealing, hidden
information, replays, audits and rankings."""

from __future__ import annotations

import hashlib
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.http import HttpRequest
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

import games
from tests.api.conftest import (
    BOT_FILE,
    World,
    assert_error,
    builtin_bot,
    enter,
    make_tournament,
    make_user,
)
from tournaments import services
from tournaments.models import Deal, Table, Tournament

# --- accounts -----------------------------------------------------------------------------------


def test_a_token_from_username_and_password_then_revoked(world: World) -> None:
    client = APIClient()
    response = client.post(
        "/api/v1/auth/token/",
        {"username": "author", "password": "author-secret-pw"},
        format="json",
    )
    assert response.status_code == 200
    token = response.json()["token"]
    assert response.json()["username"] == "author"
    # Shown once: asking again makes another token, and both work.
    again = client.post(
        "/api/v1/auth/token/", {"username": "author", "password": "author-secret-pw"}
    ).json()["token"]
    assert again != token
    assert APIClient(HTTP_AUTHORIZATION=f"Token {again}").get("/api/v1/auth/me/").status_code == 200

    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    me = client.get("/api/v1/auth/me/").json()
    assert me == {
        "id": me["id"],
        "username": "author",
        "is_staff": False,
        "is_organiser": False,
    }
    assert client.delete("/api/v1/auth/token/").status_code == 204
    assert_error(client.get("/api/v1/auth/me/"), 401, "authentication_failed")
    # Revoking revokes every token of the user.
    revoked = APIClient(HTTP_AUTHORIZATION=f"Token {again}").get("/api/v1/auth/me/")
    assert_error(revoked, 401, "authentication_failed")

    fresh = APIClient().post(
        "/api/v1/auth/token/", {"username": "author", "password": "author-secret-pw"}
    )
    assert fresh.json()["token"] != token


def test_the_browser_session_works_too(world: World) -> None:
    client = APIClient(enforce_csrf_checks=True)
    # With a request, as every login must have (axes counts failures per address).
    assert client.login(request=HttpRequest(), username="organiser", password="organiser-secret-pw")
    assert client.get("/api/v1/auth/me/").json()["is_organiser"] is True
    # Writes through a session need the CSRF token, as any form of the site.
    response = client.post("/api/v1/bots/", {"name": "x", "game": "hearts"}, format="json")
    assert_error(response, 403, "permission_denied")


def test_signup_gives_a_working_token(world: World, settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True
    response = APIClient().post(
        "/api/v1/auth/signup/",
        {"username": "newcomer", "password": "a-long-Passw0rd!", "email": "n@example.org"},
        format="json",
    )
    assert response.status_code == 201
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert client.get("/api/v1/auth/me/").json()["username"] == "newcomer"


# --- games --------------------------------------------------------------------------------------


def test_games_list_presets_and_options_with_their_types(world: World) -> None:
    body = APIClient().get("/api/v1/games/").json()
    games = {g["name"]: g for g in body["results"]}
    assert {"hearts", "roi", "dutch"} <= set(games)
    hearts = games["hearts"]
    assert hearts["default_preset"] == "whisthub"
    assert "whisthub" in [p["name"] for p in hearts["presets"]]
    options = {o["name"]: o for o in hearts["options"]}
    assert options["pass_count"]["type"] == "int"
    assert (options["pass_count"]["minimum"], options["pass_count"]["maximum"]) == (1, 5)
    assert options["td_bonus"]["type"] == "bool"
    assert options["td_bonus"]["label"] == "TD bonus"  # for people; its key stays the name
    assert "self-minus-26" in options["moon"]["choices"]
    assert options["moon"]["allowed"].startswith("one of")


# --- bots ---------------------------------------------------------------------------------------


def test_bots_versions_and_code(world: World) -> None:
    author = world.client("author")
    bots = author.get("/api/v1/bots/").json()
    assert [b["name"] for b in bots["results"]] == ["alpha", "beta"]
    created = author.post(
        "/api/v1/bots/", {"name": "delta", "game": "roi", "description": "mine"}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["owner"] == "author"

    data = BOT_FILE.read_bytes()
    uploaded = author.post(
        f"/api/v1/bots/{created.json()['id']}/versions/",
        {"file": SimpleUploadedFile("delta.py", data)},
        format="multipart",
    ).json()
    assert uploaded["status"] == "pending"
    assert uploaded["sha256"] == hashlib.sha256(data).hexdigest()
    assert uploaded["report"] == {}

    versions = author.get(f"/api/v1/bots/{created.json()['id']}/versions/").json()
    assert [v["number"] for v in versions["results"]] == [1]
    assert "report" not in versions["results"][0]

    code = author.get(f"/api/v1/bots/{created.json()['id']}/versions/1/code/")
    assert code.status_code == 200
    assert code["Content-Type"] == "application/octet-stream"
    assert 'filename="delta.py"' in code["Content-Disposition"]
    assert code.content == data

    ready = author.get(f"/api/v1/bots/{world.bot.pk}/versions/1/").json()
    assert ready["status"] == "ready"
    assert ready["report"]["ok"] is True


# --- tournaments --------------------------------------------------------------------------------


def test_tournament_list_filters_and_ordering(world: World) -> None:
    client = world.client("anonymous")
    names = [t["name"] for t in client.get("/api/v1/tournaments/").json()["results"]]
    assert names == ["Finished cup", "Running cup", "Open cup"]  # newest first; no draft
    by_name = client.get("/api/v1/tournaments/?ordering=name").json()["results"]
    assert [t["name"] for t in by_name] == ["Finished cup", "Open cup", "Running cup"]
    running = client.get("/api/v1/tournaments/?status=running").json()
    assert [t["name"] for t in running["results"]] == ["Running cup"]
    assert client.get("/api/v1/tournaments/?game=roi").json()["count"] == 0
    organiser = world.client("organiser").get("/api/v1/tournaments/?status=draft").json()
    assert [t["name"] for t in organiser["results"]] == ["Draft cup"]
    page = client.get("/api/v1/tournaments/?page_size=2").json()
    assert (page["count"], len(page["results"])) == (3, 2)
    assert "page=2" in page["next"]


def test_an_organiser_creates_opens_and_runs_a_tournament(world: World) -> None:
    organiser = world.client("organiser")
    created = organiser.post(
        "/api/v1/tournaments/",
        {
            "name": "Spring cup",
            "game": "hearts",
            "preset": "whisthub",
            "options": {"target_score": 50},
            "rounds": 2,
            "deals_per_table": 3,
            "place_points": [3, 2, 1, 0],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["status"], body["options"], body["place_points"]) == (
        "draft",
        {"target_score": 50},
        [3, 2, 1, 0],
    )
    assert body["seed"] is None
    assert len(body["commitment"]) == 64
    pk = body["id"]
    assert organiser.post(f"/api/v1/tournaments/{pk}/open/").json()["status"] == "open"
    for role in ("author", "other"):
        bot = world.bot if role == "author" else world.other_bot
        version = bot.versions.get(number=1)
        entered = world.client(role).post(
            f"/api/v1/tournaments/{pk}/entries/", {"version": version.pk}, format="json"
        )
        assert entered.status_code == 201, entered.json()
    entries = world.client("anonymous").get(f"/api/v1/tournaments/{pk}/entries/").json()
    assert sorted(e["bot_name"] for e in entries["results"]) == ["alpha", "gamma"]
    started = organiser.post(f"/api/v1/tournaments/{pk}/start/").json()
    assert (started["status"], started["current_round"], started["seed"]) == ("running", 1, None)
    progress = world.client("anonymous").get(f"/api/v1/tournaments/{pk}/progress/").json()
    assert progress["tables_total"] == 2  # one table a round, two rounds
    assert progress["tables_pending"] == 1
    assert progress["finished"] is False
    cancelled = organiser.post(f"/api/v1/tournaments/{pk}/cancel/").json()
    assert cancelled["status"] == "cancelled"


def test_fair_dealing_commitment_first_seed_at_the_end(world: World) -> None:
    client = world.client("anonymous")
    running = client.get(f"/api/v1/tournaments/{world.running.pk}/").json()
    assert running["seed"] is None
    assert running["commitment"] == world.running.commitment
    finished = client.get(f"/api/v1/tournaments/{world.finished.pk}/").json()
    assert finished["seed"] is not None
    assert hashlib.sha256(finished["seed"].encode()).hexdigest() == finished["commitment"]
    assert finished["seed_revealed_at"] is not None


def test_standings_rounds_and_tables(world: World) -> None:
    client = world.client("anonymous")
    pk = world.finished.pk
    standings = client.get(f"/api/v1/tournaments/{pk}/standings/").json()["results"]
    assert [s["rank"] for s in standings] == [1, 2, 3, 4]
    assert {s["bot_name"] for s in standings} == {"alpha", "gamma", "extra0", "extra1"}
    assert all(s["tables"] == 1 for s in standings)
    assert sum(s["points"] for s in standings) == 4 + 2 + 1 + 0  # one four-seat table
    assert standings[0]["points"] == max(s["points"] for s in standings)
    rounds = client.get(f"/api/v1/tournaments/{pk}/rounds/").json()["results"]
    assert [(r["number"], r["status"], r["tables"]) for r in rounds] == [(1, "done", 1)]
    tables = client.get(f"/api/v1/tournaments/{pk}/tables/?round=1").json()["results"]
    assert len(tables) == 1
    assert [s["position"] for s in tables[0]["seats"]] == [0, 1, 2, 3]
    assert client.get(f"/api/v1/tournaments/{pk}/tables/?round=2").json()["count"] == 0


def test_a_finished_table_shows_its_deals_and_log(world: World) -> None:
    client = world.client("anonymous")
    table = client.get(f"/api/v1/tables/{world.table_done.pk}/").json()
    assert table["visible"] is True
    assert [d["index"] for d in table["deals"]] == [0, 1]
    assert all(sum(d["points"]) in (26, 78) for d in table["deals"])  # 78: a shot moon
    assert table["results"]["places"] == [s["place"] for s in table["seats"]]
    log = client.get(f"/api/v1/tables/{world.table_done.pk}/log/")
    assert log["Content-Disposition"].startswith("attachment")
    body = log.json()
    assert (body["format"], body["version"], body["game"]) == ("tapis-replay", 1, "hearts")
    assert len(body["deals"]) == 2
    assert games.verify(body).ok  # what `tapis verify` says of the download


def test_a_deal_replay_has_hands_passes_tricks_times_and_points(world: World) -> None:
    replay = world.client("anonymous").get(f"/api/v1/deals/{world.deal_done.pk}/").json()
    assert (replay["game"], replay["preset"], replay["index"]) == ("hearts", "whisthub", 0)
    assert replay["options"]["pass_count"] == 3  # every option, as played
    assert replay["options"]["fixed_deals"] == 2
    assert len(replay["hands"]) == 4
    assert all(len(hand) == 13 for hand in replay["hands"])
    assert len(replay["passes"]) == 4  # deal 0 passes left
    assert all(len(cards) == 3 for cards in replay["passes"])
    assert len(replay["tricks"]) == 13
    for trick in replay["tricks"]:
        assert len(trick["cards"]) == 4
        assert trick["winner"] in range(4)
    assert replay["tricks"][0]["cards"][0] == "2C"
    assert len(replay["decisions"]) == 4 + 52  # four passes, then 52 cards
    assert all(d["seconds"] >= 0 for d in replay["decisions"])
    assert sum(replay["points"]) in (26, 78)
    assert [s["position"] for s in replay["seats"]] == [0, 1, 2, 3]
    assert replay["faults"] == []


def test_an_audit_replays_the_deal_through_the_engine(world: World) -> None:
    audit = world.client("anonymous").get(f"/api/v1/deals/{world.deal_done.pk}/audit/").json()
    checks = audit.pop("checks")
    assert audit == {
        "deal": world.deal_done.pk,
        "table": world.table_done.pk,
        "index": 0,
        "ok": True,
        "problems": [],
    }
    assert [(c["name"], c["verdict"]) for c in checks] == [
        (name, "passed")
        for name in ("log", "seed", "actions", "points", "tricks", "decisions", "passes")
    ]
    # A tampered row is caught, by its own check.
    Deal.objects.filter(pk=world.deal_done.pk).update(points=[26, 0, 0, 0])
    audit = world.client("anonymous").get(f"/api/v1/deals/{world.deal_done.pk}/audit/").json()
    assert audit["ok"] is False
    assert audit["problems"]
    failed = [c for c in audit["checks"] if c["verdict"] == "failed"]
    assert [c["name"] for c in failed] == ["points"]
    assert failed[0]["problems"] == audit["problems"]


def test_nothing_of_a_round_in_play_is_shown(world: World) -> None:
    """Duplicate play: every table of a round plays the same cards, so a finished table's
    deals stay hidden until the whole round is over."""
    organiser = world.users["organiser"]
    assert organiser is not None
    cup = make_tournament(organiser, name="Duplicate cup", duplicate=True)
    for i in range(5):
        enter(cup, builtin_bot(make_user(f"dup{i}"), f"dup{i}"))
    services.tournament_start(tournament=cup)
    first, second = Table.objects.filter(tournament=cup).order_by("number")
    services.table_run(table_id=first.pk, worker="test", token="test-1")
    first.refresh_from_db()
    assert first.status == Table.Status.DONE
    deal = Deal.objects.filter(table=first).order_by("index")[0]

    client = world.client("staff")  # not even staff
    table = client.get(f"/api/v1/tables/{first.pk}/").json()
    assert (table["status"], table["visible"], table["deals"], table["faults"]) == (
        "done",
        False,
        [],
        [],
    )
    assert_error(client.get(f"/api/v1/deals/{deal.pk}/"), 403, "hidden")
    assert_error(client.get(f"/api/v1/deals/{deal.pk}/audit/"), 403, "hidden")
    assert_error(client.get(f"/api/v1/tables/{first.pk}/log/"), 403, "hidden")
    assert client.get(f"/api/v1/tournaments/{cup.pk}/").json()["seed"] is None

    services.table_run(table_id=second.pk, worker="test", token="test-2")
    assert client.get(f"/api/v1/tables/{first.pk}/").json()["visible"] is True
    assert client.get(f"/api/v1/deals/{deal.pk}/").status_code == 200


def test_a_table_in_play_shows_its_seats_only(world: World) -> None:
    table = world.client("anonymous").get(f"/api/v1/tables/{world.table_running.pk}/").json()
    assert table["status"] in ("pending", "running")
    assert (table["visible"], table["deals"], table["results"]) == (False, [], None)
    assert len(table["seats"]) == 4


# --- rankings -----------------------------------------------------------------------------------


def test_rankings_and_a_bots_rating_history(world: World) -> None:
    client = world.client("anonymous")
    board = client.get("/api/v1/rankings/?game=hearts").json()["results"]
    assert [r["rank"] for r in board] == [1, 2, 3, 4]
    assert [r["ordinal"] for r in board] == sorted((r["ordinal"] for r in board), reverse=True)
    assert {r["family"] for r in board} == {"hearts/whisthub"}
    for row in board:
        assert abs(row["ordinal"] - (row["mu"] - 3 * row["sigma"])) < 1e-9
        assert row["tables"] == 1
    assert client.get("/api/v1/rankings/?game=hearts&preset=classic-fr").json()["count"] == 0
    history = client.get(f"/api/v1/bots/{world.bot.pk}/ratings/").json()["results"]
    assert len(history) == 1
    assert history[0]["tournament"] == world.finished.pk
    assert history[0]["family"] == "hearts/whisthub"
    same = client.get(f"/api/v1/bots/{world.bot.pk}/ratings/?preset=whisthub").json()
    assert same["count"] == 1


def test_the_schema_and_the_docs(world: World) -> None:
    client = world.client("anonymous")
    schema = client.get("/api/v1/schema/?format=json").json()
    assert schema["openapi"].startswith("3.")
    assert "Error" in schema["components"]["schemas"]
    docs = client.get("/api/v1/docs/")
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()
    assert Tournament.objects.count() == 4


def test_standings_follow_the_tables_then_are_final(world: World) -> None:
    client = world.client("anonymous")
    url = f"/api/v1/tournaments/{world.running.pk}/standings/"
    before = client.get(url).json()["results"]
    assert all(row["tables"] == 0 for row in before)
    services.table_run(table_id=world.table_running.pk, worker="test", token="test")
    after = client.get(url).json()["results"]  # the cached standings were not reused
    assert all(row["tables"] == 1 for row in after)
    assert client.get(f"/api/v1/tournaments/{world.running.pk}/").json()["status"] == "finished"
    with CaptureQueriesContext(connection) as queries:
        final = client.get(url).json()["results"]
    assert final == after
    assert len(queries) == 0  # final standings come from the cache
    assert "max-age" in client.get(url)["Cache-Control"]
    assert "Cache-Control" not in client.get(f"/api/v1/tournaments/{world.open.pk}/standings/")
