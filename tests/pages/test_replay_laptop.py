"""The replay viewer on a laptop's screen (1280x900, Chromium): the controls and the table stay
in one view while stepping, from the top of the page on; the keys work whatever has focus (a
button just clicked, the slider); the whole timeline strip answers a click."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.pages.test_replay_page import _cup
from tournaments.models import Deal

pytestmark = pytest.mark.slow

_IN_VIEW = """() => {
  const bar = document.querySelector('.viewer-bar').getBoundingClientRect();
  const parts = ['[data-felt]', '[data-felt] .side-bottom', '[data-felt] .centre']
    .map((s) => document.querySelector(s).getBoundingClientRect());
  return bar.top >= 0 && parts.every((p) => p.top >= 0 && p.bottom <= window.innerHeight);
}"""


@pytest.fixture
def deal() -> Deal:
    cup = _cup(User.objects.create_user(username="o"), "Laptop cup", "hearts", 4, deals_per_table=1)
    found = Deal.objects.filter(table__tournament=cup).first()
    assert found is not None
    return found


def _open(page: Any, deal: Deal) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/deals/{deal.pk}/")
    page.wait_for_selector("#viewer[data-ready]")


def _step(page: Any) -> int:
    return int(page.locator("[data-felt]").get_attribute("data-step"))


def test_controls_and_table_stay_in_one_view_while_stepping(
    page: Any, console_errors: list[str], deal: Deal
) -> None:
    _open(page, deal)
    assert page.evaluate("window.scrollY") == 0
    following = page.get_by_role("button", name="Next step", exact=True)
    for k in range(1, 25):
        following.click()
        assert _step(page) == k
        assert page.evaluate(_IN_VIEW), k
    page.keyboard.press("PageDown")
    assert page.evaluate(_IN_VIEW)
    assert not console_errors


def test_the_keys_work_whatever_has_focus(page: Any, console_errors: list[str], deal: Deal) -> None:
    _open(page, deal)
    page.locator("[data-speed]").select_option("2000")
    page.get_by_role("button", name="Next step", exact=True).click()
    assert _step(page) == 1
    play = page.locator('[data-go="play"]')
    page.keyboard.press(" ")  # the Next button has focus: space plays, not Next again
    assert play.get_attribute("data-playing") == "true"
    page.keyboard.press(" ")
    assert play.get_attribute("data-playing") == "false"
    assert _step(page) <= 2
    slider = page.locator("#replay-step")
    slider.focus()
    at = _step(page)
    page.keyboard.press("PageDown")  # the slider has focus: the next trick, forward
    forward = _step(page)
    assert forward > at
    page.keyboard.press("PageUp")
    assert _step(page) < forward
    page.keyboard.press("End")
    assert _step(page) == int(slider.get_attribute("max"))
    assert not console_errors


def test_the_whole_timeline_strip_answers_a_click(
    page: Any, console_errors: list[str], deal: Deal
) -> None:
    _open(page, deal)
    ticks = page.locator("[data-timeline] .tick")
    for k in (7, 30, ticks.count() - 1):
        strip = page.locator("[data-timeline]").bounding_box()
        tick = ticks.nth(k).bounding_box()
        # Above the tick, near the top of the strip: a tick of a quick decision is short.
        page.mouse.click(tick["x"] + tick["width"] / 2, strip["y"] + 3)
        assert _step(page) == k
    assert not console_errors
