"""A rule option set wrongly is refused in an organiser's words, the same on the organiser's
form, through the API and in the admin: the option's label, its name, the values allowed."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from tests.api.conftest import assert_error, client_for, make_user
from tests.pages.test_members_client import error_next_to, roi_form
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db

SETTINGS = {"name": "Roi night", "game": "roi", "preset": "classic", "rounds": 1}

# (what the organiser sets, the field the refusal is shown next to on the form, its words)
CASES = [
    (
        {"deals_per_table": 15},
        "deals_per_table",
        "the Jeu du Roi is played in whole games of 10 deals, so the number of deals must be "
        "a multiple of 10 (10, 20, 30...), not 15",
    ),
    (
        {"options": {"trick_penalty": -1}},
        "option_trick_penalty",
        "Trick penalty (option trick_penalty) must be an integer from 0 to 1000, not -1",
    ),
    (
        {"table_size": 5},
        "table_size",
        "Table size must be one of 4, not 5",
    ),
]


def _form_data(setting: dict[str, Any]) -> dict[str, Any]:
    """The organiser's form of ``setting`` (its rule options are ``option_<name>`` fields)."""
    options = {f"option_{k}": v for k, v in setting.get("options", {}).items()}
    return roi_form(**{k: v for k, v in setting.items() if k != "options"}, **options)


@pytest.mark.parametrize(("setting", "field", "words"), CASES)
def test_the_same_words_on_the_form_the_api_and_the_admin(
    setting: dict[str, Any], field: str, words: str
) -> None:
    organiser = make_user("organiser", organiser=True)
    pages = Client()
    pages.force_login(organiser)
    page = pages.post(reverse("tournaments:tournament-new"), _form_data(setting))
    assert page.status_code == 400
    assert error_next_to(html.unescape(page.content.decode()), field) == words

    api = client_for(organiser).post(
        "/api/v1/tournaments/", {**SETTINGS, "deals_per_table": 10, **setting}, format="json"
    )
    error = assert_error(api, 400, "invalid_option")
    assert error["message"] == words
    api_field = f"options.{field.removeprefix('option_')}" if "options" in setting else field
    assert error["fields"] == {api_field: [words]}

    staff = Client()
    staff.force_login(get_user_model().objects.create_superuser("root", "r@example.org", "pw"))
    # (the admin asks for the table size)
    values = {**SETTINGS, "deals_per_table": 10, "table_size": 4, "seating": "random", **setting}
    form = {
        **{k: v for k, v in values.items() if k != "options"},
        "options": json.dumps(values.get("options", {})),
        "decision_seconds": 1,
        "bank_seconds": 10,
        "startup_seconds": 5,
        "max_faults": 3,
        "house_bot": "heuristic",
        "place_points": "",
    }
    admin = staff.post(reverse("admin:tournaments_tournament_add"), form)
    assert admin.status_code == 200
    assert words in html.unescape(admin.content.decode())
    assert not Tournament.objects.exists()
