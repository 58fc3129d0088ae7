"""Tournaments played by a real Celery worker (a subprocess) on the real Redis broker and the
real PostgreSQL database, with sandboxed bots."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.conf import settings as conf_settings
from django.db.models import Count
from django.utils import timezone

from tests.conftest import LiveWorker
from tests.tournaments.factories import (
    BOTS_DIR,
    BotFactory,
    BuiltinVersionFactory,
    UserFactory,
    enter,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import conf, selectors, services
from tournaments.models import BotVersion, Deal, Decision, Fault, Table, Tournament, Trick

pytestmark = pytest.mark.slow


def wait_for(condition: Callable[[], bool], timeout: float, worker: LiveWorker, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}\n{worker.log()}")


def finished(tournament: Tournament) -> Callable[[], bool]:
    def check() -> bool:
        tournament.refresh_from_db()
        return tournament.status == Tournament.Status.FINISHED

    return check


def assert_recorded_once(tournament: Tournament) -> None:
    """Every table done, with exactly its deals, tricks and decisions, none twice."""
    tables = Table.objects.filter(tournament=tournament)
    assert set(tables.values_list("status", flat=True)) == {Table.Status.DONE}
    per_table = dict(
        Deal.objects.filter(table__tournament=tournament)
        .values_list("table_id")
        .annotate(n=Count("pk"))
        .values_list("table_id", "n")
    )
    assert per_table == dict.fromkeys(
        tables.values_list("pk", flat=True), tournament.deals_per_table
    )
    deals = Deal.objects.filter(table__tournament=tournament)
    assert Trick.objects.filter(deal__in=deals).count() == 13 * deals.count()
    assert Decision.objects.filter(deal__in=deals).count() == sum(d.decisions for d in deals)
    assert services.tournament_audit(tournament=tournament).ok


def test_workers_play_a_full_tournament_with_a_faulty_bot(live_worker: LiveWorker) -> None:
    tournament = make_tournament(rounds=3, deals_per_table=4, max_faults=2)
    enter_builtins(tournament, ["heuristic", "lowest", "random", "random", "heuristic"])
    enter(tournament, file_version(BotFactory.create(), "first_legal"))
    enter(tournament, file_version(BotFactory.create(), "last_legal"))
    cheat = enter(tournament, file_version(BotFactory.create(), "illegal"))

    services.tournament_start(tournament=tournament)
    wait_for(finished(tournament), 180, live_worker, "the tournament to finish")

    assert_recorded_once(tournament)
    tables = Table.objects.filter(tournament=tournament)
    assert tables.count() == 6
    assert all(t.claimed_by.startswith("tapis-test-") for t in tables)
    assert all(t.attempts == 1 for t in tables)
    assert Fault.objects.filter(entry=cheat, kind="illegal").exists()
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert [row.rank for row in rows] == list(range(1, 9))
    assert tournament.revealed_seed is not None


def test_a_worker_killed_mid_table_loses_nothing(live_worker: LiveWorker) -> None:
    # Slow sandboxed bots: a table takes several seconds, so the kill lands in the middle.
    tournament = make_tournament(rounds=2, deals_per_table=4)
    for _ in range(8):
        enter(tournament, file_version(BotFactory.create(), "slow"))
    services.tournament_start(tournament=tournament)
    running = Table.objects.filter(tournament=tournament, status=Table.Status.RUNNING)
    wait_for(lambda: running.count() == 2, 60, live_worker, "both tables of round 1 to start")
    time.sleep(1.5)

    live_worker.kill()

    killed = list(running.values_list("pk", flat=True))
    assert len(killed) == 2
    assert not Deal.objects.filter(table__in=killed).exists()
    # A new worker starts; the sweep finds the dead worker's leases expired and re-queues.
    live_worker.start()
    later = timezone.now() + timedelta(seconds=conf.lease_seconds() + 1)
    report = services.table_sweep(now=later)
    assert sorted(report.requeued) == sorted(killed)
    wait_for(finished(tournament), 180, live_worker, "the tournament to finish")

    assert_recorded_once(tournament)
    # Claimed twice; the kill (the worker gone, not the table's play) gave its attempt back.
    assert all((t.claims, t.attempts) == (2, 1) for t in Table.objects.filter(pk__in=killed))
    assert Table.objects.filter(tournament=tournament).count() == 4


def test_a_bot_that_sleeps_past_its_time_gets_a_finished_practice_run_that_says_so(
    live_worker: LiveWorker,
) -> None:
    """A practice run's clock is short (TAPIS_PRACTICE_BANK_SECONDS): a bot that never
    answers in time runs out of it, the judge plays for it, and the run finishes with the
    timeouts in plain words on its page."""
    from django.test import Client
    from django.urls import reverse

    bot = BotFactory.create(name="Sleepy")
    run = services.practice_create(
        owner=bot.owner, version=file_version(bot, "sleeper"), deals=1, opponent="random"
    )
    assert run.bank_seconds == conf_settings.TAPIS_PRACTICE_BANK_SECONDS
    wait_for(finished(run), 120, live_worker, "the practice run of a sleeper")
    faults = Fault.objects.filter(table__tournament=run)
    assert {fault.kind for fault in faults} == {"timeout"}
    assert faults.count() == run.max_faults  # then a built-in bot took its seat
    assert Deal.objects.filter(table__tournament=run).count() == 1
    client = Client()
    client.force_login(bot.owner)
    html = client.get(reverse("tournaments:practice", args=[run.pk])).content.decode()
    assert "ran out of time at deal 1, decision 1" in html, html


def test_a_tournaments_table_queued_after_30_practice_runs_is_played_before_most_of_them(
    live_worker: LiveWorker,
) -> None:
    """Practice runs have a fair share of the workers (TAPIS_PRACTICE_IN_FLIGHT): thirty runs
    of fifteen authors send only that many tables to the queue, so a tournament's table
    queued after them is played before all the others, which are then all played."""
    live_worker.stop()  # the queue is filled first, then the worker serves it in order
    cap = services.practice_in_flight_cap()
    runs = []
    for _ in range(15):
        version = BuiltinVersionFactory.create()
        for _ in range(2):
            runs.append(services.practice_create(owner=version.bot.owner, version=version, deals=1))
    assert services.practice_tables_in_flight() == cap
    tournament = make_tournament(rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 4)
    services.tournament_start(tournament=tournament)
    live_worker.start()

    wait_for(finished(tournament), 120, live_worker, "the tournament to finish")
    practice = Table.objects.filter(tournament__practice=True)
    wait_for(
        lambda: not Tournament.objects.filter(practice=True, status="running").exists(),
        180,
        live_worker,
        "every practice run to finish",
    )
    assert set(practice.values_list("status", flat=True)) == {Table.Status.DONE}
    assert practice.count() == 30
    table = Table.objects.get(tournament=tournament)
    assert table.started_at is not None
    before = practice.filter(started_at__lt=table.started_at).count()
    assert before <= cap, f"{before} practice tables were played before the tournament's"


def test_an_upload_is_validated_by_a_worker(live_worker: LiveWorker) -> None:
    bot = services.bot_create(owner=UserFactory.create(), name="Uploaded", game="hearts")
    source = (BOTS_DIR / "first_legal.py").read_bytes()
    version = services.bot_version_create(bot=bot, content=source, filename="bot.py")

    def validated() -> bool:
        version.refresh_from_db()
        return version.status in (BotVersion.Status.READY, BotVersion.Status.REJECTED)

    wait_for(validated, 60, live_worker, "the validation")
    assert version.status == BotVersion.Status.READY, version.report
    assert version.report["decisions"] > 0


def test_a_practice_run_is_played_by_a_worker_and_replayed(live_worker: LiveWorker) -> None:
    """A version's "try it", end to end: queued on commit, played by the worker in the
    sandbox against built-in bots, every trick recorded, its page linking each deal's replay;
    a bot that crashes gives a finished run whose page says so in plain words."""
    from django.test import Client
    from django.urls import reverse

    bot = BotFactory.create(name="Uploaded")
    runs = {
        name: services.practice_create(
            owner=bot.owner, version=file_version(bot, name), deals=2, opponent="random"
        )
        for name in ("first_legal", "crash")
    }
    for name, run in runs.items():
        wait_for(finished(run), 120, live_worker, f"the practice run of {name}")
    assert_recorded_once(runs["first_legal"])
    client = Client()
    client.force_login(bot.owner)
    for name, run in runs.items():
        html = client.get(reverse("tournaments:practice", args=[run.pk])).content.decode()
        deals = list(Deal.objects.filter(table__tournament=run).order_by("index"))
        assert len(deals) == 2, name
        for deal in deals:
            assert reverse("tournaments:deal", args=[deal.pk]) in html, name
            replay = client.get(reverse("tournaments:deal", args=[deal.pk]))
            assert replay.status_code == 200, name
        assert ("crashed" in html) is (name == "crash"), html
    fault = Fault.objects.get(table__tournament=runs["crash"])
    assert fault.kind == "crash"
