"""Services and selectors against the real PostgreSQL database, tables played in this process
(the worker tests play them through Celery: test_tournament_workers.py)."""

from __future__ import annotations

import itertools
import threading
from collections import defaultdict
from datetime import timedelta
from fractions import Fraction
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

import games
from tests.tournaments.factories import (
    BotFactory,
    BuiltinVersionFactory,
    UserFactory,
    enter,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import queue, seeds, selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import (
    BotVersion,
    Deal,
    Decision,
    Entry,
    Fault,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
    WorkerHeartbeat,
)
from tournaments.services import bots as bots_service

pytestmark = pytest.mark.django_db(transaction=True)

EIGHT = ["heuristic", "heuristic", "lowest", "lowest", "random", "random", "heuristic", "random"]


def play(tournament: Tournament) -> Tournament:
    services.tournament_start(tournament=tournament)
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    return tournament


# --- creating and entering --------------------------------------------------------------------


def test_rules_are_checked_by_the_engine_when_a_tournament_is_made() -> None:
    with pytest.raises(ApplicationError, match="unknown option 'jokers'") as info:
        make_tournament(options={"jokers": True})
    assert info.value.extra["option"] == "jokers"
    with pytest.raises(ApplicationError, match="multiple of 10") as info:
        make_tournament(game="roi", preset="classic", deals_per_table=8)
    assert info.value.extra["option"] == "deals_per_table"
    # In the organiser's words, not the engine's (fixed_deals, 0 for one game, "roi").
    assert str(info.value).startswith("the Jeu du Roi is played in whole games of 10 deals")
    with pytest.raises(ApplicationError, match="set by deals_per_table"):
        make_tournament(options={"fixed_deals": 3})
    with pytest.raises(ApplicationError, match="unknown seating format"):
        make_tournament(seating="knockout")
    with pytest.raises(ApplicationError, match="one value per seat"):
        make_tournament(place_points=[3, 1])
    with pytest.raises(ApplicationError, match="no built-in bot 'genius'"):
        make_tournament(house_bot="genius")

    roi = make_tournament(game="roi", preset="classic", deals_per_table=20)
    assert (roi.table_size, roi.place_points) == (4, [4, 2, 1, 0])
    five = make_tournament(preset="classic-fr", table_size=5, place_points=[5, 3, 2, 1, 0])
    assert five.table_size == 5
    assert five.options == {"players": 5}


def test_a_new_tournament_publishes_the_commitment_and_keeps_its_seed_secret() -> None:
    tournament = make_tournament()
    assert seeds.commitment_matches(tournament.seed_int, tournament.commitment)
    assert tournament.revealed_seed is None
    assert tournament.seed_int.bit_length() > 64


def test_registration_rules() -> None:
    tournament = make_tournament(open_it=False)
    version = BuiltinVersionFactory.create()
    with pytest.raises(ApplicationError, match="registration is closed"):
        enter(tournament, version)
    services.tournament_open(tournament=tournament)
    entry = enter(tournament, version)
    assert entry.user == version.bot.owner
    # One entry per user unless allowed; never the same version twice.
    other = BuiltinVersionFactory.create(bot__owner=version.bot.owner)
    with pytest.raises(ApplicationError, match="one entry per user"):
        enter(tournament, other)
    with pytest.raises(ApplicationError, match="already entered"):
        enter(tournament, version)
    # Only ready versions of the tournament's game, and only one's own bots.
    pending = file_version(BotFactory.create(), "first_legal", status=BotVersion.Status.PENDING)
    with pytest.raises(ApplicationError, match="only a ready version"):
        enter(tournament, pending)
    roi_bot = BuiltinVersionFactory.create(bot__game="roi")
    with pytest.raises(ApplicationError, match="plays roi"):
        enter(tournament, roi_bot)
    stranger = UserFactory.create()
    with pytest.raises(ApplicationError, match="your own bots"):
        services.entry_register(
            tournament=tournament, version=BuiltinVersionFactory.create(), user=stranger
        )
    # The registration window.
    late = make_tournament(registration_closes_at=timezone.now() - timedelta(minutes=1))
    with pytest.raises(ApplicationError, match="registration has closed"):
        enter(late, BuiltinVersionFactory.create())


def test_several_entries_per_user_when_allowed() -> None:
    tournament = make_tournament(allow_multiple_entries=True)
    first = BuiltinVersionFactory.create()
    second = BuiltinVersionFactory.create(bot__owner=first.bot.owner, builtin="lowest")
    enter(tournament, first)
    enter(tournament, second)
    assert tournament.entries.count() == 2


def test_status_changes_are_compare_and_set() -> None:
    tournament = make_tournament()
    with pytest.raises(ApplicationError, match="the tournament is open"):
        services.tournament_open(tournament=tournament)
    with pytest.raises(ApplicationError, match="at least two entries"):
        services.tournament_start(tournament=tournament)
    services.tournament_cancel(tournament=tournament)
    with pytest.raises(ApplicationError, match="cancelled"):
        services.tournament_cancel(tournament=tournament)


# --- a whole tournament -----------------------------------------------------------------------


def _shared_place_points(places: list[int], scale: list[int]) -> list[Fraction]:
    """Place points written out by hand: the seats sharing a place split the points of the
    places they cover."""
    out = []
    for place in places:
        tied = places.count(place)
        out.append(Fraction(sum(scale[place - 1 : place - 1 + tied]), tied))
    return out


def test_a_full_tournament_runs_to_the_end_with_standings_places_and_points_right() -> None:
    tournament = make_tournament(rounds=3, deals_per_table=4)
    enter_builtins(tournament, EIGHT)
    play(tournament)

    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.revealed_seed is not None
    assert Round.objects.filter(tournament=tournament, status=Round.Status.DONE).count() == 3
    tables = Table.objects.filter(tournament=tournament)
    assert tables.count() == 6
    assert set(tables.values_list("status", flat=True)) == {Table.Status.DONE}
    assert Deal.objects.filter(table__tournament=tournament).count() == 24
    assert Trick.objects.filter(deal__table__tournament=tournament).count() == 24 * 13
    # Passes in three deals of four (left, right, across, none): 4 passes + 52 cards.
    assert Decision.objects.filter(deal__table__tournament=tournament).count() == 6 * (3 * 56 + 52)

    # Recompute everything by hand from the deal rows.
    expected_points: dict[int, Fraction] = defaultdict(Fraction)
    seen_per_round: dict[int, list[int]] = defaultdict(list)
    for table in tables.select_related("round"):
        seats = list(table.seats.order_by("position"))
        deals = list(table.deals.order_by("index"))
        assert [d.index for d in deals] == [0, 1, 2, 3]
        # 26 points per whisthub deal, or 78 when someone shoots the moon.
        assert all(sum(d.points) in (26, 78) for d in deals)
        totals = [sum(d.points[s] for d in deals) for s in range(4)]
        assert [s.score for s in seats] == totals
        places = [1 + sum(other < mine for other in totals) for mine in totals]
        assert [s.place for s in seats] == places
        points = _shared_place_points(places, [4, 2, 1, 0])
        for seat, p in zip(seats, points, strict=True):
            assert seat.points == pytest.approx(float(p), abs=1e-4)
            assert seat.entry_id is not None
            expected_points[seat.entry_id] += p
            seen_per_round[table.round.number].append(seat.entry_id)
    # Every entry plays once per round.
    entry_ids = sorted(tournament.entries.values_list("pk", flat=True))
    assert all(sorted(ids) == entry_ids for ids in seen_per_round.values())

    rows = selectors.standings_for_tournament(tournament=tournament)
    assert [row.rank for row in rows] == list(range(1, 9))
    assert {row.entry.pk: row.points for row in rows} == expected_points
    assert sum(row.points for row in rows) == 6 * 7
    for better, worse in itertools.pairwise(rows):
        assert (better.points, better.relative_score) >= (worse.points, worse.relative_score)
    # The final standings are frozen on the entries.
    for row in rows:
        row.entry.refresh_from_db()
        assert row.entry.final_rank == row.rank
        assert float(row.entry.final_points or 0) == pytest.approx(float(row.points), abs=1e-4)

    progress = selectors.tournament_progress(tournament=tournament)
    assert (progress.tables_done, progress.tables_total, progress.current_round) == (6, 6, 3)


def test_standings_from_recorded_seats_hand_checked() -> None:
    """Two tables of four, results written by hand: ranks by points, then relative score."""
    tournament = make_tournament(rounds=1)
    entries = enter_builtins(tournament, ["random"] * 8)
    services.tournament_start(tournament=tournament)
    round_ = Round.objects.get(tournament=tournament, number=1)
    by_entry = {}
    # Table 1 scores 0 10 20 74 (average 26), table 2 scores 5 5 40 54 (average 26).
    hand = {1: [0, 10, 20, 74], 2: [5, 5, 40, 54]}
    for table in round_.tables.all():
        for seat in table.seats.order_by("position"):
            score = hand[table.number][seat.position]
            seat.score = score
            seat.place = 1 + sum(o < score for o in hand[table.number])
            seat.save()
            by_entry[seat.entry_id] = (table.number, seat.position)
        table.status = Table.Status.DONE
        table.save()
    rows = selectors.standings_for_tournament(tournament=tournament)
    got = [(by_entry[row.entry.pk], row.points, row.relative_score) for row in rows]
    # First alone at table 1: 4 points, 26 under the average.
    assert got[0] == ((1, 0), 4, 26)
    # Tied first at table 2: (4 + 2) / 2 = 3 points each, both 21 under: the seeded draw
    # orders them (they shared the place, so head-to-head does not).
    assert sorted(got[1:3]) == [((2, 0), 3, 21), ((2, 1), 3, 21)]
    assert got[3:] == [
        ((1, 1), 2, 16),
        ((1, 2), 1, 6),  # one point each: 6 under its average beats 14 over
        ((2, 2), 1, -14),
        ((2, 3), 0, -28),
        ((1, 3), 0, -48),
    ]
    assert len(entries) == 8


def test_swiss_seats_round_two_by_the_round_one_standings() -> None:
    tournament = make_tournament(rounds=2, seating="swiss")
    enter_builtins(tournament, EIGHT)
    services.tournament_start(tournament=tournament)
    for table_id in Table.objects.filter(tournament=tournament).values_list("pk", flat=True):
        services.table_run(table_id=table_id, worker="test", token=f"t{table_id}")
    # Round 1 is recorded and round 2 seated: its table 1 holds the four best of round 1.
    round_two = Round.objects.get(tournament=tournament, number=2)
    top = {
        row.entry.pk
        for row in selectors.standings_for_tournament(tournament=tournament)
        if row.rank is not None and row.rank <= 4
    }
    table_one = round_two.tables.get(number=1)
    assert set(table_one.seats.values_list("entry_id", flat=True)) == top


def test_house_bots_complete_the_last_table_and_are_never_ranked() -> None:
    tournament = make_tournament(rounds=2, deals_per_table=2)
    enter_builtins(tournament, ["random"] * 6)
    play(tournament)
    for round_ in tournament.round_set.all():
        last = round_.tables.order_by("-number").first()
        assert last is not None
        assert last.seats.filter(entry__isnull=True).count() == 2
        assert all(s.house_bot == "heuristic" for s in last.seats.filter(entry__isnull=True))
        assert not Seat.objects.filter(table__round=round_, table__number=1, entry=None).exists()
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert len(rows) == 6
    assert [row.rank for row in rows] == [1, 2, 3, 4, 5, 6]


def test_random_seating_avoids_meeting_again() -> None:
    tournament = make_tournament(rounds=3, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 16)
    play(tournament)
    met: dict[frozenset[int], int] = defaultdict(int)
    for table in Table.objects.filter(tournament=tournament):
        ids = sorted(e for e in table.seats.values_list("entry_id", flat=True) if e)
        for i, a in enumerate(ids):
            for b in ids[i + 1 :]:
                met[frozenset((a, b))] += 1
    assert max(met.values()) == 1


# --- fair dealing, duplicate, audit -----------------------------------------------------------


def test_the_commitment_checks_against_the_revealed_seed_and_every_deal_recomputes() -> None:
    tournament = make_tournament(rounds=2, deals_per_table=3)
    enter_builtins(tournament, EIGHT)
    commitment = tournament.commitment
    play(tournament)

    seed = tournament.revealed_seed
    assert seed is not None
    assert tournament.commitment == commitment
    assert seeds.seed_commitment(seed) == commitment
    engine = games.load("hearts", "whisthub", fixed_deals=3)
    checked = 0
    for deal in Deal.objects.filter(table__tournament=tournament).select_related("table__round"):
        table = deal.table
        table_seed = seeds.table_deal_seed(
            seed, round_number=table.round.number, table_number=table.number, duplicate=False
        )
        assert table.deal_seed == table_seed
        assert deal.record == engine.new_deal(deal.index, seed=table_seed).deal_record()
        checked += 1
    assert checked == 2 * 2 * 3  # two tables in each of two rounds, three deals each
    report = services.tournament_audit(tournament=tournament)
    assert report.ok, report.problems
    assert report.commitment_ok is True
    assert (report.deals, report.tables) == (12, 4)


def test_duplicate_tables_of_a_round_play_the_same_deals_and_score_matchpoints() -> None:
    tournament = make_tournament(rounds=2, deals_per_table=2, duplicate=True)
    enter_builtins(tournament, EIGHT)
    play(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    for round_ in tournament.round_set.all():
        tables = list(round_.tables.order_by("number"))
        assert len(tables) == 2
        assert len({t.deal_seed for t in tables}) == 1
        records = [[d.record for d in t.deals.order_by("index")] for t in tables]
        assert records[0] == records[1]
        # Matchpoints: on each deal, seat s of table 1 against seat s of table 2.
        points = [[d.points for d in t.deals.order_by("index")] for t in tables]
        for table_index, table in enumerate(tables):
            other = points[1 - table_index]
            for seat in table.seats.all():
                expected = sum(
                    1 if mine[seat.position] < theirs[seat.position] else
                    Fraction(1, 2) if mine[seat.position] == theirs[seat.position] else 0
                    for mine, theirs in zip(points[table_index], other, strict=True)
                )  # fmt: skip
                assert seat.points == pytest.approx(float(expected))
    # The two rounds deal differently.
    seeds = list(Table.objects.filter(tournament=tournament).values_list("deal_seed", flat=True))
    assert len(set(seeds)) == 2
    assert services.tournament_audit(tournament=tournament).ok


def test_duplicate_needs_two_tables() -> None:
    tournament = make_tournament(duplicate=True)
    enter_builtins(tournament, ["random"] * 4)
    with pytest.raises(ApplicationError, match="more entries than one table"):
        services.tournament_start(tournament=tournament)


def test_the_audit_finds_a_tampered_row() -> None:
    tournament = make_tournament(rounds=1, deals_per_table=2)
    enter_builtins(tournament, ["random"] * 4)
    play(tournament)
    assert services.tournament_audit(tournament=tournament).ok
    trick = Trick.objects.filter(deal__table__tournament=tournament).order_by("pk").first()
    assert trick is not None
    trick.winner = (trick.winner + 1) % 4
    trick.save()
    deal = Deal.objects.filter(table__tournament=tournament).order_by("pk").last()
    assert deal is not None
    log = dict(deal.log)
    actions = [list(a) for a in log["actions"]]
    actions[-1], actions[-2] = actions[-2], actions[-1]  # the last two cards swapped
    log["actions"] = actions
    deal.log = log
    deal.save()
    report = services.tournament_audit(tournament=tournament)
    assert not report.ok
    assert any("trick rows differ" in p for p in report.problems)
    assert any("was to act" in p or "illegal" in p for p in report.problems)


# --- tables: claim, record, sweep -------------------------------------------------------------


def _started(entries: int = 8, **kwargs: Any) -> Tournament:
    tournament = make_tournament(**kwargs)
    enter_builtins(tournament, EIGHT[:entries])
    services.tournament_start(tournament=tournament)
    return tournament


def test_a_second_claim_fails() -> None:
    tournament = _started()
    table = Table.objects.filter(tournament=tournament).first()
    assert table is not None
    first = services.table_claim(table_id=table.pk, worker="w1", token="a")
    assert first is not None
    assert (first.status, first.claimed_by, first.attempts) == (Table.Status.RUNNING, "w1", 1)
    assert services.table_claim(table_id=table.pk, worker="w2", token="b") is None
    # The same task delivered again (the broker's redelivery) claims nothing while the lease
    # holds: the first delivery may still be playing.
    assert services.table_claim(table_id=table.pk, worker="w2", token="a") is None
    # Once the lease expired (the worker died), another worker may claim it.
    later = timezone.now() + timedelta(hours=1)
    again = services.table_claim(table_id=table.pk, worker="w2", token="b", now=later)
    assert again is not None
    assert (again.claimed_by, again.attempts, again.claims) == ("w2", 2, 2)


def test_simultaneous_claims_give_the_table_to_exactly_one_worker() -> None:
    tournament = _started()
    table = Table.objects.filter(tournament=tournament).first()
    assert table is not None
    barrier = threading.Barrier(6)
    won: list[str] = []

    def claim(name: str) -> None:
        try:
            barrier.wait()
            if services.table_claim(table_id=table.pk, worker=name, token=name):
                won.append(name)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1
    assert Table.objects.get(pk=table.pk).claimed_by == won[0]


def test_simultaneous_starts_start_the_tournament_once() -> None:
    """Two clicks on Start at once (two tabs, two organisers): one starts it, the other is
    refused; round 1 is seated once."""
    tournament = make_tournament(rounds=2)
    enter_builtins(tournament, ["random", "lowest", "heuristic", "random", "lowest"])
    barrier = threading.Barrier(4)
    started: list[int] = []
    refused: list[str] = []

    def start() -> None:
        try:
            barrier.wait()
            services.tournament_start(tournament=Tournament.objects.get(pk=tournament.pk))
            started.append(1)
        except ApplicationError as error:
            refused.append(error.message)
        finally:
            connection.close()

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(started) == 1
    assert refused == ["the tournament is running; only an open one can start"] * 3
    assert list(Round.objects.filter(tournament=tournament).values_list("number", flat=True)) == [1]
    assert Table.objects.filter(tournament=tournament).count() == 2


def test_recording_twice_records_once() -> None:
    tournament = _started(rounds=2)
    table = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert table is not None
    claimed = services.table_claim(table_id=table.pk, worker="w", token="t")
    assert claimed is not None
    result = services.table_play(table=claimed)
    assert services.table_record_result(table_id=table.pk, result=result, token="t") is True
    counts = (
        Deal.objects.filter(table=table).count(),
        Trick.objects.filter(deal__table=table).count(),
        Decision.objects.filter(deal__table=table).count(),
    )
    assert services.table_record_result(table_id=table.pk, result=result, token="t") is False
    assert (
        Deal.objects.filter(table=table).count(),
        Trick.objects.filter(deal__table=table).count(),
        Decision.objects.filter(deal__table=table).count(),
    ) == counts
    # A task delivered again finds nothing to do.
    assert services.table_run(table_id=table.pk, worker="w", token="t").outcome == "skipped"
    # The round advances once, when its last table is recorded.
    assert Round.objects.filter(tournament=tournament).count() == 1
    last = Table.objects.filter(tournament=tournament).order_by("number").last()
    assert last is not None
    assert services.table_run(table_id=last.pk, worker="w", token="u").outcome == "recorded"
    assert Round.objects.filter(tournament=tournament).count() == 2


def test_the_sweep_requeues_expired_leases_and_fails_tables_out_of_attempts() -> None:
    tournament = _started()
    table = Table.objects.filter(tournament=tournament).first()
    assert table is not None
    assert services.table_claim(table_id=table.pk, worker="dead", token="x")
    # Not expired yet: nothing to do.
    assert services.table_sweep().requeued == []
    later = timezone.now() + timedelta(minutes=5)
    report = services.table_sweep(now=later)
    assert report.requeued == [table.pk]
    table.refresh_from_db()
    assert (table.status, table.claim_token) == (Table.Status.PENDING, "")
    # Out of attempts: failed, for an operator to re-run.
    Table.objects.filter(pk=table.pk).update(
        status=Table.Status.RUNNING, attempts=3, lease_expires_at=timezone.now()
    )
    WorkerHeartbeat.objects.create(hostname="dead", last_seen=later)  # seen after: it counts
    report = services.table_sweep(now=later)
    assert report.failed == [table.pk]
    table.refresh_from_db()
    assert table.status == Table.Status.FAILED
    assert "without a result" in table.error
    services.table_rerun(table=table)
    table.refresh_from_db()
    assert (table.status, table.attempts) == (Table.Status.PENDING, 0)
    with pytest.raises(ApplicationError, match="only a failed table"):
        services.table_rerun(table=table)
    # Pending tables whose message may be lost are queued again.
    report = services.table_sweep(now=timezone.now() + timedelta(hours=1))
    assert table.pk in report.resent


def test_a_cancelled_tournament_records_nothing() -> None:
    tournament = _started()
    table = Table.objects.filter(tournament=tournament).first()
    assert table is not None
    claimed = services.table_claim(table_id=table.pk, worker="w", token="t")
    assert claimed is not None
    result = services.table_play(table=claimed)
    services.tournament_cancel(tournament=tournament)
    assert services.table_record_result(table_id=table.pk, result=result, token="t") is False
    assert not Deal.objects.filter(table=table).exists()
    assert services.table_claim(table_id=table.pk, worker="w", token="z") is None


# --- bots, faults, withdrawals ----------------------------------------------------------------


def test_a_faulty_bot_never_stops_a_tournament() -> None:
    tournament = make_tournament(rounds=2, deals_per_table=2, max_faults=2)
    entries = enter_builtins(tournament, ["heuristic", "lowest", "random", "random", "lowest"])
    illegal = enter(tournament, file_version(BotFactory.create(), "illegal"))
    crash = enter(tournament, file_version(BotFactory.create(), "crash"))
    good = enter(tournament, file_version(BotFactory.create(), "first_legal"))
    play(tournament)

    assert tournament.status == Tournament.Status.FINISHED
    assert services.tournament_audit(tournament=tournament).ok
    faults = Fault.objects.filter(table__tournament=tournament)
    assert set(faults.filter(entry=illegal).values_list("kind", flat=True)) == {"illegal"}
    assert set(faults.filter(entry=crash).values_list("kind", flat=True)) == {"crash"}
    assert not faults.filter(entry__in=[good, *entries]).exists()
    # Each faulty seat was handed to a built-in bot and the table played on.
    for entry in (illegal, crash):
        seats = Seat.objects.filter(entry=entry)
        assert seats.count() == 2
        assert all(seat.replaced for seat in seats)
    assert Decision.objects.filter(deal__table__tournament=tournament).exclude(fault="").exists()
    assert len(selectors.standings_for_tournament(tournament=tournament)) == 8


def test_a_withdrawn_entry_is_played_by_a_house_bot_and_flagged() -> None:
    tournament = _started(rounds=2, deals_per_table=1)
    entry = Entry.objects.filter(tournament=tournament).order_by("pk").first()
    assert entry is not None
    services.entry_withdraw(entry=entry, reason="author's request")
    seat = Seat.objects.get(entry=entry)
    assert seat.substitute
    assert seat.house_bot == "heuristic"
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    # Round 2 seats the seven others with a house bot; the withdrawn entry is unranked, last.
    round_two = Round.objects.get(tournament=tournament, number=2)
    assert not Seat.objects.filter(table__round=round_two, entry=entry).exists()
    assert Seat.objects.filter(table__round=round_two, entry__isnull=True).count() == 1
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert rows[-1].entry == entry
    assert rows[-1].rank is None
    assert [row.rank for row in rows[:-1]] == list(range(1, 8))
    table_log: Any = selectors.table_log(table=seat.table)
    assert table_log["judge"]["seats"][seat.position]["bot"] == "house:heuristic"


def test_ratings_are_updated_per_table_with_history() -> None:
    tournament = make_tournament(rounds=2, deals_per_table=2)
    enter_builtins(tournament, EIGHT)
    play(tournament)
    ratings = Rating.objects.filter(family="hearts/whisthub")
    assert ratings.count() == 8
    assert all(r.tables == 2 for r in ratings)
    assert RatingHistory.objects.filter(tournament=tournament).count() == 16
    assert all(r.sigma < 25 / 3 for r in ratings)
    # Playing another tournament continues the same ratings.
    second = make_tournament(rounds=1, deals_per_table=1)
    for entry in tournament.entries.all():
        enter(second, entry.version)
    play(second)
    assert all(r.tables == 3 for r in Rating.objects.filter(family="hearts/whisthub"))


def test_selectors_rebuild_a_verifiable_replay_log() -> None:
    tournament = make_tournament(rounds=1, deals_per_table=2)
    enter_builtins(tournament, ["random"] * 4)
    play(tournament)
    table = Table.objects.get(tournament=tournament)
    log = selectors.table_log(table=table)
    assert games.verify(log).ok
    assert log["seed"] == table.deal_seed
    deal = table.deals.get(index=1)
    replay: Any = selectors.deal_replay(deal=deal)
    assert replay["deals"] == [deal.log]
    assert len(replay["tricks"]) == 13
    assert deal.passes is not None
    assert len(deal.passes) == 4  # deal 1 passes right


# --- bot versions -----------------------------------------------------------------------------


def test_a_builtin_version_is_ready_at_once_and_versions_are_numbered() -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Mine", game="hearts")
    first = services.bot_version_create(bot=bot, builtin="heuristic")
    second = services.bot_version_create(bot=bot, builtin="lowest")
    assert (first.number, second.number) == (1, 2)
    assert first.status == BotVersion.Status.READY
    with pytest.raises(ApplicationError, match="already have a bot named"):
        services.bot_create(owner=bot.owner, name="Mine", game="hearts")
    with pytest.raises(ApplicationError, match="unknown game"):
        services.bot_create(owner=bot.owner, name="Other", game="poker")


def test_an_upload_is_checked_then_validated_in_the_sandbox() -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Uploaded", game="hearts")
    with pytest.raises(ApplicationError, match=r"a source file \(\.py .*\) or a \.zip"):
        services.bot_version_create(bot=bot, content=b"x", filename="bot.exe")
    with pytest.raises(ApplicationError, match="zip"):
        services.bot_version_create(bot=bot, content=b"not a zip", filename="bot.zip")
    source = (file_version.__globals__["BOTS_DIR"] / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="first_legal.py")
    assert version.status == BotVersion.Status.PENDING
    assert version.size == len(source)
    version = services.bot_version_validate(version_id=version.pk)
    assert version.status == BotVersion.Status.READY, version.report
    assert version.report["ok"] is True
    assert version.report["sandbox"] == "bwrap"
    assert version.report["decisions"] > 20
    # Validating again does nothing.
    assert services.bot_version_validate(version_id=version.pk).status == BotVersion.Status.READY


def test_a_bot_that_plays_illegal_cards_is_rejected_with_a_reason() -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Cheat", game="hearts")
    source = (file_version.__globals__["BOTS_DIR"] / "illegal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="illegal.py")
    version = services.bot_version_validate(version_id=version.pk)
    assert version.status == BotVersion.Status.REJECTED
    assert version.report["ok"] is False
    assert version.report["reason"].startswith("illegal")
    services.bot_version_revalidate(version=version)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.PENDING


def test_a_validation_whose_worker_died_is_sent_again_then_taken_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(queue, "bot_version_validate", lambda version_id: sent.append(version_id))
    bot = services.bot_create(owner=UserFactory.create(), name="Orphan", game="hearts")
    source = (file_version.__globals__["BOTS_DIR"] / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="first_legal.py")
    assert sent == [version.pk]
    # A worker took it and died: still within its lease, nobody touches it.
    long_ago = timezone.now() - timedelta(hours=1)
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.VALIDATING,
        validation_started_at=timezone.now(),
        validation_attempts=1,
    )
    assert services.bot_version_sweep() == []
    assert services.bot_version_validate(version_id=version.pk).status == "validating"
    # Its lease ran out: sent again, pending.
    BotVersion.objects.filter(pk=version.pk).update(validation_started_at=long_ago)
    assert services.bot_version_sweep() == [version.pk]
    assert sent == [version.pk, version.pk]
    version.refresh_from_db()
    assert version.status == BotVersion.Status.PENDING
    # The first message, delivered again by the broker, may also take over a lapsed lease.
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.VALIDATING, validation_started_at=long_ago
    )
    version = services.bot_version_validate(version_id=version.pk)
    assert version.status == BotVersion.Status.READY, version.report
    assert BotVersion.objects.get(pk=version.pk).validation_attempts == 2
    assert services.bot_version_sweep() == []


def test_a_version_every_worker_died_under_ends_rejected() -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Killer", game="hearts")
    source = (file_version.__globals__["BOTS_DIR"] / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="first_legal.py")
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.VALIDATING,
        validation_started_at=timezone.now() - timedelta(hours=1),
        validation_attempts=3,
    )
    assert services.bot_version_sweep() == []
    version.refresh_from_db()
    assert version.status == BotVersion.Status.REJECTED
    assert "ended 3 times without an answer" in version.report["reason"]
    # The author (or staff) may try again: a fresh count.
    services.bot_version_revalidate(version=version)
    version.refresh_from_db()
    assert (version.status, version.validation_attempts) == (BotVersion.Status.PENDING, 0)


def test_a_lost_validation_message_is_sent_again_once_per_period(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(queue, "bot_version_validate", lambda version_id: sent.append(version_id))
    bot = services.bot_create(owner=UserFactory.create(), name="Lost", game="hearts")
    source = (file_version.__globals__["BOTS_DIR"] / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="first_legal.py")
    assert services.bot_version_sweep() == []  # just sent
    later = timezone.now() + timedelta(hours=1)
    assert services.bot_version_sweep(now=later) == [version.pk]
    assert services.bot_version_sweep(now=later) == []  # sent again at `later`: not yet lost
    assert sent == [version.pk, version.pk]


def test_a_late_worker_does_not_overwrite_the_validation_that_took_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Slowpoke", game="hearts")
    source = (file_version.__globals__["BOTS_DIR"] / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="first_legal.py")

    def taken_over_meanwhile(version: BotVersion) -> dict[str, Any]:
        # While this worker plays, its lease runs out and another worker takes the version.
        BotVersion.objects.filter(pk=version.pk).update(validation_started_at=timezone.now())
        return {"ok": False, "reason": "stale"}

    monkeypatch.setattr(bots_service, "_validation_report", taken_over_meanwhile)
    assert services.bot_version_validate(version_id=version.pk).status == "validating"


def test_a_tournament_whose_rules_the_engine_refuses_does_not_start() -> None:
    tournament = make_tournament(rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["heuristic", "lowest", "random", "random"])
    # A setting the engine refuses (only reachable by editing the row behind the service).
    Tournament.objects.filter(pk=tournament.pk).update(options={"jokers": True})
    with pytest.raises(ApplicationError, match="the engine refuses this tournament's rules"):
        services.tournament_start(tournament=tournament)
    tournament.refresh_from_db()
    assert (tournament.status, tournament.current_round) == (Tournament.Status.OPEN, 0)
    assert not Table.objects.filter(tournament=tournament).exists()


def test_a_table_that_cannot_be_played_fails_for_an_operator_to_rerun() -> None:
    tournament = _started(rounds=1, deals_per_table=1)
    # A setting the engine refuses (only reachable by editing the row behind the service).
    Tournament.objects.filter(pk=tournament.pk).update(options={"jokers": True})
    table = Table.objects.filter(tournament=tournament).order_by("number").first()
    assert table is not None
    outcome = services.table_run(table_id=table.pk, worker="w", token="t")
    assert outcome.outcome == "failed"
    assert "jokers" in outcome.detail
    table.refresh_from_db()
    assert table.status == Table.Status.FAILED
    assert "Traceback" in table.error
    assert not Deal.objects.filter(table=table).exists()
    progress = selectors.tournament_progress(tournament=tournament)
    assert progress.tables_failed == 1
    # Fixed, then re-run: recorded, and the tournament goes on.
    Tournament.objects.filter(pk=tournament.pk).update(options={})
    services.table_rerun(table=table)
    assert services.table_run(table_id=table.pk, worker="w", token="t2").outcome == "recorded"
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED


def test_settings_change_until_the_start_checked_as_at_creation() -> None:
    tournament = make_tournament(open_it=False, place_points=[5, 3, 1, 0])
    seed, commitment = tournament.seed, tournament.commitment
    services.tournament_update(tournament=tournament, rounds=5, name="Renamed")
    assert (tournament.rounds, tournament.name) == (5, "Renamed")
    with pytest.raises(ApplicationError, match="multiple of 10"):
        services.tournament_update(tournament=tournament, game="roi")
    # A new table size brings the default place points of that size.
    services.tournament_update(tournament=tournament, preset="classic-fr", table_size=5)
    assert (tournament.table_size, tournament.place_points) == (5, [4, 3, 2, 1, 0])
    with pytest.raises(ApplicationError, match="unknown tournament settings: seed"):
        services.tournament_update(tournament=tournament, seed="1")
    services.tournament_open(tournament=tournament)
    enter(tournament, BuiltinVersionFactory.create())
    with pytest.raises(ApplicationError, match="the game cannot change"):
        services.tournament_update(tournament=tournament, game="dutch")
    tournament.refresh_from_db()
    assert (tournament.seed, tournament.commitment) == (seed, commitment)
    enter(tournament, BuiltinVersionFactory.create())
    services.tournament_start(tournament=tournament)
    with pytest.raises(ApplicationError, match="only a draft or open one"):
        services.tournament_update(tournament=tournament, rounds=1)


@pytest.mark.parametrize(
    ("game", "preset", "deals", "size", "tricks_per_deal"),
    [
        ("roi", "classic", 10, 4, 13),
        ("dutch", "classic", 2, 3, 0),
        ("hearts", "two-player", 2, 2, 26),  # 13 cards each, then the 26-card stock
    ],
)
def test_every_game_plays_a_tournament(
    game: str, preset: str, deals: int, size: int, tricks_per_deal: int
) -> None:
    tournament = make_tournament(
        game=game, preset=preset, deals_per_table=deals, rounds=2, table_size=size
    )
    enter_builtins(tournament, ["heuristic", "random", "lowest", "random", "heuristic"])
    play(tournament)
    assert tournament.status == Tournament.Status.FINISHED
    deals_played = Deal.objects.filter(table__tournament=tournament)
    assert deals_played.count() == Table.objects.filter(tournament=tournament).count() * deals
    assert (
        Trick.objects.filter(deal__table__tournament=tournament).count()
        == tricks_per_deal * deals_played.count()
    )
    report = services.tournament_audit(tournament=tournament)
    assert report.ok, report.problems
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert [row.rank for row in rows] == [1, 2, 3, 4, 5]
    # Higher is better at the Roi: the winner of each table has the highest score.
    for table in Table.objects.filter(tournament=tournament):
        seats = list(table.seats.all())
        best = min(seats, key=lambda s: s.place or 0)
        scores = [s.score or 0 for s in seats]
        assert best.score == (max(scores) if game == "roi" else min(scores))
