"""Fixtures of the site's tests: a small world of tournaments, and a real browser on it.

Data (made through the services, tables played in this process by built-in bots):

* ``site_world``: a :class:`SiteWorld`: a finished tournament (``finished``, 4 entries of
  built-in bots, 2 rounds of 1 table, 2 deals a table, seed revealed, ratings updated), an
  open one (``open``), a ``draft`` that only its organiser sees, and the users (``author``
  owns the finished tournament's first entry). Needs a database: use it from a test marked
  ``django_db`` (Django-client tests) or with ``live_server`` (browser tests: the live server
  makes the database transactional, so the world is committed and the server sees it).

Browser (pytest-playwright, on Debian's Chromium: ``make chromium`` installs it):

* ``page``: pytest-playwright's page, in Debian's Chromium (``browser_type_launch_args``
  below), with ``base_url`` set to pytest-django's ``live_server``: ``page.goto("/tournaments/")``.
* ``console_errors``: the console errors and uncaught exceptions of ``page`` so far, as a list
  that grows; assert it is empty at the end of a test (``assert not console_errors``).
* :func:`axe_violations` (a helper, import it: ``from tests.pages.conftest import
  axe_violations``): axe-core's serious and critical violations on the page as it is now,
  as readable lines; ``assert not axe_violations(page)``. axe-core comes inside the
  ``axe-playwright-python`` package (no CDN).

The live server runs in a thread of the test process: Playwright's synchronous API runs an
event loop in the main thread, so Django's async-safety check is switched off for these tests
(``DJANGO_ALLOW_ASYNC_UNSAFE``), as Django's own docs advise for Playwright.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.tournaments.factories import UserFactory, enter_builtins, make_tournament
from tournaments import services
from tournaments.models import Tournament

# Playwright's sync API runs an asyncio loop in the main thread, where the tests call the ORM.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("TAPIS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


# ---------------------------------------------------------------------------------------------
# Browser
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (Playwright's own browser download cannot work here)."""
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: run `make chromium` (apt-get install chromium) or set "
            "TAPIS_CHROMIUM",
            pytrace=False,
        )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": CHROMIUM_ARGS,
        "headless": True,
    }


@pytest.fixture(scope="session")
def base_url(live_server: Any) -> str:
    """Relative addresses in ``page.goto`` go to the live server."""
    return str(live_server.url)


@pytest.fixture(autouse=True)
def _transactional_with_a_browser(request: pytest.FixtureRequest) -> None:
    """The live server's thread sees only committed data: a test with a browser page gets a
    transactional database (emptied after the test)."""
    if "page" in request.fixturenames or "live_server" in request.fixturenames:
        request.getfixturevalue("transactional_db")


@pytest.fixture
def console_errors(page: Any) -> list[str]:
    """What went wrong in the page's JavaScript: console errors, uncaught exceptions, and
    requests that failed (a missing static file shows up here)."""
    errors: list[str] = []
    page.on(
        "console",
        lambda message: (
            errors.append(f"console: {message.text}") if message.type == "error" else None
        ),
    )
    page.on("pageerror", lambda error: errors.append(f"exception: {error}"))
    page.on(
        "requestfailed",
        lambda request: (
            errors.append(f"request failed: {request.url} {request.failure}")
            # A load the browser cancelled itself (the next navigation began before the
            # favicon of the last page came) is not a failure of the site.
            if "ERR_ABORTED" not in str(request.failure)
            else None
        ),
    )
    return errors


SERIOUS = ("serious", "critical")


def axe_violations(page: Any, *, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """axe-core's violations of ``impacts`` on the page as it is now, one readable line each
    (rule, impact, help, and the first nodes' selectors)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    lines = []
    for violation in results.response["violations"]:
        if violation.get("impact") not in impacts:
            continue
        targets = ", ".join(str(node["target"]) for node in violation["nodes"][:3])
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} at {targets}")
    return lines


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class SiteWorld:
    organiser: User
    author: User
    finished: Tournament
    open: Tournament
    draft: Tournament


def play_to_the_end(tournament: Tournament, timeout: float = 120.0) -> None:
    """Play a started tournament's tables in this process until it is finished. With a
    transactional database its tables are also queued for real: a live worker of this test
    session (started by an earlier test) may hold one; it is waited for."""
    deadline = time.monotonic() + timeout
    while True:
        services.tournament_run_here(tournament=tournament)
        tournament.refresh_from_db()
        if tournament.status == Tournament.Status.FINISHED:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{tournament} is still {tournament.status} after {timeout:g} s")
        time.sleep(0.2)


def make_site_world() -> SiteWorld:
    """A finished tournament played here by built-in bots, an open one and a draft."""
    organiser = UserFactory.create(username="organiser")
    finished = make_tournament(
        organiser=organiser, name="Finished cup", rounds=2, deals_per_table=2
    )
    entries = enter_builtins(finished, ["heuristic", "lowest", "random", "random"])
    services.tournament_start(tournament=finished)
    play_to_the_end(finished)
    opened = make_tournament(organiser=organiser, name="Open cup", game="hearts")
    draft = make_tournament(organiser=organiser, name="Secret draft", open_it=False)
    return SiteWorld(
        organiser=organiser,
        author=entries[0].user,
        finished=finished,
        open=opened,
        draft=draft,
    )


@pytest.fixture
def site_world(request: pytest.FixtureRequest) -> Iterator[SiteWorld]:
    """See the module docstring. Made in the test's own database (transactional with a live
    server, so the server sees it)."""
    if "transactional_db" not in request.fixturenames:
        request.getfixturevalue("db")
    return make_site_world()


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Each test starts with an empty cache (pages of finished tournaments are kept there)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
