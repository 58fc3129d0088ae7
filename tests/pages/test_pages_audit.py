"""The audit pages show each check with its verdict (services.audit's ``checks``), and the
API's deal audit carries them too."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld
from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments import services
from tournaments.models import Deal, Seat, Table, Trick

pytestmark = pytest.mark.django_db

DEAL_CHECKS = ["log", "seed", "actions", "points", "tricks", "decisions", "passes"]


def verdicts(html: str) -> list[tuple[str, str]]:
    """(check, verdict) of each row of the page's checks table, in order."""
    rows = re.findall(
        r'<tr data-verdict="([^"]+)">\s*<th scope="row">([^<]+)</th>\s*'
        r'<td><span class="status ([\w-]+)">([^<]+)</span>',
        html,
    )
    for verdict, _, css, word in rows:
        assert verdict == word  # the verdict is said in words, not by colour alone
        assert (
            css
            == {
                "passed": "status-done",
                "failed": "status-failed",
                "not checked": "status-pending",
            }[verdict]
        )
    return [(html_lib.unescape(description), verdict) for verdict, description, _, _ in rows]


def first_deal(world: SiteWorld) -> Deal:
    deal = Deal.objects.filter(table__tournament=world.finished).order_by("pk").first()
    assert deal is not None
    return deal


def test_a_deals_audit_lists_every_check_passed(site_world: SiteWorld, client: Client) -> None:
    deal = first_deal(site_world)
    audit = services.deal_audit(deal=deal)
    assert [c.name for c in audit.checks] == DEAL_CHECKS
    assert all(c.verdict is services.Verdict.PASSED for c in audit.checks)
    html = client.get(reverse("tournaments:deal-audit", args=[deal.pk])).content.decode()
    rows = verdicts(html)
    assert [description for description, _ in rows] == [c.description for c in audit.checks]
    assert {verdict for _, verdict in rows} == {"passed"}
    assert "Every check passed." in html


def test_a_tampered_trick_fails_its_own_check_only(site_world: SiteWorld, client: Client) -> None:
    deal = first_deal(site_world)
    trick = Trick.objects.filter(deal=deal).order_by("number").first()
    assert trick is not None
    trick.winner = (trick.winner + 1) % 4
    trick.save()
    html = client.get(reverse("tournaments:deal-audit", args=[deal.pk])).content.decode()
    rows = dict(verdicts(html))
    failed = [d for d, v in rows.items() if v == "failed"]
    assert failed == [services.audit.DEAL_CHECK_WORDS["tricks"]]
    assert "the trick rows differ from the replay" in html
    assert "The audit found 1 problem." in html


def test_an_illegal_log_fails_the_replay_and_leaves_the_rest_not_checked(
    site_world: SiteWorld, client: Client
) -> None:
    deal = first_deal(site_world)
    log = dict(deal.log)
    actions = [list(a) for a in log["actions"]]
    actions[-1], actions[-2] = actions[-2], actions[-1]  # the last two cards swapped
    log["actions"] = actions
    deal.log = log
    deal.save()
    audit = services.deal_audit(deal=deal)
    by_name = {c.name: c for c in audit.checks}
    assert by_name["actions"].verdict is services.Verdict.FAILED
    for name in ("points", "tricks", "decisions", "passes"):
        assert by_name[name].verdict is services.Verdict.NOT_CHECKED
        assert by_name[name].detail == "the re-play stopped at the faulty action"
    assert audit.problems == by_name["actions"].problems
    html = client.get(reverse("tournaments:deal-audit", args=[deal.pk])).content.decode()
    assert [v for _, v in verdicts(html)] == ["passed", "passed", "failed"] + ["not checked"] * 4
    # The API says the same, with the checks.
    data = client.get(reverse("api:deal-audit", args=[deal.pk])).json()
    assert data["ok"] is False
    assert [(c["name"], c["verdict"]) for c in data["checks"]] == [
        (c.name, c.verdict.value) for c in audit.checks
    ]
    assert data["problems"] == list(audit.problems)


def test_a_tournaments_audit_lists_its_checks_and_the_deals_checks_over_every_deal(
    site_world: SiteWorld, client: Client
) -> None:
    tournament = site_world.finished
    url = reverse("tournaments:tournament-audit", args=[tournament.pk])
    html = client.get(url).content.decode()
    rows = verdicts(html)
    assert len(rows) == 3 + len(DEAL_CHECKS) + 1
    assert rows[0] == (
        "The seed matches the commitment published when the tournament was created.",
        "passed",
    )
    assert {verdict for _, verdict in rows} == {"passed"}
    assert "over 4 deals" in html  # 2 tables of 2 deals
    assert "over 2 tables" in html
    # Kept once made (a finished tournament never changes): the second visit says so.
    again = client.get(url).content.decode()
    assert "this audit was made once and kept" in again
    assert verdicts(again) == rows


def test_a_tournaments_audit_fails_the_seats_check_for_a_wrong_score(
    site_world: SiteWorld, client: Client
) -> None:
    tournament = site_world.finished
    seat = Seat.objects.filter(table__tournament=tournament).order_by("pk").first()
    assert seat is not None
    seat.score = (seat.score or 0) + 1
    seat.save()
    report = services.tournament_audit(tournament=tournament)
    by_name = {c.name: c for c in report.checks}
    assert by_name["seats"].verdict is services.Verdict.FAILED
    assert report.problems == by_name["seats"].problems
    assert not report.ok
    html = client.get(reverse("tournaments:tournament-audit", args=[tournament.pk])).content
    rows = dict(verdicts(html.decode()))
    assert rows[services.audit.SEATS_CHECK[1]] == "failed"
    assert sum(v == "failed" for v in rows.values()) == 1


def test_a_running_tournaments_seed_checks_wait_for_the_seed(client: Client) -> None:
    tournament = make_tournament(name="Running audit", rounds=2, deals_per_table=1)
    enter_builtins(tournament, ["random"] * 4)
    services.tournament_start(tournament=tournament)
    table = Table.objects.get(tournament=tournament)
    assert services.table_run(table_id=table.pk, worker="test", token="t").outcome == "recorded"
    report = services.tournament_audit(tournament=tournament, shown_only=True)
    by_name = {c.name: c for c in report.checks}
    assert report.commitment_ok is None
    for name in ("commitment", "table_seeds"):
        assert by_name[name].verdict is services.Verdict.NOT_CHECKED
        assert by_name[name].detail == "the seed is secret until the end"
    assert by_name["deals_present"].verdict is services.Verdict.PASSED
    assert report.ok
    html = client.get(reverse("tournaments:tournament-audit", args=[tournament.pk])).content
    assert [v for _, v in verdicts(html.decode())][:2] == ["not checked", "not checked"]
    assert b"the seed is secret until the end" in html
