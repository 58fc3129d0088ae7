"""Every link of the site's own pages leads somewhere: a crawl from the home page, following each
``<a href>`` to the site (through Django's client: no browser, a few seconds), as a visitor and
as a signed-in bot author. A link answering 404 or 5xx fails the test, naming the page it was
on. Pages of one shape (``/deals/<n>/?step=<k>``) are opened a few times each, not all."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from django.test import Client

from tests.pages.conftest import SiteWorld

pytestmark = pytest.mark.django_db

# Not crawled: the admin (Django's), the logout (a POST form; a GET would not log out anyway),
# the static files (the browser tests load them) and /healthz (503 without a worker, as here:
# it reports on the service, tests/config test it).
SKIPPED = ("/admin/", "/accounts/logout/", "/static/", "/healthz")
PER_SHAPE = 4
ORIGIN = "http://testserver"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def _shape(path: str) -> str:
    """``/deals/12/?step=3`` and ``/deals/13/?step=8`` have one shape."""
    parts = urlsplit(path)
    keys = sorted(pair.split("=")[0] for pair in parts.query.split("&") if pair)
    return re.sub(r"\d+", "N", parts.path) + "?" + "&".join(keys)


def crawl(client: Client, start: list[str]) -> dict[str, tuple[int, str]]:
    """Every page reached from ``start``: its status and the page that linked to it."""
    seen: dict[str, tuple[int, str]] = {}
    shapes: Counter[str] = Counter()
    queue = [(url, "(start)") for url in start]
    while queue:
        url, referrer = queue.pop(0)
        if url in seen or url.startswith(SKIPPED):
            continue
        shape = _shape(url)
        if shapes[shape] >= PER_SHAPE:
            continue
        shapes[shape] += 1
        response = client.get(url)
        seen[url] = (response.status_code, referrer)
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        parser = _Links()
        parser.feed(response.content.decode())
        for href in parser.hrefs:
            absolute = urldefrag(urljoin(ORIGIN + url, href))[0]
            if absolute.startswith(ORIGIN + "/"):
                queue.append((absolute[len(ORIGIN) :], url))
    return seen


def _broken(seen: dict[str, tuple[int, str]]) -> list[str]:
    # 302: a members' page sends a visitor to log in; 403 and 404 are broken links here (a
    # page links only to what its reader may open).
    return [
        f"{url} answered {status} (linked from {referrer})"
        for url, (status, referrer) in seen.items()
        if status not in (200, 302)
    ]


def test_every_link_of_the_public_pages_leads_somewhere(
    site_world: SiteWorld, client: Client
) -> None:
    seen = crawl(client, ["/", "/tournaments/", "/rankings/", "/docs/"])
    assert not _broken(seen)
    # The crawl went through the site: tournaments, tables, deals, bots, docs, the API.
    for shape in ("/tournaments/N/", "/tables/N/", "/deals/N/", "/bots/N/", "/docs/protocol/"):
        assert any(_shape(url).startswith(shape) for url in seen), shape
    assert len(seen) > 40


def test_every_link_of_an_authors_pages_leads_somewhere(
    site_world: SiteWorld, client: Client
) -> None:
    client.force_login(site_world.author)
    seen = crawl(client, ["/account/", "/matches/", f"/tournaments/{site_world.open.pk}/"])
    assert not _broken(seen)
    assert any(url.startswith("/account/bots/") for url in seen)
