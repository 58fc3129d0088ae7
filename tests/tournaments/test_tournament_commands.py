"""``manage.py demo`` and ``manage.py audit_tournament``."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tournaments import selectors, services
from tournaments.management.commands.demo import DEMO_NAME, GALLERY, PLAYING_NAME, SLOW_SECONDS
from tournaments.models import Deal, Table, Tournament

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


def test_the_demo_gallery_has_a_page_of_each_kind_for_every_game(client: Client) -> None:
    # A member's own practice run, private to them, made before the demo's.
    member = get_user_model().objects.create_user("member")
    bot = services.bot_create(owner=member, name="Mine", game="hearts")
    mine = services.practice_create(
        owner=member, version=services.bot_version_create(bot=bot, builtin="lowest"), deals=1
    )
    services.tournament_run_here(tournament=mine, worker="tests")
    first, second = io.StringIO(), io.StringIO()
    call_command("demo", "--gallery", "--rounds", "1", "--deals", "2", stdout=first)
    call_command("demo", "--gallery", stdout=second)  # the second time adds nothing
    # Each time, the demo names its own practice run (Alice's), never the member's.
    own = Tournament.objects.get(practice=True, entries__version__bot__owner__username="alice")
    for out in (first, second):
        assert f"Demo practice run: /practice/{own.pk}/" in out.getvalue()
        assert f"/practice/{mine.pk}/" not in out.getvalue()
    # "Demo: playing now": two slower uploaded bots, started and left to the worker.
    playing = Tournament.objects.get(name=PLAYING_NAME)
    assert playing.status == Tournament.Status.RUNNING
    assert Table.objects.filter(tournament=playing, status=Table.Status.DONE).count() == 0
    slow = [e.version for e in playing.entries.select_related("version") if not e.version.builtin]
    assert len(slow) == 2
    assert all(v.status == "ready" and v.report["mean_time"] >= SLOW_SECONDS for v in slow)
    home = client.get(reverse("home")).content.decode()
    assert PLAYING_NAME in home.split("Running now")[1].split("Open for registration")[0]
    assert f"{PLAYING_NAME!r} (id {playing.pk}): running" in second.getvalue()
    tournaments = Tournament.objects.filter(practice=False).order_by("pk")
    assert tournaments.count() == 2 + len(GALLERY)
    finished = tournaments.filter(status=Tournament.Status.FINISHED)
    assert {t.game for t in finished} == {"hearts", "roi", "dutch"}
    assert finished.filter(duplicate=True).exists()
    opened = tournaments.get(status=Tournament.Status.OPEN)
    assert opened.entries.exists()
    # The home page starts from the cup, the last finished.
    home = client.get(reverse("home")).content.decode()
    cup = tournaments.get(name=DEMO_NAME)
    assert reverse("tournaments:tournament-detail", args=[cup.pk]) in home.split("Running now")[0]
    assert opened.name in home
    for tournament in tournaments:
        page = client.get(reverse("tournaments:tournament-detail", args=[tournament.pk]))
        assert page.status_code == 200, tournament.name
    for tournament in finished:
        deal = Deal.objects.filter(table__tournament=tournament).order_by("pk").first()
        assert deal is not None, tournament.name
        replay = client.get(reverse("tournaments:deal", args=[deal.pk]))
        assert replay.status_code == 200, tournament.name
        assert ("Traveller:" in replay.content.decode()) == tournament.duplicate
        table = client.get(reverse("tournaments:table-detail", args=[deal.table_id]))
        assert table.status_code == 200, tournament.name
    # A practice run, played: its page and replays answer its author and staff (the demo
    # administrator), and nobody else; no list shows it.
    practice = own
    assert practice.status == Tournament.Status.FINISHED
    assert practice.name not in home
    page = reverse("tournaments:practice", args=[practice.pk])
    deal = Deal.objects.filter(table__tournament=practice).order_by("pk").first()
    assert deal is not None
    assert client.get(reverse("tournaments:deal", args=[deal.pk])).status_code == 404
    client.force_login(get_user_model().objects.create_user("admin", is_staff=True))
    assert "Score sheet" in client.get(page).content.decode()
    assert client.get(reverse("tournaments:deal", args=[deal.pk])).status_code == 200


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
