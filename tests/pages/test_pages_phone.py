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
from tournaments.models import Bot, Deal, Rating, Table

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


def test_a_caption_over_a_table_wider_than_the_screen_stays_on_it(
    site_world: SiteWorld, page: Any, console_errors: list[str]
) -> None:
    """A leaderboard of the home page made wider than the phone by a bot's name in one long
    word scrolls in its box; its caption (the game and family: "Hearts family (Dame de pique,
    les cœurs), whisthub: the top 4 (full ranking)") wraps within the screen, not along the
    table."""
    rating = Rating.objects.order_by("pk").first()
    assert rating is not None
    Bot.objects.filter(pk=rating.bot_id).update(name="Abotwhosenameneverbreaksonaphone")
    page.set_viewport_size(PHONE)
    page.goto("/")
    widths = page.evaluate(
        """() => [...document.querySelectorAll("#leaderboards-title ~ .table-wrap")]
            .map(box => box.scrollWidth - box.clientWidth)"""
    )
    assert max(widths) > 0  # a table wider than its box, which scrolls
    assert _overflow(page) == 0
    assert not _wide_captions(page)
    assert not console_errors
