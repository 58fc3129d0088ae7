"""The public pages on a phone (390 by 844 CSS pixels, an iPhone's): nothing makes the page
scroll sideways (a wide table scrolls inside its own box), and axe finds nothing serious at that
width (a box that scrolls must be reachable from the keyboard); no caption runs wider than the
screen."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from tests.pages.conftest import SiteWorld, axe_violations
from tests.pages.test_pages_client import routes
from tournaments.models import Deal, Table

pytestmark = pytest.mark.slow

PHONE = {"width": 390, "height": 844}


def _overflow(page: Any) -> int:
    """How many pixels the page is wider than the screen (0: it fits)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def _wide_captions(page: Any) -> list[str]:
    """The captions shown wider than the screen: their text runs on out of sight, in the box
    that scrolls sideways with the table."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll("caption:not(.visually-hidden)")].filter(c => {
                const text = document.createRange();
                text.selectNodeContents(c);
                return text.getBoundingClientRect().width > document.documentElement.clientWidth;
            }).map(c => c.textContent.trim().slice(0, 60))"""
        )
    )


def test_every_page_fits_a_phone(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    table = Table.objects.filter(tournament=site_world.finished).order_by("pk").first()
    assert table is not None
    deal = Deal.objects.filter(table=table).order_by("index").first()
    assert deal is not None
    urls = [
        *routes(site_world),
        reverse("tournaments:deal", args=[deal.pk]),
        reverse("tournaments:deal", args=[deal.pk]) + "?step=2",
    ]
    page.set_viewport_size(PHONE)
    for url in urls:
        response = page.goto(url)
        assert response is not None
        assert response.status == 200, url
        assert _overflow(page) == 0, url
        assert not _wide_captions(page), url
        assert not axe_violations(page), url
    assert not console_errors
