"""The admin: every page of the tournaments app renders, and its actions call the services."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.tournaments.factories import enter_builtins, make_tournament
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    Entry,
    Fault,
    Rating,
    Round,
    Seat,
    Table,
    Tournament,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff() -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_every_page_renders_after_the_demo(staff: Client) -> None:
    call_command("demo", "--rounds", "2", "--deals", "2", stdout=io.StringIO())
    tournament = Tournament.objects.get()
    for model in (Tournament, Entry, Round, Table, Seat, Deal, Bot, BotVersion, Rating, Fault):
        name = model._meta.model_name
        page = staff.get(reverse(f"admin:tournaments_{name}_changelist"))
        assert page.status_code == 200, name
        row = model.objects.first()
        if row is not None:
            page = staff.get(reverse(f"admin:tournaments_{name}_change", args=[row.pk]))
            assert page.status_code == 200, name
    page = staff.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk]))
    content = page.content.decode()
    assert "vs table average" in content  # the standings
    assert tournament.commitment in content
    assert str(tournament.revealed_seed) in content
    listing = staff.get(reverse("admin:tournaments_tournament_changelist")).content.decode()
    assert "round 2/2, 4/4 tables" in listing


def test_actions_open_start_audit_cancel(staff: Client) -> None:
    tournament = make_tournament(open_it=False)
    url = reverse("admin:tournaments_tournament_changelist")

    def act(action: str) -> str:
        response = staff.post(
            url, {"action": action, "_selected_action": [tournament.pk]}, follow=True
        )
        assert response.status_code == 200
        return response.content.decode()

    assert "Opened: 1" in act("open_tournaments")
    enter_builtins(tournament, ["random", "lowest", "heuristic"])
    assert "Started: 1" in act("start_tournaments")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.RUNNING
    assert "the tournament is running" in act("open_tournaments")
    assert "0 deals of 0 tables replayed" in act("audit")
    assert "Cancelled: 1" in act("cancel_tournaments")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.CANCELLED


def test_editing_a_draft_goes_through_the_service(staff: Client) -> None:
    tournament = make_tournament(open_it=False)
    url = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    page = staff.get(url)
    form = page.context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        data.update({management.add_prefix(k): v for k, v in management.initial.items()})
    data["options"] = '{"jokers": true}'
    data["place_points"] = "[4, 2, 1, 0]"
    response = staff.post(url, data)
    assert response.status_code == 200
    assert "unknown option" in response.content.decode()
    data["options"] = "{}"
    data["rounds"] = 7
    response = staff.post(url, data)
    assert response.status_code == 302
    tournament.refresh_from_db()
    assert tournament.rounds == 7
