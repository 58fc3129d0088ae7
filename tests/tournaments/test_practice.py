"""Practice runs (services.practice): a version's "try it", played as a one-table tournament
through the tables' machinery, its author's alone, never rated, listed nowhere."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from judge.runner import Limits
from tests.tournaments.factories import (
    BotFactory,
    BuiltinVersionFactory,
    UserFactory,
    enter_builtins,
    file_version,
    make_tournament,
)
from tournaments import conf, selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import (
    BotVersion,
    Deal,
    Rating,
    Table,
    Tournament,
    TournamentSummary,
    Trick,
    WorkerHeartbeat,
)

pytestmark = pytest.mark.django_db


def _refusal(**kwargs: Any) -> ApplicationError:
    with pytest.raises(ApplicationError) as caught:
        services.practice_create(**kwargs)
    return caught.value


def test_a_practice_run_plays_its_deals_and_keeps_every_trick_for_the_replay() -> None:
    version = BuiltinVersionFactory.create(builtin="heuristic")
    owner = version.bot.owner
    run = services.practice_create(owner=owner, version=version, deals=3, opponent="random")
    assert (run.practice, run.status, run.rounds, run.deals_per_table) == (
        True,
        Tournament.Status.RUNNING,
        1,
        3,
    )
    assert run.organiser_id == owner.pk
    assert run.house_bot == "random"
    table = Table.objects.get(tournament=run)
    seats = list(table.seats.order_by("position"))
    assert [s.entry is not None for s in seats].count(True) == 1
    assert {s.house_bot for s in seats if s.entry is None} == {"random"}

    services.tournament_run_here(tournament=run)
    run.refresh_from_db()
    assert run.status == Tournament.Status.FINISHED
    deals = Deal.objects.filter(table=table)
    assert deals.count() == 3
    assert Trick.objects.filter(deal__in=deals).count() == 3 * 13
    assert all(d.replay.document for d in deals)  # stored, as the replay viewer reads it
    assert services.tournament_audit(tournament=run).ok
    assert not Rating.objects.exists()  # never rated
    assert not TournamentSummary.objects.exists()  # no standings pages to serve


def test_the_table_size_and_preset_come_from_the_engine_and_its_refusals_name_the_field() -> None:
    dutch = BuiltinVersionFactory.create(builtin="random", bot__game="dutch")
    owner = dutch.bot.owner
    run = services.practice_create(owner=owner, version=dutch, table_size=3, deals=1)
    assert run.table_size == 3
    assert run.options == {"players": 3}
    assert Table.objects.get(tournament=run).seats.count() == 3
    version = BuiltinVersionFactory.create(builtin="random", bot__owner=owner)
    refused = _refusal(owner=owner, version=version, table_size=9, deals=1)
    assert refused.extra["field"] == "table_size"
    # Whisthub passes across: the engine refuses 3 players, in its own words.
    refused = _refusal(owner=owner, version=version, table_size=3, deals=1)
    assert refused.extra["field"] == "table_size"
    assert "across" in refused.message
    refused = _refusal(owner=owner, version=version, preset="no-such-preset")
    assert refused.extra["field"] == "preset"
    roi = BuiltinVersionFactory.create(builtin="random", bot__game="roi", bot__owner=owner)
    refused = _refusal(owner=owner, version=roi, deals=2)
    assert refused.extra["field"] == "deals"
    assert "multiple of 10" in refused.message
    assert services.practice_create(owner=owner, version=roi, deals=10).game == "roi"


@pytest.mark.parametrize("deals", [0, 11, -1])
def test_the_number_of_deals_is_bounded(deals: int) -> None:
    version = BuiltinVersionFactory.create()
    refused = _refusal(owner=version.bot.owner, version=version, deals=deals)
    assert refused.extra["field"] == "deals"
    assert "from 1 to 10" in refused.message


def test_only_the_owners_ready_version_is_tried() -> None:
    version = BuiltinVersionFactory.create()
    stranger = UserFactory.create(is_staff=True)
    assert _refusal(owner=stranger, version=version).code == "not_owner"
    bot = BotFactory.create()
    for status in (BotVersion.Status.PENDING, BotVersion.Status.REJECTED):
        pending = file_version(bot, "first_legal", status=status)
        refused = _refusal(owner=bot.owner, version=pending)
        assert refused.code == "version_not_ready"
        assert status in refused.message
    unknown = _refusal(owner=version.bot.owner, version=version, opponent="grandmaster")
    assert unknown.extra["field"] == "opponent"
    assert not Tournament.objects.filter(practice=True).exists()


def test_an_author_has_at_most_so_many_runs_at_once_and_an_hour(settings: Any) -> None:
    settings.TAPIS_PRACTICE_ACTIVE = 2
    settings.TAPIS_PRACTICE_PER_HOUR = 3
    version = BuiltinVersionFactory.create()
    owner = version.bot.owner
    first = services.practice_create(owner=owner, version=version, deals=1)
    services.practice_create(owner=owner, version=version, deals=1)
    refused = _refusal(owner=owner, version=version, deals=1)
    assert refused.code == "practice_limit"
    assert "waiting or playing" in refused.message
    # Another author is not held back by this one.
    other = BuiltinVersionFactory.create()
    services.practice_create(owner=other.bot.owner, version=other, deals=1)
    services.tournament_run_here(tournament=first)
    services.practice_create(owner=owner, version=version, deals=1)  # the third this hour
    Tournament.objects.filter(practice=True, organiser=owner).update(
        status=Tournament.Status.FINISHED
    )
    refused = _refusal(owner=owner, version=version, deals=1)
    assert refused.code == "practice_limit"
    assert "last hour" in refused.message
    Tournament.objects.filter(practice=True).update(created_at=timezone.now() - timedelta(hours=2))
    services.practice_create(owner=owner, version=version, deals=1)


def test_a_failed_table_ends_its_run_and_a_tournaments_waits_for_its_organiser() -> None:
    version = BuiltinVersionFactory.create()
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    assert services.table_claim(table_id=table.pk, worker="w", token="t")
    assert services.table_fail(table_id=table.pk, token="t", error="Traceback...\nBoom: no")
    run.refresh_from_db()
    assert run.status == Tournament.Status.CANCELLED
    assert run.finished_at is not None
    assert not services.practice_table_failed(table_id=table.pk)  # once


def test_a_run_whose_worker_keeps_dying_ends_failed_not_running_for_ever() -> None:
    version = BuiltinVersionFactory.create()
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    now = timezone.now()
    report = None
    for n in range(conf.max_attempts()):
        at = now + timedelta(hours=n)
        assert services.table_claim(table_id=table.pk, worker="alive", token=f"t{n}", now=at)
        seen = at + timedelta(seconds=conf.lease_seconds() + 5)
        WorkerHeartbeat.objects.update_or_create(hostname="alive", defaults={"last_seen": seen})
        report = services.table_sweep(now=seen)
    assert report is not None
    assert report.failed == [table.pk]
    run.refresh_from_db()
    assert run.status == Tournament.Status.CANCELLED


def test_a_lost_worker_s_run_is_sent_again_and_finishes() -> None:
    version = BuiltinVersionFactory.create()
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    table = Table.objects.get(tournament=run)
    assert services.table_claim(table_id=table.pk, worker="gone", token="a")
    later = timezone.now() + timedelta(seconds=conf.lease_seconds() + 1)
    assert services.table_sweep(now=later).requeued == [table.pk]
    assert services.table_run(table_id=table.pk, worker="w2", token="b").outcome == "recorded"
    run.refresh_from_db()
    assert run.status == Tournament.Status.FINISHED


def test_a_practice_run_counts_in_no_statistic() -> None:
    """The preset's measured spread reads finished tournaments: never a practice run (lists,
    pages and the API: tests/pages/test_practice_pages.py)."""
    version = BuiltinVersionFactory.create(builtin="heuristic")
    for _ in range(2):
        run = services.practice_create(owner=version.bot.owner, version=version, deals=10)
        services.tournament_run_here(tournament=run)
    assert Tournament.objects.filter(practice=True, status="finished").count() == 2
    spread = selectors.preset_spread_source(game="hearts", preset="whisthub")
    assert spread.tournaments == 0


# -- The practice runs' fair share of the workers (TAPIS_PRACTICE_IN_FLIGHT) ----------------


def _sent(runs: list[Tournament]) -> list[int]:
    """The runs whose table is in flight (sent to the workers, or playing), in order."""
    tables = Table.objects.filter(tournament__in=runs)
    in_flight = tables.filter(status=Table.Status.RUNNING) | tables.filter(
        status=Table.Status.PENDING, queued_at__isnull=False
    )
    return sorted(in_flight.values_list("tournament_id", flat=True))


def test_many_authors_runs_never_have_more_than_the_cap_in_flight(settings: Any) -> None:
    """Twelve runs of six authors with room for three: three are sent, the others wait
    unsent; each run that ends sends the next one, an author's first run before anyone's
    second; every run is played in the end, and never more than three at once."""
    settings.TAPIS_PRACTICE_IN_FLIGHT = 3
    versions = [BuiltinVersionFactory.create() for _ in range(6)]
    runs = [
        services.practice_create(owner=v.bot.owner, version=v, deals=1)
        for v in versions
        for _ in range(2)
    ]
    by_pk = {run.pk: run for run in runs}
    # First come, first sent: the first author's two runs and the second's first.
    assert _sent(runs) == [runs[0].pk, runs[1].pk, runs[2].pk]
    assert services.practice_tables_in_flight() == 3
    waiting = Table.objects.filter(tournament__in=runs[3:])
    assert set(waiting.values_list("queued_at", flat=True)) == {None}
    # A sweep sends no waiting run while the slots are full, even long after.
    later = timezone.now() + timedelta(seconds=conf.pending_requeue_seconds() + 1)
    report = services.table_sweep(now=later)
    assert sorted(report.resent) == sorted(
        Table.objects.filter(tournament__in=runs[:3]).values_list("pk", flat=True)
    )
    assert _sent(runs) == [runs[0].pk, runs[1].pk, runs[2].pk]

    # The first run ends: its slot goes to the third author (no run in flight), not to the
    # second author's second run (one in flight) though it waited longer.
    first = Table.objects.get(tournament=runs[0])
    assert services.table_run(table_id=first.pk, worker="w", token="t0").outcome == "recorded"
    assert _sent(runs) == [runs[1].pk, runs[2].pk, runs[4].pk]

    played = [runs[0].pk]
    while len(played) < len(runs):
        table = (
            Table.objects.filter(
                tournament__in=runs, status=Table.Status.PENDING, queued_at__isnull=False
            )
            .order_by("queued_at", "pk")
            .first()
        )
        assert table is not None, "a run waits with no run in flight to free its slot"
        outcome = services.table_run(table_id=table.pk, worker="w", token=f"t{table.pk}")
        assert outcome.outcome == "recorded"
        played.append(table.tournament_id)
        assert len(_sent(runs)) == min(3, len(runs) - len(played))
    assert sorted(played) == sorted(by_pk)
    assert set(Tournament.objects.filter(pk__in=by_pk).values_list("status", flat=True)) == {
        Tournament.Status.FINISHED
    }


def test_a_waiting_run_is_sent_by_the_sweep_when_its_message_or_its_worker_is_lost(
    settings: Any,
) -> None:
    """Nothing waits for ever: a run whose message could not be sent, or whose worker gave its
    table back, waits unsent again, and the next sweep (or the next run to end) sends it."""
    settings.TAPIS_PRACTICE_IN_FLIGHT = 1
    version = BuiltinVersionFactory.create()
    owner = version.bot.owner
    first = services.practice_create(owner=owner, version=version, deals=1)
    second = services.practice_create(owner=owner, version=version, deals=1)
    assert _sent([first, second]) == [first.pk]
    table = Table.objects.get(tournament=first)
    # The broker refused the message (queue.table_send clears queued_at): the sweep sends it.
    Table.objects.filter(pk=table.pk).update(queued_at=None)
    assert services.practice_tables_in_flight() == 0
    assert services.table_sweep().resent == [table.pk]
    assert _sent([first, second]) == [first.pk]
    # Its worker gives it back (the database was away): pending, unsent, sent by the sweep.
    assert services.table_claim(table_id=table.pk, worker="w", token="a")
    assert services.table_release(table_id=table.pk, token="a", reason="database: away")
    assert services.table_sweep().resent == [table.pk]
    assert services.table_run(table_id=table.pk, worker="w", token="b").outcome == "recorded"
    assert _sent([first, second]) == [second.pk]
    # A table that fails ends its run and frees its slot too.
    other = services.practice_create(owner=owner, version=version, deals=1)
    assert _sent([second, other]) == [second.pk]
    second_table = Table.objects.get(tournament=second)
    assert services.table_claim(table_id=second_table.pk, worker="w", token="c")
    assert services.table_fail(table_id=second_table.pk, token="c", error="Boom")
    assert _sent([second, other]) == [other.pk]


def test_a_tournaments_tables_are_sent_at_once_whatever_the_practice_runs(
    settings: Any,
) -> None:
    settings.TAPIS_PRACTICE_IN_FLIGHT = 1
    for _ in range(3):
        version = BuiltinVersionFactory.create()
        services.practice_create(owner=version.bot.owner, version=version, deals=1)
    assert services.practice_tables_in_flight() == 1
    tournament = make_tournament(rounds=1, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 8)
    services.tournament_start(tournament=tournament)
    tables = Table.objects.filter(tournament=tournament)
    assert tables.count() == 2
    assert None not in set(tables.values_list("queued_at", flat=True))


def test_a_practice_run_has_the_practice_bank(settings: Any) -> None:
    settings.TAPIS_PRACTICE_BANK_SECONDS = 0.5
    version = BuiltinVersionFactory.create()
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    assert (run.bank_seconds, run.decision_seconds) == (0.5, Limits().decision)
