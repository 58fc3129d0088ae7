"""``manage.py demo`` and ``manage.py audit_tournament``."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tournaments import selectors
from tournaments.models import Deal, Tournament

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_demo_plays_a_finished_tournament_once() -> None:
    out = io.StringIO()
    call_command("demo", stdout=out)
    tournament = Tournament.objects.get()
    assert tournament.status == Tournament.Status.FINISHED
    assert tournament.entries.count() == 8
    rows = selectors.standings_for_tournament(tournament=tournament)
    assert [row.rank for row in rows] == list(range(1, 9))
    assert "6 tables played" in out.getvalue()

    again = io.StringIO()
    call_command("demo", stdout=again)
    assert Tournament.objects.count() == 1
    assert "already played" in again.getvalue()
    call_command("demo", "--again", "--rounds", "1", stdout=io.StringIO())
    assert Tournament.objects.filter(status=Tournament.Status.FINISHED).count() == 2


def test_audit_tournament_reports_and_fails_on_a_tampered_deal() -> None:
    call_command("demo", "--rounds", "1", "--deals", "2", stdout=io.StringIO())
    tournament = Tournament.objects.get()
    out = io.StringIO()
    call_command("audit_tournament", str(tournament.pk), stdout=out)
    assert "4 deals of 2 tables replayed" in out.getvalue()
    assert "matches the commitment" in out.getvalue()

    deal = Deal.objects.filter(table__tournament=tournament).first()
    assert deal is not None
    deal.points = [0, 0, 0, 26]  # impossible in whisthub: taking all 26 is a moon shot
    deal.save()
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("audit_tournament", str(tournament.pk), stdout=out)
    assert exit_info.value.code == 1
    assert "the row says [0, 0, 0, 26]" in out.getvalue()
