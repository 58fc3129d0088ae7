"""The statistics endpoints against PostgreSQL: the standings' confidence, the crosstable and
what a tournament's settings resolve (tournaments/selectors/statistics.py), checked against
the pure functions of tournaments/statistics/ on the same rows; nothing of a table or a
duplicate round still in play counts; bad input gets the documented error shape; the query
counts do not grow with the data."""

from __future__ import annotations

import math
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api import caching
from tests.api.conftest import (
    ROLES,
    World,
    assert_error,
    builtin_bot,
    client_for,
    enter,
    make_tournament,
    make_user,
    ready_version,
)
from tournaments import selectors, services
from tournaments.models import Match, Table, Tournament
from tournaments.statistics.crosstable import crosstable
from tournaments.statistics.resolution import resolution, rounds_needed
from tournaments.statistics.spread import preset_spread
from tournaments.statistics.sprt import MIN_DEALS
from tournaments.statistics.standings import standings_with_confidence


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _played(world: World, *, duplicate: bool, entries: int, rounds: int, deals: int) -> Tournament:
    organiser = world.users["organiser"]
    assert organiser is not None
    tag = f"{'d' if duplicate else 'n'}{entries}x{rounds}x{deals}"
    cup = make_tournament(
        organiser, name=f"Cup {tag}", duplicate=duplicate, rounds=rounds, deals_per_table=deals
    )
    kinds = ("heuristic", "lowest", "random")
    for i in range(entries):
        enter(cup, builtin_bot(make_user(f"{tag}-{i}"), f"{tag}-{i}", kinds[i % 3]))
    services.tournament_start(tournament=cup)
    services.tournament_run_here(tournament=cup)
    cup.refresh_from_db()
    assert cup.status == Tournament.Status.FINISHED
    return cup


def test_standings_carry_each_entrys_interval_as_computed_from_the_stored_rows(
    world: World,
) -> None:
    cup = _played(world, duplicate=False, entries=6, rounds=3, deals=4)
    expected = standings_with_confidence(selectors.tournament_results(tournament=cup)).entries
    assert len(expected) == 6
    rows = world.client("anonymous").get(f"/api/v1/tournaments/{cup.pk}/standings/").json()
    by_entry = {r["entry"]: r["confidence"] for r in rows["results"]}
    for line in expected:
        got = by_entry[line.entry]
        assert got["mean"] == pytest.approx(line.mean)
        assert got["low"] == pytest.approx(line.low)
        assert got["high"] == pytest.approx(line.high)
        assert got["low"] < got["mean"] < got["high"]
        assert (got["deals"], got["blocks"], got["rank"]) == (12, 3, line.rank)
        assert got["settled"] is line.settled
        assert sum(got["rank_probabilities"]) == pytest.approx(1.0)
        assert got["rank_probability"] == pytest.approx(line.rank_probabilities[line.rank - 1])
    # The scores are relative to each table's average: over all seats they sum to 0, and the
    # house seats of the second table take the rest.
    results = selectors.tournament_results(tournament=cup)
    assert math.fsum(x for b in results.blocks for s in b.seats for x in s.scores) == (
        pytest.approx(0.0, abs=1e-9)
    )


def test_one_round_gives_no_interval_and_its_ends_are_sent_as_null(world: World) -> None:
    rows = world.client("anonymous").get(f"/api/v1/tournaments/{world.finished.pk}/standings/")
    lines = [r["confidence"] for r in rows.json()["results"]]
    assert lines
    assert all(c["blocks"] == 1 and c["low"] is None and c["high"] is None for c in lines)
    assert all(isinstance(c["mean"], float) for c in lines)


def test_nothing_of_a_table_in_play_counts(world: World) -> None:
    rows = world.client("staff").get(f"/api/v1/tournaments/{world.running.pk}/standings/")
    assert [r["confidence"] for r in rows.json()["results"]] == [None] * 4
    table = world.client("staff").get(f"/api/v1/tournaments/{world.running.pk}/crosstable/")
    assert table.json()["pairs"] == []


def test_nothing_of_a_duplicate_round_in_play_counts(world: World) -> None:
    organiser = world.users["organiser"]
    assert organiser is not None
    cup = make_tournament(organiser, name="Half duplicate", duplicate=True, deals_per_table=2)
    for i in range(5):
        enter(cup, builtin_bot(make_user(f"half{i}"), f"half{i}"))
    services.tournament_start(tournament=cup)
    first, second = Table.objects.filter(tournament=cup).order_by("number")
    services.table_run(table_id=first.pk, worker="test", token="test-1")
    for role in ROLES:  # staff included
        client = world.client(role)
        rows = client.get(f"/api/v1/tournaments/{cup.pk}/standings/").json()["results"]
        assert [r["confidence"] for r in rows] == [None] * 5
        assert client.get(f"/api/v1/tournaments/{cup.pk}/crosstable/").json()["pairs"] == []
    services.table_run(table_id=second.pk, worker="test", token="test-2")
    client = world.client("anonymous")
    rows = client.get(f"/api/v1/tournaments/{cup.pk}/standings/").json()["results"]
    assert all(r["confidence"]["deals"] == 2 for r in rows)
    pairs = client.get(f"/api/v1/tournaments/{cup.pk}/crosstable/").json()["pairs"]
    assert {p["comparison"] for p in pairs} == {"table", "cards"}


def test_the_crosstable_is_the_direct_computation_on_the_stored_rows(world: World) -> None:
    cup = _played(world, duplicate=True, entries=8, rounds=2, deals=3)
    expected = crosstable(selectors.tournament_results(tournament=cup))
    response = world.client("other").get(f"/api/v1/tournaments/{cup.pk}/crosstable/")
    assert response.status_code == 200
    assert response["Cache-Control"].startswith("public")
    body = response.json()
    assert (body["tournament"], body["duplicate"], body["final"]) == (cup.pk, True, True)
    assert body["confidence"] == 0.95
    assert len(body["entries"]) == 8
    assert {e["owner"] for e in body["entries"]} == {f"d8x2x3-{i}" for i in range(8)}
    assert len(body["pairs"]) == len(expected.pairs) > 0
    for got, pair in zip(body["pairs"], expected.pairs, strict=True):
        assert (got["a"], got["b"], got["comparison"]) == (pair.a, pair.b, pair.comparison.value)
        assert (got["deals"], got["blocks"], got["significant"]) == (
            pair.deals,
            pair.blocks,
            pair.significant,
        )
        assert got["mean"] == pytest.approx(pair.mean)
        assert got["low"] == pytest.approx(_finite(pair.low))
        assert got["high"] == pytest.approx(_finite(pair.high))
        assert got["p_value"] == pytest.approx(pair.p_value)
    # Pairs on the same cards: the two entries in each seat of the two tables of a round, on
    # its 3 deals: 4 seats x 2 rounds x 3 deals, over 4 to 8 pairs (a pair may hold the same
    # seat again in the second round: 6 deals; so "some pair has 3" is not a given).
    cards = [p["deals"] for p in body["pairs"] if p["comparison"] == "cards"]
    assert sum(cards) == 4 * 2 * 3
    assert set(cards) <= {3, 6}


def test_a_drafts_crosstable_is_not_found_for_others(world: World) -> None:
    url = f"/api/v1/tournaments/{world.draft.pk}/crosstable/"
    assert_error(world.client("other").get(url), 404, "not_found")
    assert world.client("organiser").get(url).status_code == 200


def test_final_figures_are_computed_once(world: World) -> None:
    cup = world.finished
    # Computed when the tournament finished and stored (tests/tournaments/
    # test_tournament_summary.py), then kept in the cache once read.
    assert selectors.tournament_statistics(tournament=cup).stored
    with CaptureQueriesContext(connection) as queries:
        selectors.tournament_statistics(tournament=cup)
    assert len(queries) == 0


def test_resolution_says_what_the_settings_tell_apart(world: World) -> None:
    url = (
        "/api/v1/resolution/?game=hearts&preset=classic-fr&entries=16&rounds=5"
        "&deals_per_table=8&duplicate=true&difference=1.5"
    )
    body = world.client("anonymous").get(url).json()
    spread = preset_spread("hearts", "classic-fr")
    expected = resolution(
        entries=16, rounds=5, deals_per_table=8, table_size=4, duplicate=True, spread=spread
    )
    normal = resolution(
        entries=16, rounds=5, deals_per_table=8, table_size=4, duplicate=False, spread=spread
    )
    assert body["difference"] == pytest.approx(expected.difference)
    assert body["half_width"] == pytest.approx(expected.half_width)
    assert body["deals_per_entry"] == 40
    assert (body["table_size"], body["preset"], body["confidence"]) == (4, "classic-fr", 0.95)
    assert body["normal"]["difference"] == pytest.approx(normal.difference)
    assert body["narrowing"] == pytest.approx(expected.half_width / normal.half_width)
    assert body["narrowing"] < 1  # measured: duplicate play narrows the intervals in Hearts
    assert body["spread"]["house_duplicate"] == spread.duplicate
    needed = rounds_needed(
        difference=1.5, entries=16, deals_per_table=8, table_size=4, duplicate=True, spread=spread
    )
    assert body["needed"] == {
        "difference": 1.5,
        "rounds": needed.deals_per_entry // 8,
        "deals_per_entry": needed.deals_per_entry,
    }
    assert (
        resolution(
            entries=16,
            rounds=body["needed"]["rounds"],
            deals_per_table=8,
            table_size=4,
            duplicate=True,
            spread=spread,
        ).difference
        <= 1.5
    )


def test_resolution_reads_the_finished_tournaments_of_the_preset(world: World) -> None:
    url = "/api/v1/resolution/?game=hearts&preset=whisthub&entries=8&rounds=4&deals_per_table=8"
    before = world.client("anonymous").get(url).json()
    assert before["spread"]["tournament_table"] is None  # too few scores yet
    _played(world, duplicate=False, entries=12, rounds=3, deals=8)  # 288 scores of entries
    after = world.client("anonymous").get(url).json()
    assert after["spread"]["tournaments"] >= 2
    assert after["spread"]["tournament_table"] > 0
    assert after["normal"]["spread"] == pytest.approx(after["spread"]["tournament_table"])
    assert after["difference"] != before["difference"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("game=hearts&entries=1&rounds=3&deals_per_table=8", "entries"),
        ("game=hearts&entries=8&rounds=3", "deals_per_table"),
        ("game=hearts&entries=8&rounds=3&deals_per_table=8&difference=-1", "difference"),
        ("game=hearts&entries=8&rounds=3&deals_per_table=8&duplicate=maybe", "duplicate"),
        ("game=hearts&entries=8&rounds=3&deals_per_table=8&colour=red", "colour"),
    ],
)
def test_resolution_refuses_bad_input_with_the_error_shape(
    world: World, query: str, field: str
) -> None:
    error = assert_error(world.client("anonymous").get(f"/api/v1/resolution/?{query}"), 400)
    assert field in error["fields"], error


@pytest.mark.parametrize(
    "query",
    [
        "game=chess&entries=8&rounds=3&deals_per_table=8",
        "game=hearts&preset=nope&entries=8&rounds=3&deals_per_table=8",
        "game=hearts&entries=4&rounds=3&deals_per_table=8&duplicate=true",  # one table
        "game=hearts&entries=8&rounds=1&deals_per_table=8",  # one table per entry
    ],
)
def test_resolution_refuses_settings_it_cannot_answer(world: World, query: str) -> None:
    error = assert_error(world.client("anonymous").get(f"/api/v1/resolution/?{query}"), 400)
    assert error["message"]


def test_the_statistics_are_in_the_schema(world: World) -> None:
    schema = world.client("anonymous").get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    body = schema.json()
    assert "/api/v1/tournaments/{id}/crosstable/" in body["paths"]
    assert "/api/v1/resolution/" in body["paths"]
    parameters = {p["name"] for p in body["paths"]["/api/v1/resolution/"]["get"]["parameters"]}
    assert {"game", "entries", "rounds", "deals_per_table", "duplicate", "difference"} <= parameters
    standing = body["components"]["schemas"]["Standing"]["properties"]
    assert "confidence" in standing


def test_query_counts_do_not_grow_with_the_data(world: World, settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": None, "user": None},
    }
    counts = []
    for entries, rounds in ((5, 2), (13, 4)):
        cup = _played(world, duplicate=False, entries=entries, rounds=rounds, deals=2)
        client = client_for(None)
        urls = [
            f"/api/v1/tournaments/{cup.pk}/standings/",
            f"/api/v1/tournaments/{cup.pk}/crosstable/",
            "/api/v1/resolution/?game=hearts&entries=8&rounds=3&deals_per_table=8",
        ]
        sizes = []
        for url in urls:
            cache.clear()
            caching.clear()
            with CaptureQueriesContext(connection) as queries:
                assert client.get(url).status_code == 200
            sizes.append(len(queries))
        counts.append(sizes)
    assert counts[0] == counts[1]
    assert max(counts[0]) <= 12, counts


# ---------------------------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------------------------


def test_an_author_starts_a_match_and_follows_it_to_its_verdict(world: World) -> None:
    client = world.client("author")
    version = ready_version(world.bot)  # the heuristic player
    response = client.post(
        "/api/v1/matches/",
        {"candidate": version.pk, "baseline_builtin": "random", "d1": 2.0, "max_deals": 256},
        format="json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["status"], body["verdict"], body["deals"]) == ("running", "continue", 0)
    assert (body["low"], body["high"], body["llr"]) == (None, None, 0.0)
    assert body["candidate"] == {
        "id": version.pk,
        "bot": world.bot.pk,
        "bot_name": "alpha",
        "number": 1,
        "name": "alpha v1",
    }
    assert (body["baseline"], body["baseline_builtin"]) == (None, "random")
    assert (body["d0"], body["d1"], body["alpha"], body["beta"]) == (0.0, 2.0, 0.05, 0.05)
    assert body["upper_bound"] == pytest.approx(math.log(0.95 / 0.05))
    assert body["batches_in_flight"] == 1
    assert body["expected_deals"] > 0

    services.match_run_here(match=Match.objects.get(pk=body["id"]))
    done = client.get(f"/api/v1/matches/{body['id']}/").json()
    assert (done["status"], done["verdict"]) == ("decided", "accept_h1")
    assert done["deals"] >= done["min_deals"] == MIN_DEALS
    assert done["low"] < done["mean"] < done["high"]
    assert done["llr"] >= done["upper_bound"]
    assert done["finished_at"] is not None
    listed = client.get("/api/v1/matches/").json()
    assert [m["id"] for m in listed["results"]] == [body["id"]]
    assert world.client("other").get("/api/v1/matches/").json()["results"] == []
    assert_error(world.client("other").get(f"/api/v1/matches/{body['id']}/"), 404, "not_found")
    error = assert_error(client.post(f"/api/v1/matches/{body['id']}/cancel/"), 409, "status")
    assert "decided" in error["message"]


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"baseline_builtin": "random"}, 400, "invalid", "candidate"),
        (
            {"candidate": "mine", "baseline_builtin": "random", "colour": 1},
            400,
            "invalid",
            "colour",
        ),
        ({"candidate": "mine", "baseline_builtin": "random", "d1": "x"}, 400, "invalid", "d1"),
        (
            {"candidate": "mine", "baseline_builtin": "random", "alpha": 0.9},
            400,
            "invalid",
            "alpha",
        ),
        ({"candidate": "mine"}, 400, "invalid", None),
        ({"candidate": "mine", "baseline_builtin": "ogre"}, 400, "unknown_builtin", None),
        ({"candidate": "theirs", "baseline_builtin": "random"}, 403, "not_owner", None),
        ({"candidate": "pending", "baseline_builtin": "random"}, 400, "version_not_ready", None),
        ({"candidate": 999999, "baseline_builtin": "random"}, 404, "not_found", None),
        ({"candidate": "mine", "baseline_builtin": "random", "max_deals": 5}, 400, "invalid", None),
    ],
)
def test_a_match_refused_says_why_and_creates_nothing(
    world: World, body: dict[str, Any], status: int, code: str, field: str | None
) -> None:
    versions = {
        "mine": ready_version(world.bot).pk,
        "theirs": ready_version(world.other_bot).pk,
        "pending": world.pending.versions.get().pk,
    }
    data = {k: versions.get(v, v) if isinstance(v, str) else v for k, v in body.items()}
    error = assert_error(
        world.client("author").post("/api/v1/matches/", data, format="json"), status, code
    )
    if field is not None:
        assert field in error["fields"], error
    assert not Match.objects.exists()


def test_match_list_queries_do_not_grow_with_the_matches(world: World) -> None:
    client = world.client("author")
    counts = []
    for _ in range(2):
        for _ in range(3):
            services.match_create(
                owner=world.bot.owner, candidate=ready_version(world.bot), baseline_builtin="random"
            )
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/api/v1/matches/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
