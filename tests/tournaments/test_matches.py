"""Matches (tournaments/services/matches.py): "is v2 better than v1?" played as duplicate deals
in batches, decided by the sequential test; against PostgreSQL, in this process and on a real
Celery worker."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.conftest import LiveWorker
from tests.tournaments.factories import BotFactory, BuiltinVersionFactory, UserFactory
from tournaments import services
from tournaments.errors import ApplicationError
from tournaments.models import BotVersion, Match, MatchBatch
from tournaments.statistics.spread import preset_spread
from tournaments.statistics.sprt import MIN_DEALS, Verdict, sprt, sprt_expected_deals

pytestmark = pytest.mark.django_db

# The heuristic player against the random one in Hearts: far apart (several points a deal),
# so with H1 at 2 points a deal the test decides at its first look (64 deals).
STRONG = {"d0": 0.0, "d1": 2.0, "max_deals": 256, "batch_deals": 32}


def version(owner: User, builtin: str, *, status: str = BotVersion.Status.READY) -> BotVersion:
    bot = BotFactory(owner=owner, game="hearts")
    return BuiltinVersionFactory(bot=bot, builtin=builtin, status=status)


def batches(match: Match) -> list[MatchBatch]:
    return list(MatchBatch.objects.filter(match=match).order_by("number"))


def test_the_stronger_bot_is_found_better_in_process() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    assert match.preset == "whisthub"
    services.match_run_here(match=match)
    match.refresh_from_db()
    assert (match.status, match.verdict) == (Match.Status.DECIDED, "accept_h1")
    played = batches(match)
    assert [b.status for b in played] == [MatchBatch.Status.DONE] * len(played)
    differences = [d for b in played for d in b.differences]
    assert match.deals == len(differences) >= MIN_DEALS
    # The running sums are those of the recorded differences, and the test on them decides.
    test = sprt(differences, d0=0.0, d1=2.0, max_deals=256)
    assert test.verdict is Verdict.ACCEPT_H1
    assert match.llr == pytest.approx(test.llr)
    assert match.total == pytest.approx(sum(differences))
    # The seats rotate from batch to batch; each batch deals from its own seed.
    assert [b.seat for b in played] == [i % 4 for i in range(len(played))]
    assert len({b.seed for b in played}) == len(played)


def test_the_weaker_bot_is_found_not_better() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner,
        candidate=version(owner, "random"),
        baseline=version(owner, "heuristic"),
        **STRONG,
    )
    services.match_run_here(match=match)
    match.refresh_from_db()
    assert (match.status, match.verdict) == (Match.Status.DECIDED, "accept_h0")
    assert match.total < 0


def test_a_match_stops_at_its_cap_without_a_decision() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner,
        candidate=version(owner, "heuristic"),
        baseline=version(owner, "heuristic"),
        d0=-0.01,
        d1=0.01,  # two hypotheses far closer than the noise: no decision in 64 deals
        max_deals=64,
        batch_deals=40,
    )
    services.match_run_here(match=match)
    match.refresh_from_db()
    assert (match.status, match.verdict, match.deals) == (Match.Status.CAPPED, "capped", 64)
    assert [b.deals for b in batches(match)] == [40, 24]


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        ({"candidate": "theirs"}, "not_owner", "candidate"),
        ({"candidate": "pending"}, "version_not_ready", "candidate"),
        ({"baseline": "mine", "baseline_builtin": "random"}, "invalid", "baseline"),
        ({"baseline_builtin": ""}, "invalid", "baseline"),
        ({"baseline": "same"}, "invalid", "baseline"),
        ({"baseline_builtin": "grandmaster"}, "unknown_builtin", "baseline_builtin"),
        ({"house_bot": "grandmaster"}, "unknown_builtin", "house_bot"),
        ({"d1": -1.0}, "invalid", "d1"),
        ({"alpha": 0.7}, "invalid", "alpha"),
        ({"max_deals": 10}, "invalid", "max_deals"),
        ({"batch_deals": 0}, "invalid", "batch_deals"),
        ({"preset": "nope"}, "invalid_option", "preset"),
    ],
)
def test_match_create_refuses_what_it_cannot_play(
    change: dict[str, Any], code: str, field: str
) -> None:
    owner = UserFactory()
    mine = version(owner, "heuristic")
    chosen = {
        "theirs": version(UserFactory(), "heuristic"),
        "pending": version(owner, "heuristic", status=BotVersion.Status.PENDING),
        "mine": version(owner, "random"),
        "same": mine,
    }
    kwargs: dict[str, Any] = {"candidate": mine, "baseline_builtin": "random", "d0": 0.0}
    for key, value in change.items():
        kwargs[key] = chosen.get(value, value) if isinstance(value, str) else value
    with pytest.raises(ApplicationError) as refused:
        services.match_create(owner=owner, **kwargs)
    assert (refused.value.code, refused.value.extra.get("field")) == (code, field)
    assert not Match.objects.exists()


def test_defaults_come_from_the_presets_measured_spread() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random"
    )
    paired = preset_spread("hearts", "whisthub").paired()
    assert match.d1 == pytest.approx(0.2 * paired, abs=0.01)
    expected = sprt_expected_deals(d0=0.0, d1=match.d1, sd=paired)
    assert match.max_deals == max(128, -(-4 * expected // 1))


def test_matches_share_the_slots_one_batch_in_flight_each(settings: Any) -> None:
    settings.TAPIS_MATCH_BATCHES = 1
    owner = UserFactory()
    first = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    second = services.match_create(
        owner=owner, candidate=version(owner, "lowest"), baseline_builtin="random", **STRONG
    )
    assert (len(batches(first)), len(batches(second))) == (1, 0)  # the one slot is taken
    batch = batches(first)[0]
    services.match_batch_run(batch_id=batch.pk, worker="test", token="t1")
    # The slot goes to the match with the fewest deals: the second one, not the first again.
    assert (len(batches(first)), len(batches(second))) == (1, 1)
    settings.TAPIS_MATCH_BATCHES = 2
    services.match_sweep()
    assert (len(batches(first)), len(batches(second))) == (2, 1)


def test_a_batch_is_recorded_once_under_its_current_claim() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    batch = batches(match)[0]
    assert services.match_batch_run(batch_id=batch.pk, worker="a", token="t1")["outcome"] == (
        "recorded"
    )
    again = services.match_batch_run(batch_id=batch.pk, worker="b", token="t2")
    assert again["outcome"] == "skipped"
    match.refresh_from_db()
    assert match.deals == 32


def test_the_sweep_sends_again_a_batch_whose_worker_died() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    batch = batches(match)[0]
    past = timezone.now() - timedelta(hours=1)
    MatchBatch.objects.filter(pk=batch.pk).update(
        status=MatchBatch.Status.RUNNING, claim_token="dead", attempts=1, lease_expires_at=past
    )
    assert services.match_sweep() == [batch.pk]
    batch.refresh_from_db()
    assert (batch.status, batch.claim_token) == (MatchBatch.Status.PENDING, "")
    # The dead worker's claim can no longer record.
    assert services.match_batch_run(batch_id=batch.pk, worker="b", token="t2")["outcome"] == (
        "recorded"
    )
    assert MatchBatch.objects.get(pk=batch.pk).attempts == 2


def test_a_cancelled_match_plays_no_further_batch() -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    services.match_cancel(match=match)
    assert services.match_batch_run(batch_id=batches(match)[0].pk, worker="a", token="t")[
        "outcome"
    ] == ("skipped")
    with pytest.raises(ApplicationError):
        services.match_cancel(match=match)


@pytest.mark.slow
def test_a_match_on_a_real_worker_reaches_a_verdict(live_worker: LiveWorker) -> None:
    """The heuristic player against the random one, batch after batch on the worker through
    the tables' queue and sandbox, until the sequential test decides."""
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        match.refresh_from_db()
        if match.status != Match.Status.RUNNING:
            break
        time.sleep(0.3)
    else:
        pytest.fail(f"the match did not end: {match.deals} deals\n{live_worker.log()}")
    assert (match.status, match.verdict) == (Match.Status.DECIDED, "accept_h1"), match.error
    played = batches(match)
    assert {b.claimed_by for b in played} != {""}
    assert match.deals == sum(len(b.differences) for b in played) >= MIN_DEALS


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------


def test_the_match_pages_start_a_match_and_show_its_progress(client: Any) -> None:
    owner = UserFactory()
    mine = version(owner, "heuristic")
    client.force_login(owner)
    page = client.get("/matches/")
    assert page.status_code == 200
    assert f'value="{mine.pk}"' in page.content.decode()
    refused = client.post("/matches/", {"candidate": mine.pk, "baseline": "bogre"})
    assert refused.status_code == 400
    assert "ogre" in refused.content.decode()  # the service's refusal, next to the field
    assert not Match.objects.exists()
    started = client.post(
        "/matches/", {"candidate": mine.pk, "baseline": "brandom", "d1": "2", "max_deals": "256"}
    )
    match = Match.objects.get()
    assert started.status_code == 302
    assert started["Location"] == f"/matches/{match.pk}/"
    detail = client.get(f"/matches/{match.pk}/").content.decode()
    assert f'hx-get="/matches/{match.pk}/live/"' in detail
    assert "<span data-deals>0</span>" in detail
    assert client.get(f"/matches/{match.pk}/live/").status_code == 200  # polling goes on
    services.match_run_here(match=match)
    live = client.get(f"/matches/{match.pk}/live/")
    assert live.status_code == 286  # htmx: stop polling, the match is over
    assert "<strong>better</strong>" in live.content.decode()
    listed = client.get("/matches/").content.decode()
    assert f"/matches/{match.pk}/" in listed


def test_a_match_page_is_its_owners(client: Any) -> None:
    owner = UserFactory()
    match = services.match_create(
        owner=owner, candidate=version(owner, "heuristic"), baseline_builtin="random", **STRONG
    )
    assert client.get(f"/matches/{match.pk}/").status_code == 302  # to the login page
    client.force_login(UserFactory())
    assert client.get(f"/matches/{match.pk}/").status_code == 404
    assert client.get(f"/matches/{match.pk}/live/").status_code == 404
    client.force_login(UserFactory(is_staff=True))
    assert client.get(f"/matches/{match.pk}/").status_code == 200
