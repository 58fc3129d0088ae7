"""One TournamentSettings value: its defaults are the model's and the judge's, and every entry
point (the service, the API, the admin) refuses the same out-of-bounds values."""

from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from judge.runner import Limits
from tests.tournaments.factories import UserFactory, admin_change_data, make_tournament
from tournaments import services
from tournaments.errors import ApplicationError
from tournaments.models import Tournament
from tournaments.tournament_settings import BOUNDS, DEFAULTS, TournamentSettings


def test_the_defaults_are_the_judges_and_the_models() -> None:
    judge = Limits()
    assert DEFAULTS["decision_seconds"] == judge.decision
    assert DEFAULTS["bank_seconds"] == judge.bank
    assert DEFAULTS["startup_seconds"] == judge.startup
    assert DEFAULTS["max_faults"] == judge.max_faults
    assert DEFAULTS["house_bot"] == judge.replacement
    for name, default in DEFAULTS.items():
        if name in {"preset", "table_size", "place_points"}:
            continue  # chosen by the engine when not given
        field = Tournament._meta.get_field(name)
        assert field.get_default() == default, name


def test_every_setting_is_a_model_field() -> None:
    model_fields = {f.name for f in Tournament._meta.get_fields()}
    assert set(TournamentSettings.names()) <= model_fields


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("rounds", 0),
        ("rounds", 101),
        ("deals_per_table", 1001),
        ("decision_seconds", 61.0),
        ("decision_seconds", 0.0),
        ("bank_seconds", 3601.0),
        ("startup_seconds", 121.0),
        ("max_faults", 1001),
        ("table_size", 11),
    ],
)
def test_a_value_out_of_its_bounds_is_named(name: str, value: float) -> None:
    settings = TournamentSettings(name="t", game="hearts", rounds=1, deals_per_table=1)
    problems = settings.replace(**{name: value}).bound_problems()
    assert [field for field, _ in problems] == [name]
    bound = BOUNDS[name]
    assert f"from {bound.low:g} to {bound.high:g}" in problems[0][1]


def test_place_points_out_of_bounds() -> None:
    settings = TournamentSettings(
        name="t", game="hearts", rounds=1, deals_per_table=1, place_points=(5000, 0, 0, 0)
    )
    assert [field for field, _ in settings.bound_problems()] == ["place_points"]


def test_the_value_is_frozen() -> None:
    settings = TournamentSettings(name="t", game="hearts", rounds=1, deals_per_table=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.rounds = 3  # type: ignore[misc]


@pytest.mark.django_db
def test_the_service_refuses_out_of_bounds_on_create_and_update() -> None:
    organiser = UserFactory.create()
    with pytest.raises(ApplicationError) as refused:
        services.tournament_create(
            organiser=organiser,
            settings=TournamentSettings(
                name="t", game="hearts", rounds=1, deals_per_table=4, decision_seconds=3600.0
            ),
        )
    assert refused.value.code == "limits"
    assert refused.value.extra == {"field": "decision_seconds"}
    assert not Tournament.objects.exists()
    tournament = make_tournament(organiser=organiser, open_it=False)
    with pytest.raises(ApplicationError):
        services.tournament_update(tournament=tournament, bank_seconds=10_000.0)
    tournament.refresh_from_db()
    assert tournament.bank_seconds == 10.0


@pytest.mark.django_db
def test_the_admin_refuses_what_the_api_refuses() -> None:
    """The admin's form used to accept any positive decision time (only the API checked the
    upper bound): it now goes through the same check."""
    tournament = make_tournament(open_it=False)
    staff = get_user_model().objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(staff)
    url = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    data = admin_change_data(client, url)
    data["options"] = "{}"
    data["place_points"] = "[4, 2, 1, 0]"
    data["decision_seconds"] = 3600
    response = client.post(url, data)
    assert response.status_code == 200
    assert "decision seconds must be from 0.01 to 60 seconds" in response.content.decode()
    tournament.refresh_from_db()
    assert tournament.decision_seconds == 2.0
