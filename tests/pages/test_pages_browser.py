"""The site in a real browser (Debian's Chromium driven by Playwright, on the live server)."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.template.loader import render_to_string

from tests.pages.conftest import SiteWorld, axe_violations
from tests.pages.test_pages_client import routes

pytestmark = pytest.mark.slow


def test_every_page_opens_without_console_errors_and_passes_axe(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    for url in routes(site_world):
        response = page.goto(url)
        assert response is not None, url
        assert response.status == 200, url
        assert page.locator("h1").count() == 1, url
        assert not axe_violations(page), url
    assert not console_errors


def test_error_pages_are_in_the_sites_style(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    response = page.goto("/tournaments/999999/")
    assert response is not None
    assert response.status == 404
    assert page.locator("h1").inner_text() == "Nothing here"
    assert page.locator("header.site nav").is_visible()
    assert not axe_violations(page)
    response = page.goto(f"/tournaments/{site_world.draft.pk}/")
    assert response is not None
    assert response.status == 404
    # 404 pages log one console error (the failed document): nothing else.
    assert all("404" in error for error in console_errors), console_errors
    # The pages Django renders without a request (a bug, a request it cannot serve), drawn
    # at the site's address so that their stylesheet loads.
    for template, title in (
        ("500.html", "Something went wrong"),
        ("400.html", "This request"),
        ("403_csrf.html", "This form"),
    ):
        page.set_content(render_to_string(template))
        assert page.locator("h1").inner_text().startswith(title)
        assert page.locator("header.site nav").is_visible()
        assert not axe_violations(page), template


def test_the_standings_draw_each_interval_as_a_bar_on_one_scale(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/tournaments/{site_world.finished.pk}/")
    bars = page.locator("#standings svg.ci-bar")
    assert bars.count() == 4
    for index in range(4):
        bar = bars.nth(index)
        box = bar.bounding_box()
        assert box is not None
        assert box["width"] > 50  # drawn, not collapsed
        assert box["height"] > 5
        label = bar.get_attribute("aria-label")
        assert label is not None
        assert "points per deal against the table, 95% interval" in label
        # The interval's rectangle lies within the bar's box, the mean's tick inside it.
        interval = bar.locator("rect.interval").bounding_box()
        mean = bar.locator("rect.mean").bounding_box()
        assert interval is not None
        assert mean is not None
        # Bars are drawn at sub-pixel positions: each comparison allows one pixel (a zero-width
        # interval puts the mean's centre on its edge, where rounding may fall either side).
        assert box["x"] - 1 <= interval["x"] <= mean["x"] + mean["width"] / 2 + 1
        assert mean["x"] + mean["width"] / 2 <= interval["x"] + interval["width"] + 1
        assert interval["x"] + interval["width"] <= box["x"] + box["width"] + 1
    # The figures are in the cell's text as well as in the drawing.
    first_text = page.locator("#standings td.ci").first.inner_text()
    assert "to" in first_text
    assert not axe_violations(page)
    shots = os.environ.get("TAPIS_SHOTS")
    if shots:  # screenshots for people to look at: TAPIS_SHOTS=/tmp/shots
        page.locator("#standings").screenshot(path=f"{shots}/site2-standings.png")
        page.screenshot(path=f"{shots}/site2-tournament.png", full_page=True)
    # The crosstable is a page of its own, linked from the tournament's.
    page.get_by_role("link", name="crosstable").click()
    assert page.locator("table.crosstable[data-comparison=table] tbody tr").count() == 4
    assert not axe_violations(page)
    if shots:
        page.screenshot(path=f"{shots}/site2-crosstable.png", full_page=True)
    assert not console_errors


def test_the_audit_pages_show_each_check_and_its_verdict(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    from tournaments.models import Deal, TournamentSummary

    deal = Deal.objects.filter(table__tournament=site_world.finished).order_by("pk").first()
    assert deal is not None
    Deal.objects.filter(pk=deal.pk).update(points=[26, 0, 0, 0])  # a tampered row
    # An audit a worker of the session may have stored when the tournament finished predates
    # the tampering: without it the page audits on the spot.
    TournamentSummary.objects.filter(tournament=site_world.finished).update(audit=None)
    page.set_viewport_size({"width": 1100, "height": 900})
    page.goto(f"/deals/{deal.pk}/audit/")
    rows = page.locator("#audit-checks tbody tr")
    assert rows.count() == 7
    assert page.locator("#audit-checks tr[data-verdict=failed]").count() == 1
    assert "points" in page.locator("#audit-checks tr[data-verdict=failed] th").inner_text()
    assert not axe_violations(page)
    shots = os.environ.get("TAPIS_SHOTS")
    if shots:
        page.screenshot(path=f"{shots}/site2-deal-audit.png", full_page=True)
    page.goto(f"/tournaments/{site_world.finished.pk}/audit/")
    assert page.locator("#audit-checks tbody tr").count() == 11
    failed = page.locator("#audit-checks tr[data-verdict=failed]")
    assert failed.count() == 2  # the deal's points, and so the table's scores
    assert not axe_violations(page)
    if shots:
        page.screenshot(path=f"{shots}/site2-tournament-audit.png", full_page=True)
    assert not console_errors
