"""A rule option outside its bounds is refused when the tournament is created: a 400 in the
documented error shape with the engine's own message, and no tournament (issue 11:
``call_penalty: 10**30`` was accepted, then every table failed with ``integer out of range``)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import assert_error, client_for, make_user
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def organiser() -> APIClient:
    return client_for(make_user("organiser", organiser=True))


def create(client: APIClient, game: str, options: dict[str, Any]) -> Any:
    settings = {"name": "Bounded cup", "game": game, "rounds": 1, "deals_per_table": 10}
    return client.post("/api/v1/tournaments/", {**settings, "options": options}, format="json")


@pytest.mark.parametrize(
    ("game", "option", "value", "allowed"),
    [
        ("dutch", "call_penalty", 10**30, "an integer from 0 to 1000"),
        ("dutch", "call_penalty", 1001, "an integer from 0 to 1000"),
        ("dutch", "turn_cap", 10**9, "an integer from 1 to 200"),
        ("dutch", "target_score", 2**31, "an integer from 1 to 10000"),
        ("roi", "trump_card_points", 10**12, "an integer from 0 to 1000"),
        ("roi", "king_of_hearts_penalty", -1, "an integer from 0 to 1000"),
        ("hearts", "target_score", 10**30, "an integer from 1 to 10000"),
    ],
)
def test_an_option_out_of_bounds_is_a_400_and_creates_nothing(
    organiser: APIClient, game: str, option: str, value: int, allowed: str
) -> None:
    before = Tournament.objects.count()
    error = assert_error(create(organiser, game, {option: value}), 400, "invalid_option")
    label = option.replace("_", " ").capitalize()
    assert error["message"] == f"{label} (option {option}) must be {allowed}, not {value}"
    assert list(error["fields"]) == [f"options.{option}"]
    assert Tournament.objects.count() == before


def test_the_same_option_at_its_maximum_is_accepted(organiser: APIClient) -> None:
    response = create(organiser, "dutch", {"call_penalty": 1000})
    assert response.status_code == 201, response.content[:500]
    assert response.json()["options"] == {"call_penalty": 1000}
    assert Tournament.objects.filter(name="Bounded cup").count() == 1
