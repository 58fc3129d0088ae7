"""The permission matrix of the members' pages: every page and form against every kind of
member (anonymous, author, another author, organiser, another organiser, staff), like the
API's (tests/api/test_api_permissions.py).

``LOGIN`` is a redirect to the login page; other 302s are a form that was accepted (or an
action done or refused with a message: the organiser page says which).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.api.conftest import BOT_FILE, FAST_HASHERS, ready_version
from tests.pages.members_world import ROLES, MembersWorld, members_world_for_module

ANON, AUTHOR, OTHER, ORGANISER, OTHER_ORGANISER, STAFF = ROLES
LOGIN = "login"


def everyone(status: int | str) -> dict[str, int | str]:
    return dict.fromkeys(ROLES, status)


def members(status: int | str, anonymous: int | str = LOGIN) -> dict[str, int | str]:
    return {**everyone(status), ANON: anonymous}


def only(
    allowed: dict[str, int | str], others: int | str = 404, anonymous: int | str = LOGIN
) -> dict[str, int | str]:
    return {**members(others, anonymous), **allowed}


RUNNERS = {ORGANISER: 302, STAFF: 302}
ORGANISERS = {ORGANISER: 200, OTHER_ORGANISER: 200, STAFF: 200}


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: Callable[[MembersWorld], str]
    expected: dict[str, int | str]
    body: Callable[[MembersWorld], dict[str, Any]] | None = None

    def __str__(self) -> str:
        return self.name


def _new_tournament(w: MembersWorld) -> dict[str, Any]:
    return {
        "game": "hearts",
        "name": "Matrix cup",
        "preset": "whisthub",
        "rounds": 1,
        "deals_per_table": 2,
        "seating": "random",
        "decision_seconds": 1,
        "bank_seconds": 10,
        "startup_seconds": 5,
        "max_faults": 3,
        "house_bot": "heuristic",
    }


CASES = [
    # Accounts
    Case("signup", "GET", lambda w: reverse("tournaments:signup"), everyone(200)),
    Case("login", "GET", lambda w: reverse("tournaments:login"), members(302, 200)),
    Case("password reset", "GET", lambda w: reverse("tournaments:password-reset"), everyone(200)),
    Case("password change", "GET", lambda w: reverse("tournaments:password-change"), members(200)),
    Case("account", "GET", lambda w: reverse("tournaments:account"), members(200)),
    Case("token create", "POST", lambda w: reverse("tournaments:token-create"), members(302)),
    # Nothing held in the session: back to My account.
    Case("token shown", "GET", lambda w: reverse("tournaments:token-shown"), members(302)),
    Case("token revoke", "POST", lambda w: reverse("tournaments:token-revoke"), members(302)),
    Case("logout", "POST", lambda w: reverse("tournaments:logout"), everyone(302)),
    # Bot authors
    Case("bot new", "GET", lambda w: reverse("tournaments:bot-new"), members(200)),
    Case(
        "bot create",
        "POST",
        lambda w: reverse("tournaments:bot-new"),
        members(302),
        body=lambda w: {"name": "fresh", "game": "hearts"},
    ),
    Case(
        "my bot",
        "GET",
        lambda w: reverse("tournaments:my-bot", args=[w.bot.pk]),
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "version upload",
        "POST",
        lambda w: reverse("tournaments:my-bot", args=[w.bot.pk]),
        only({AUTHOR: 302}),
        body=lambda w: {"file": SimpleUploadedFile("mine.py", BOT_FILE.read_bytes())},
    ),
    Case(
        "version",
        "GET",
        lambda w: reverse("tournaments:my-version", args=[w.bot.pk, 1]),
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "version status (ready: stop polling)",
        "GET",
        lambda w: reverse("tournaments:my-version-status", args=[w.bot.pk, 1]),
        only({AUTHOR: 286, STAFF: 286}),
    ),
    Case(
        "enter form",
        "GET",
        lambda w: reverse("tournaments:tournament-enter", args=[w.open.pk]),
        members(200),
    ),
    Case(
        "enter (the author's ready version; refused for anyone else's)",
        "POST",
        lambda w: reverse("tournaments:tournament-enter", args=[w.open.pk]),
        {**members(200), AUTHOR: 302},
        body=lambda w: {"version": ready_version(w.bot).pk},
    ),
    Case(
        "enter a draft",
        "GET",
        lambda w: reverse("tournaments:tournament-enter", args=[w.draft.pk]),
        members(404),
    ),
    Case(
        "withdraw the other author's entry",
        "POST",
        lambda w: reverse(
            "tournaments:entry-withdraw",
            args=[w.open.entries.get(version__bot=w.other_bot).pk],
        ),
        only({OTHER: 302, STAFF: 302}),
    ),
    Case(
        "seat log (finished table, the author's seat)",
        "GET",
        lambda w: reverse(
            "tournaments:seat-log",
            args=[w.table_done.pk, w.author_seat(w.table_done).position],
        ),
        only({AUTHOR: 200, STAFF: 200}, anonymous=404),
    ),
    Case(
        "seat log (table not shown: hidden, with the reason)",
        "GET",
        lambda w: reverse(
            "tournaments:seat-log", args=[w.failed.pk, w.author_seat(w.failed).position]
        ),
        only({AUTHOR: 403, STAFF: 403}, anonymous=404),
    ),
    # Practice runs (a version's "try it")
    Case(
        "try it (the author's ready version)",
        "POST",
        lambda w: reverse("tournaments:version-try", args=[w.bot.pk, 1]),
        only({AUTHOR: 302, STAFF: 403}),
        body=lambda w: {"preset": "whisthub", "deals": 1, "opponent": "random"},
    ),
    Case(
        "try it (a pending version: refused next to the form)",
        "POST",
        lambda w: reverse("tournaments:version-try", args=[w.pending.pk, 1]),
        only({AUTHOR: 400, STAFF: 403}),
        body=lambda w: {"preset": "whisthub", "deals": 1, "opponent": "random"},
    ),
    Case(
        "practice (played)",
        "GET",
        lambda w: reverse("tournaments:practice", args=[w.practice_done.pk]),
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "practice (waiting: staff see it once over)",
        "GET",
        lambda w: reverse("tournaments:practice", args=[w.practice_waiting.pk]),
        only({AUTHOR: 200}),
    ),
    Case(
        "practice live (played: stop polling)",
        "GET",
        lambda w: reverse("tournaments:practice-live", args=[w.practice_done.pk]),
        only({AUTHOR: 286, STAFF: 286}),
    ),
    Case(
        "practice live (waiting)",
        "GET",
        lambda w: reverse("tournaments:practice-live", args=[w.practice_waiting.pk]),
        only({AUTHOR: 200}),
    ),
    # Organisers
    Case(
        "tournament new",
        "GET",
        lambda w: reverse("tournaments:tournament-new"),
        only(ORGANISERS, 403),
    ),
    Case(
        "tournament new (hearts)",
        "GET",
        lambda w: reverse("tournaments:tournament-new") + "?game=hearts",
        only(ORGANISERS, 403),
    ),
    Case(
        "tournament create",
        "POST",
        lambda w: reverse("tournaments:tournament-new"),
        only({ORGANISER: 302, OTHER_ORGANISER: 302, STAFF: 302}, 403),
        body=_new_tournament,
    ),
    Case(
        "organise",
        "GET",
        lambda w: reverse("tournaments:organise", args=[w.open.pk]),
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "organise a draft",
        "GET",
        lambda w: reverse("tournaments:organise", args=[w.draft.pk]),
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "settings of a draft",
        "GET",
        lambda w: reverse("tournaments:organise-settings", args=[w.draft.pk]),
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "settings of an open one",
        "GET",
        lambda w: reverse("tournaments:organise-settings", args=[w.open.pk]),
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "settings changed",
        "POST",
        lambda w: reverse("tournaments:organise-settings", args=[w.draft.pk]),
        only(RUNNERS),
        body=lambda w: {**_new_tournament(w), "name": "Renamed draft"},
    ),
    Case(
        "settings of a running one (no longer: why)",
        "GET",
        lambda w: reverse("tournaments:organise-settings", args=[w.running.pk]),
        only({ORGANISER: 409, STAFF: 409}),
    ),
    Case(
        "progress",
        "GET",
        lambda w: reverse("tournaments:organise-progress", args=[w.running.pk]),
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "open",
        "POST",
        lambda w: reverse("tournaments:organise-action", args=[w.draft.pk, "open"]),
        only(RUNNERS),
    ),
    Case(
        "start",
        "POST",
        lambda w: reverse("tournaments:organise-action", args=[w.open.pk, "start"]),
        only(RUNNERS),
    ),
    Case(
        "cancel",
        "POST",
        lambda w: reverse("tournaments:organise-action", args=[w.open.pk, "cancel"]),
        only(RUNNERS),
    ),
    Case(
        "remove an entry",
        "POST",
        lambda w: reverse(
            "tournaments:organise-remove-entry",
            args=[w.open.pk, w.open.entries.get(version__bot=w.other_bot).pk],
        ),
        only(RUNNERS),
        body=lambda w: {"how": "disqualify", "reason": "cheating"},
    ),
    Case(
        "re-run a failed table",
        "POST",
        lambda w: reverse("tournaments:organise-rerun", args=[w.running.pk, w.failed.pk]),
        only(RUNNERS),
    ),
]


@pytest.fixture(scope="module")
def _module_world(django_db_setup: None, django_db_blocker: Any) -> Iterator[MembersWorld]:
    yield from members_world_for_module(django_db_blocker)


@pytest.fixture
def world(_module_world: MembersWorld, db: None, settings: Any) -> MembersWorld:
    settings.TAPIS_ALLOW_SIGNUP = True
    settings.PASSWORD_HASHERS = FAST_HASHERS
    return _module_world


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_members_permission_matrix(world: MembersWorld, case: Case, role: str) -> None:
    client = world.client(role)
    path = case.path(world)
    kwargs: dict[str, Any] = {}
    if case.body is not None:
        kwargs["data"] = case.body(world)
    response = getattr(client, case.method.lower())(path, **kwargs)
    expected = case.expected[role]
    if expected == LOGIN:
        assert response.status_code == 302, (response.status_code, response.content[:300])
        assert response["Location"].startswith(reverse("tournaments:login")), response["Location"]
        return
    assert response.status_code == expected, (response.status_code, response.content[:600])
    if response.status_code == 302:
        assert not response["Location"].startswith(reverse("tournaments:login"))


def test_every_member_route_is_in_the_matrix(world: MembersWorld) -> None:
    """A new member page must get a row here."""
    from tournaments import urls

    members_views = {
        "tournaments.pages.accounts",
        "tournaments.pages.authoring",
        "tournaments.pages.organising",
        "tournaments.pages.practice",
    }
    names = {
        pattern.name
        for pattern in urls.urlpatterns
        if getattr(pattern.callback, "__module__", "") in members_views
    }
    covered = set()
    for case in CASES:
        path = case.path(world).split("?")[0]
        from django.urls import resolve

        covered.add(resolve(path).url_name)
    # The reset link's page is reached from a mail: tests/pages/test_members_client.py.
    assert names - covered == {"password-reset-confirm", "password-reset-sent"}
