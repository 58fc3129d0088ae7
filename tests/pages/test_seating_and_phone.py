"""A round's seating as a table per table, Score and Points said in words, and on a phone (390
by 844, Chromium) the standings' place and bot columns kept in view while the rest scrolls
sideways, and the replay's trick cards keeping their seat labels."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.pages.conftest import SiteWorld
from tournaments.models import Deal, Table

PHONE = {"width": 390, "height": 844}


@pytest.mark.django_db
def test_a_rounds_seating_is_a_table_per_table(site_world: SiteWorld, client: Client) -> None:
    url = reverse("tournaments:round-detail", args=[site_world.finished.pk, 1])
    html = client.get(url).content.decode()
    tables = Table.objects.filter(tournament=site_world.finished, round__number=1)
    sections = html.split('<section class="round-table"')[1:]
    assert len(sections) == tables.count()
    for section in sections:
        rows = re.findall(r"<tr[^>]*><td class=\"num\">\d+</td>", section)
        assert len(rows) == site_world.finished.table_size  # one row per seat
        assert 'title="The card points the seat made' in section  # the Score column's title
    assert "; " not in html.split('id="round-tables"')[1].split("</section>")[0]  # no run-on line
    assert "<strong>Score</strong>: the card points" in html


@pytest.mark.django_db
def test_a_tables_score_and_points_say_what_they_are(site_world: SiteWorld, client: Client) -> None:
    table = Table.objects.filter(tournament=site_world.finished).order_by("pk").first()
    assert table is not None
    html = client.get(reverse("tournaments:table-detail", args=[table.pk])).content.decode()
    assert "(lower is better)" in html
    assert "<strong>Points</strong>: the place points its place at the table earned" in html
    assert "1st 4, 2nd 2, 3rd 1, 4th 0" in html
    assert 'title="The place points its place' in html


_STICKY = """() => {
  const wrap = document.querySelector('#standings').closest('.table-wrap');
  wrap.scrollLeft = wrap.scrollWidth;
  const box = wrap.getBoundingClientRect();
  const row = document.querySelector('#standings tbody tr');
  return [wrap.scrollLeft, ...[row.children[0], row.children[1]].map((cell) => {
    const r = cell.getBoundingClientRect();
    return r.left >= box.left - 1 && r.right <= box.right + 1;
  })];
}"""


@pytest.mark.slow
def test_on_a_phone_the_standings_keep_their_names_in_view(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    page.set_viewport_size(PHONE)
    page.goto(reverse("tournaments:tournament-detail", args=[site_world.finished.pk]))
    scrolled, place_in_view, name_in_view = page.evaluate(_STICKY)
    assert scrolled > 100  # the table is wider than the phone: it scrolled sideways
    assert place_in_view
    assert name_in_view
    assert not console_errors


@pytest.mark.slow
def test_on_a_phone_the_trick_cards_keep_their_seat_labels(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    deal = Deal.objects.filter(table__tournament=site_world.finished).order_by("pk").first()
    assert deal is not None
    first_card = next(k for k, (_, a) in enumerate(deal.log["actions"]) if isinstance(a, str))
    page.set_viewport_size(PHONE)
    page.goto(reverse("tournaments:deal", args=[deal.pk]) + f"?step={first_card + 3}")
    page.wait_for_selector("#viewer[data-ready]")
    spots = page.locator("[data-trick] [data-played-by]")
    assert spots.count() == 3
    for k in range(3):
        spot = spots.nth(k)
        label = spot.locator(".played-seat")
        assert label.is_visible()
        assert label.inner_text() == f"Seat {int(spot.get_attribute('data-played-by')) + 1}"
        assert label.bounding_box()["height"] > 5
    assert not console_errors
