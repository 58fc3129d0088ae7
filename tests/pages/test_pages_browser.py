"""The site in a real browser (Debian's Chromium driven by Playwright, on the live server)."""

from __future__ import annotations

from typing import Any

import pytest

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
