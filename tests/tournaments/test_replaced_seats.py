"""A fault never pays (docs/tournaments.md): a real tournament whose bot crashes at its 40th
decision of every table, which the built-in bot replacing it would have won for it, ends last
in the standings, the matchpoints, the ratings and the statistics, and is marked as replaced
wherever results show."""

from __future__ import annotations

import io
from decimal import Decimal
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

import games
from tests.tournaments.factories import (
    BotFactory,
    enter,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import page_selectors, ratings, scoring, seeds, selectors, services
from tournaments.models import Deal, Entry, Rating, Seat, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

#: A fixed tournament seed, so that the tables are the same at every run.
SEED = 20261207


def _crash_cup(opponents: int, **settings: Any) -> tuple[Tournament, Entry]:
    """A finished tournament of the late-crashing bot against ``opponents`` random bots."""
    tournament = make_tournament(deals_per_table=8, **settings)
    Tournament.objects.filter(pk=tournament.pk).update(
        seed=str(SEED), commitment=seeds.seed_commitment(SEED)
    )
    tournament.refresh_from_db()
    enter_builtins(tournament, ["random"] * opponents)
    crash = enter(tournament, file_version(BotFactory.create(), "crash_late"))
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    return tournament, crash


def _played_relative(tournament: Tournament) -> dict[int, float]:
    """Each entry's points as played (the replacement's own) against its tables' averages,
    per deal, higher is better (Hearts: fewer points is better)."""
    out: dict[int, float] = {}
    for deal in Deal.objects.filter(table__tournament=tournament):
        average = sum(deal.points) / len(deal.points)
        for seat in Seat.objects.filter(table_id=deal.table_id, entry__isnull=False):
            assert seat.entry_id is not None
            out[seat.entry_id] = out.get(seat.entry_id, 0.0) + average - deal.points[seat.position]
    return out


def test_a_bot_that_crashes_ends_last_everywhere() -> None:
    tournament, crash = _crash_cup(3, rounds=3)
    seats = list(Seat.objects.filter(entry=crash))
    assert len(seats) == 3
    # The judge replaced it at its 40th decision: deal 3 (14 decisions a deal of Hearts).
    assert all(s.replaced and s.replaced_deal == 2 for s in seats)
    # As played, the heuristic bot's points would have made it the best of the tournament.
    played = _played_relative(tournament)
    assert max(played, key=lambda e: played[e]) == crash.pk
    # As it counts: last at every table, last in the standings.
    assert all(s.place == 4 and s.points == 0 for s in seats)
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert rows[-1].entry == crash
    assert rows[-1].replaced == 3
    assert all(r.replaced == 0 for r in rows[:-1])
    crash.refresh_from_db()
    assert crash.final_rank == 4
    # The ratings: the lowest of the tournament.
    family = ratings.preset_family("hearts", "whisthub")
    board = list(Rating.objects.filter(family=family).order_by("-ordinal"))
    assert board[-1].bot_id == crash.version.bot_id
    # The statistics: the lowest mean per deal.
    figures = selectors.tournament_statistics(tournament=tournament)
    assert figures.by_entry()[crash.pk].rank == 4
    # The audit counts the same way.
    assert services.tournament_audit(tournament=tournament).ok
    _marked_everywhere(tournament, crash, seats)


def _marked_everywhere(tournament: Tournament, crash: Entry, seats: list[Seat]) -> None:
    """The replaced seats are marked wherever results show: the API's standings, tables and
    rankings, and the pages."""
    client = Client()
    api = f"/api/v1/tournaments/{tournament.pk}"
    rows = client.get(f"{api}/standings/").json()["results"]
    assert [(r["entry"], r["replaced"]) for r in rows][-1] == (crash.pk, 3)
    assert {r["replaced"] for r in rows[:-1]} == {0}
    tables = client.get(f"{api}/tables/").json()["results"]
    marks = {
        (t["id"], seat["position"]): seat["replaced_deal"] for t in tables for seat in t["seats"]
    }
    assert {k: v for k, v in marks.items() if v is not None} == {
        (s.table_id, s.position): 2 for s in seats
    }
    ranking = client.get("/api/v1/rankings/?game=hearts").json()["results"]
    replaced = {r["bot"]: r["replaced_tables"] for r in ranking}
    assert replaced.pop(crash.version.bot_id) == 3
    assert set(replaced.values()) == {0}
    mark = "replaced at 3 tables"
    for url in (f"/tournaments/{tournament.pk}/", "/rankings/", "/"):
        assert mark in client.get(url).content.decode(), url
    assert mark in client.get(f"/bots/{crash.version.bot_id}/").content.decode()
    table_page = client.get(f"/tables/{seats[0].table_id}/").content.decode()
    assert "replaced at deal 3" in table_page
    round_page = client.get(f"/tournaments/{tournament.pk}/rounds/1/").content.decode()
    assert "replaced at deal 3" in round_page


def test_in_duplicate_play_a_bot_that_crashes_takes_the_fewest_matchpoints() -> None:
    tournament, crash = _crash_cup(7, rounds=1, duplicate=True)
    seat = Seat.objects.get(entry=crash)
    assert seat.replaced_deal == 2
    points = dict(Seat.objects.filter(table__tournament=tournament).values_list("pk", "points"))
    assert points[seat.pk] == min(points.values())
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert rows[-1].entry == crash
    assert services.tournament_audit(tournament=tournament).ok
    # The traveller of a forfeited deal gives the seat the worst points of its table.
    deal = Deal.objects.select_related("table__tournament").get(table=seat.table, index=3)
    traveller = page_selectors.deal_traveller(deal=deal, lower_is_better=True)
    assert traveller is not None
    row = next(r for r in traveller.rows if r.deal_id == deal.pk)
    assert row.cells[seat.position].points == max(deal.points)


def test_tables_recorded_before_the_rule_are_recounted_once() -> None:
    """``manage.py replaced_seats_recount`` gives tables recorded before the rule (no
    ``replaced_deal``, the replacement's points and place credited to the seat) what the rule
    gives, with the final standings and the ratings; run again, it changes nothing."""
    tournament, crash = _crash_cup(3, rounds=2)
    fields = ("replaced_deal", "score", "total", "place", "points")
    counted = list(Seat.objects.filter(table__tournament=tournament).values_list("pk", *fields))
    ranks = dict(Entry.objects.filter(tournament=tournament).values_list("pk", "final_rank"))
    ordinals = dict(Rating.objects.values_list("bot_id", "ordinal"))
    # As the code before the rule recorded them: the points as played, places by them.
    engine = games.load("hearts", "whisthub", fixed_deals=8)
    scale = selectors.tournament_place_points(tournament=tournament)
    for seats in _by_table(tournament):
        points = [
            list(p)
            for p in Deal.objects.filter(table=seats[0].table).values_list("points", flat=True)
        ]
        totals = engine.match_scores(points)
        places = engine.places(totals)
        for seat, table_points in zip(seats, scoring.table_points(places, scale), strict=True):
            seat.replaced_deal = None
            seat.score = seat.total = totals[seat.position]
            seat.place = places[seat.position]
            seat.points = Decimal(table_points.numerator) / table_points.denominator
        Seat.objects.bulk_update(seats, fields)
    Entry.objects.filter(pk=crash.pk).update(final_rank=1)
    services.ratings_rebuild(family=ratings.preset_family("hearts", "whisthub"))
    assert dict(Rating.objects.values_list("bot_id", "ordinal")) != ordinals

    out = io.StringIO()
    call_command("replaced_seats_recount", stdout=out)
    assert out.getvalue().startswith("2 tables of 1 tournament recounted")
    again = list(Seat.objects.filter(table__tournament=tournament).values_list("pk", *fields))
    assert sorted(again) == sorted(counted)
    assert (
        dict(Entry.objects.filter(tournament=tournament).values_list("pk", "final_rank")) == ranks
    )
    assert dict(Rating.objects.values_list("bot_id", "ordinal")) == pytest.approx(ordinals)
    assert selectors.standings_for_tournament(tournament=tournament)[-1].entry == crash
    out = io.StringIO()
    call_command("replaced_seats_recount", stdout=out)
    assert out.getvalue().startswith("0 tables of 0 tournaments recounted")


def _by_table(tournament: Tournament) -> list[list[Seat]]:
    tables: dict[int, list[Seat]] = {}
    for seat in Seat.objects.filter(table__tournament=tournament).order_by("table", "position"):
        tables.setdefault(seat.table_id, []).append(seat)
    return list(tables.values())
