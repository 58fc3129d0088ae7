"""Stored replays: rendered once when a table is recorded, sent as stored, still hidden while
they matter; the migration's PostgreSQL backfill renders the same JSON as the selectors."""

from __future__ import annotations

import importlib
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tournaments import selectors
from tournaments.models import Deal, DealReplay, Seat, Table
from tournaments.selectors import replays

from .conftest import World, assert_error

pytestmark = pytest.mark.django_db

BACKFILL = importlib.import_module("tournaments.migrations.0003_deal_replay").BACKFILL


def test_recording_a_table_stores_the_replay_of_each_deal(world: World) -> None:
    deals = Deal.objects.filter(table__tournament=world.finished)
    stored = dict(DealReplay.objects.filter(deal__in=deals).values_list("deal_id", "document"))
    assert set(stored) == set(deals.values_list("pk", flat=True))
    assert stored == selectors.deal_replay_documents(deals=deals)
    running = Deal.objects.filter(table__tournament=world.running)
    assert not DealReplay.objects.filter(deal__in=running).exists()


def test_a_stored_replay_is_sent_as_stored_in_one_query(world: World) -> None:
    pk = world.deal_done.pk
    client = world.client("anonymous")
    for _ in range(2):  # nothing kept between requests: the query each time
        with CaptureQueriesContext(connection) as queries:
            response = client.get(f"/api/v1/deals/{pk}/")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/json"
        assert "max-age" in response["Cache-Control"]
        assert len(queries) == 1
        assert response.content.decode() == DealReplay.objects.get(deal_id=pk).document


def test_the_prepared_statement_is_prepared_again_on_a_new_connection(world: World) -> None:
    pk = world.deal_done.pk
    expected = selectors.deal_replay_stored(deal_id=pk)
    assert expected is not None
    assert expected.visible
    with connection.cursor() as cursor:  # as on a connection opened since
        cursor.execute("DEALLOCATE ALL")
    replays._stored_replay_prepared.discard(connection.connection)
    assert selectors.deal_replay_stored(deal_id=pk) == expected
    assert selectors.deal_replay_stored(deal_id=pk) == expected
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        assert cursor.fetchone() == (1,)


def test_a_deal_recorded_before_replays_were_stored_is_rendered_on_request(world: World) -> None:
    pk = world.deal_done.pk
    document = DealReplay.objects.get(deal_id=pk).document
    DealReplay.objects.filter(deal_id=pk).delete()
    response = world.client("anonymous").get(f"/api/v1/deals/{pk}/")
    assert response.status_code == 200
    assert response.json() == json.loads(document)


def test_a_stored_replay_stays_hidden_until_its_table_is_done(world: World) -> None:
    deal = world.deal_done
    Table.objects.filter(pk=deal.table_id).update(status=Table.Status.RUNNING)
    response = world.client("anonymous").get(f"/api/v1/deals/{deal.pk}/")
    assert_error(response, 403)
    assert b"hands" not in response.content


def test_a_stored_duplicate_replay_stays_hidden_until_its_round_is_done(world: World) -> None:
    deal = world.deal_done
    world.finished.__class__.objects.filter(pk=world.finished.pk).update(duplicate=True)
    deal.table.round.__class__.objects.filter(pk=deal.table.round_id).update(status="running")
    response = world.client("anonymous").get(f"/api/v1/deals/{deal.pk}/")
    assert_error(response, 403)
    assert selectors.deal_replay_stored(deal_id=deal.pk) == selectors.StoredReplay(
        visible=False, document=DealReplay.objects.get(deal_id=deal.pk).document
    )


def test_a_missing_deal_is_a_404(world: World) -> None:
    assert selectors.deal_replay_stored(deal_id=10**9) is None
    assert selectors.deal_replay_stored(deal_id=2**63) is None  # past bigint: not an error
    assert_error(world.client("anonymous").get(f"/api/v1/deals/{10**9}/"), 404)


def test_the_backfill_renders_what_the_selectors_render(world: World) -> None:
    """Seats of every kind (an entry, a substitute for one, a house bot) and a deal with faults:
    PostgreSQL's document and Python's are the same JSON."""
    table = world.table_done
    seats = list(Seat.objects.filter(table=table).order_by("position"))
    Seat.objects.filter(pk=seats[1].pk).update(substitute=True, house_bot="lowest")
    Seat.objects.filter(pk=seats[2].pk).update(entry=None, house_bot="random")
    deal = Deal.objects.filter(table=table).order_by("index")[0]
    log = dict(deal.log)
    log["faults"] = [
        {"seat": 1, "kind": "timeout", "step": 5, "detail": "late"},
        {"seat": 1, "kind": "illegal", "step": 5},
        "not a fault",
        {"seat": 2, "kind": "crash", "step": 9},
    ]
    log["times"] = log["times"][:-3]  # the last decisions without a time
    Deal.objects.filter(pk=deal.pk).update(log=log)
    deals = Deal.objects.filter(table=table)
    python = selectors.deal_replay_documents(deals=deals)
    DealReplay.objects.filter(deal__in=deals).delete()
    with connection.cursor() as cursor:
        cursor.execute(BACKFILL.format(where="AND t.id = %s"), [table.pk])
    database = dict(DealReplay.objects.filter(deal__in=deals).values_list("deal_id", "document"))
    assert set(database) == set(python)
    for pk, text in python.items():
        assert json.loads(database[pk]) == json.loads(text)
    replay = json.loads(python[deal.pk])
    assert [s["bot"] for s in replay["seats"]][1:3] == [
        f"house:lowest for {seats[1].entry.version.label}",  # type: ignore[union-attr]
        "house:random",
    ]
    assert [d["fault"] for d in replay["decisions"]][5:10] == ["illegal", "", "", "", "crash"]
    assert replay["decisions"][-1]["seconds"] == 0.0
    assert len(replay["faults"]) == 3
