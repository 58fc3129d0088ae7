"""The permission matrix: every endpoint against every kind of client.

Each row names an endpoint (method, path, body) and the status each role gets. A status below
400 is a success; every 4xx must be the documented error shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.api.conftest import BOT_FILE, ROLES, World, assert_error, ready_version
from tournaments import services
from tournaments.models import Deal, Match, Table, Tournament

ANON, AUTHOR, OTHER, ORGANISER, STAFF = ROLES


def everyone(status: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, status)


def logged_in(status: int, anonymous: int = 401) -> dict[str, int]:
    return {**everyone(status), ANON: anonymous}


def only(allowed: dict[str, int], others: int = 403, anonymous: int = 401) -> dict[str, int]:
    """``allowed`` roles get their status, other logged-in roles ``others``."""
    return {**logged_in(others, anonymous), **allowed}


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: Callable[[World], str]
    expected: dict[str, int]
    body: Callable[[World], Any] | None = None
    multipart: bool = False
    query: dict[str, str] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return self.name


def upload(world: World) -> dict[str, Any]:
    return {"file": SimpleUploadedFile("mine.py", BOT_FILE.read_bytes())}


def new_tournament(world: World) -> dict[str, Any]:
    return {"name": "New cup", "game": "hearts", "rounds": 2, "deals_per_table": 4}


def _author_seat(table: Any) -> int:
    from tournaments.models import Seat

    return int(Seat.objects.get(table=table, entry__user__username="author").position)


def authors_match(world: World) -> Match:
    """A running match of the author's bot against the random bot (its batch is never sent:
    the test's transaction does not commit)."""
    return services.match_create(
        owner=world.bot.owner, candidate=ready_version(world.bot), baseline_builtin="random"
    )


def authors_practice(world: World, *, played: bool) -> Tournament:
    """A practice run of the author's ready version: played here, or waiting (its table is
    never sent: the test's transaction does not commit)."""
    run = services.practice_create(owner=world.bot.owner, version=ready_version(world.bot), deals=1)
    if played:
        services.tournament_run_here(tournament=run)
    return run


def practice_seat_log(world: World) -> str:
    """The author's seat log at the table of a practice run of theirs, waiting to be played."""
    table = Table.objects.get(tournament=authors_practice(world, played=False))
    return f"/api/v1/tables/{table.pk}/seats/{_author_seat(table)}/log/"


def practice_deal(world: World) -> int:
    run = authors_practice(world, played=True)
    return Deal.objects.filter(table__tournament=run).values_list("pk", flat=True).get()


CASES = [
    # Games and the schema
    Case("games", "GET", lambda w: "/api/v1/games/", everyone(200)),
    Case("game", "GET", lambda w: "/api/v1/games/hearts/", everyone(200)),
    Case("schema", "GET", lambda w: "/api/v1/schema/", everyone(200)),
    Case("docs", "GET", lambda w: "/api/v1/docs/", everyone(200)),
    # Accounts
    Case(
        "token obtain",
        "POST",
        lambda w: "/api/v1/auth/token/",
        everyone(200),
        body=lambda w: {"username": "author", "password": "author-secret-pw"},
    ),
    Case("token revoke", "DELETE", lambda w: "/api/v1/auth/token/", logged_in(204)),
    Case("me", "GET", lambda w: "/api/v1/auth/me/", logged_in(200)),
    Case(
        "signup",
        "POST",
        lambda w: "/api/v1/auth/signup/",
        everyone(201),
        body=lambda w: {"username": "newcomer", "password": "a-long-Passw0rd!"},
    ),
    # Bots
    Case("bots", "GET", lambda w: "/api/v1/bots/", logged_in(200)),
    Case(
        "bot create",
        "POST",
        lambda w: "/api/v1/bots/",
        logged_in(201),
        body=lambda w: {"name": "fresh", "game": "hearts"},
    ),
    Case("bot", "GET", lambda w: f"/api/v1/bots/{w.bot.pk}/", everyone(200)),
    Case(
        "versions",
        "GET",
        lambda w: f"/api/v1/bots/{w.bot.pk}/versions/",
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "version upload",
        "POST",
        lambda w: f"/api/v1/bots/{w.bot.pk}/versions/",
        only({AUTHOR: 201}),
        body=upload,
        multipart=True,
    ),
    Case(
        "version",
        "GET",
        lambda w: f"/api/v1/bots/{w.bot.pk}/versions/1/",
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "version code",
        "GET",
        lambda w: f"/api/v1/bots/{w.pending.pk}/versions/1/code/",
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case("bot ratings", "GET", lambda w: f"/api/v1/bots/{w.bot.pk}/ratings/", everyone(200)),
    # Practice runs (a version's "try it")
    Case(
        "version try",
        "POST",
        lambda w: f"/api/v1/bots/{w.bot.pk}/versions/1/try/",
        only({AUTHOR: 201}),
        body=lambda w: {"deals": 1, "opponent": "random"},
    ),
    Case(
        "version try (pending: refused)",
        "POST",
        lambda w: f"/api/v1/bots/{w.pending.pk}/versions/1/try/",
        only({AUTHOR: 400}),
        body=lambda w: {"deals": 1},
    ),
    Case(
        "version tries",
        "GET",
        lambda w: f"/api/v1/bots/{w.bot.pk}/versions/1/try/",
        only({AUTHOR: 200, STAFF: 200}),
    ),
    Case(
        "practice (waiting): its author's",
        "GET",
        lambda w: f"/api/v1/practice/{authors_practice(w, played=False).pk}/",
        only({AUTHOR: 200}, others=404),
    ),
    Case(
        "practice (played): its author's and staff's",
        "GET",
        lambda w: f"/api/v1/practice/{authors_practice(w, played=True).pk}/",
        only({AUTHOR: 200, STAFF: 200}, others=404),
    ),
    Case(
        "practice deal replay",
        "GET",
        lambda w: f"/api/v1/deals/{practice_deal(w)}/",
        {**everyone(404), AUTHOR: 200, STAFF: 200},
    ),
    # Tournaments
    Case("tournaments", "GET", lambda w: "/api/v1/tournaments/", everyone(200)),
    Case(
        "tournament create",
        "POST",
        lambda w: "/api/v1/tournaments/",
        only({ORGANISER: 201, STAFF: 201}),
        body=new_tournament,
    ),
    Case(
        "tournament (finished)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.finished.pk}/",
        everyone(200),
    ),
    Case(
        "tournament (draft)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.draft.pk}/",
        only({ORGANISER: 200, STAFF: 200}, others=404, anonymous=404),
    ),
    Case(
        "tournament change",
        "PATCH",
        lambda w: f"/api/v1/tournaments/{w.open.pk}/",
        only({ORGANISER: 200, STAFF: 200}),
        body=lambda w: {"name": "Renamed cup"},
    ),
    Case(
        "tournament open",
        "POST",
        lambda w: f"/api/v1/tournaments/{w.draft.pk}/open/",
        only({ORGANISER: 200, STAFF: 200}, others=404),
    ),
    Case(
        "tournament start",
        "POST",
        lambda w: f"/api/v1/tournaments/{w.open.pk}/start/",
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "tournament cancel",
        "POST",
        lambda w: f"/api/v1/tournaments/{w.running.pk}/cancel/",
        only({ORGANISER: 200, STAFF: 200}),
    ),
    Case(
        "entries",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.open.pk}/entries/",
        everyone(200),
    ),
    Case(
        "entries (draft)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.draft.pk}/entries/",
        only({ORGANISER: 200, STAFF: 200}, others=404, anonymous=404),
    ),
    Case(
        "entry register",
        "POST",
        lambda w: f"/api/v1/tournaments/{w.open.pk}/entries/",
        only({AUTHOR: 201}),
        body=lambda w: {"version": ready_version(w.bot).pk},
    ),
    Case(
        "standings (finished)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.finished.pk}/standings/",
        everyone(200),
    ),
    Case(
        "standings (running)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.running.pk}/standings/",
        everyone(200),
    ),
    Case(
        "crosstable (finished)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.finished.pk}/crosstable/",
        everyone(200),
    ),
    Case(
        "crosstable (draft)",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.draft.pk}/crosstable/",
        only({ORGANISER: 200, STAFF: 200}, others=404, anonymous=404),
    ),
    Case(
        "resolution",
        "GET",
        lambda w: "/api/v1/resolution/",
        everyone(200),
        query={"game": "hearts", "entries": "8", "rounds": "3", "deals_per_table": "8"},
    ),
    Case(
        "progress",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.running.pk}/progress/",
        everyone(200),
    ),
    Case(
        "rounds",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.finished.pk}/rounds/",
        everyone(200),
    ),
    Case(
        "tables",
        "GET",
        lambda w: f"/api/v1/tournaments/{w.finished.pk}/tables/",
        everyone(200),
        query={"round": "1"},
    ),
    # Matches
    Case("matches", "GET", lambda w: "/api/v1/matches/", logged_in(200)),
    Case(
        "match create",
        "POST",
        lambda w: "/api/v1/matches/",
        only({AUTHOR: 201}),
        body=lambda w: {"candidate": ready_version(w.bot).pk, "baseline_builtin": "random"},
    ),
    Case(
        "match",
        "GET",
        lambda w: f"/api/v1/matches/{authors_match(w).pk}/",
        only({AUTHOR: 200, STAFF: 200}, others=404),
    ),
    Case(
        "match cancel",
        "POST",
        lambda w: f"/api/v1/matches/{authors_match(w).pk}/cancel/",
        only({AUTHOR: 200, STAFF: 200}, others=404),
    ),
    # Tables and deals
    Case("table (done)", "GET", lambda w: f"/api/v1/tables/{w.table_done.pk}/", everyone(200)),
    Case(
        "table (running)",
        "GET",
        lambda w: f"/api/v1/tables/{w.table_running.pk}/",
        everyone(200),
    ),
    Case(
        "table log (done)",
        "GET",
        lambda w: f"/api/v1/tables/{w.table_done.pk}/log/",
        everyone(200),
    ),
    Case(
        "table log (running): hidden from everyone",
        "GET",
        lambda w: f"/api/v1/tables/{w.table_running.pk}/log/",
        everyone(403),
    ),
    Case(
        "seat log (done): the bot's owner and staff",
        "GET",
        lambda w: f"/api/v1/tables/{w.table_done.pk}/seats/{_author_seat(w.table_done)}/log/",
        only({AUTHOR: 200, STAFF: 200}, others=404),
    ),
    Case(
        "seat log (running): hidden from everyone",
        "GET",
        lambda w: f"/api/v1/tables/{w.table_running.pk}/seats/{_author_seat(w.table_running)}/log/",
        only({AUTHOR: 403, STAFF: 403}, others=404),
    ),
    Case(
        # Its author sees the run, so is told why; to staff a running practice run is
        # hidden like everything else of it: not found.
        "seat log (practice waiting): its author is told it is hidden",
        "GET",
        practice_seat_log,
        only({AUTHOR: 403}, others=404),
    ),
    Case("deal replay", "GET", lambda w: f"/api/v1/deals/{w.deal_done.pk}/", everyone(200)),
    Case(
        "deal audit",
        "GET",
        lambda w: f"/api/v1/deals/{w.deal_done.pk}/audit/",
        everyone(200),
    ),
    # Rankings
    Case(
        "rankings",
        "GET",
        lambda w: "/api/v1/rankings/",
        everyone(200),
        query={"game": "hearts"},
    ),
]


@pytest.fixture(autouse=True)
def _signup_allowed(settings: Any) -> None:
    settings.TAPIS_ALLOW_SIGNUP = True


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_permission_matrix(world: World, case: Case, role: str) -> None:
    client = world.client(role)
    path = case.path(world)
    if case.query:
        path += "?" + "&".join(f"{k}={v}" for k, v in case.query.items())
    kwargs: dict[str, Any] = {}
    if case.body is not None:
        kwargs["data"] = case.body(world)
        kwargs["format"] = "multipart" if case.multipart else "json"
    response = getattr(client, case.method.lower())(path, **kwargs)
    expected = case.expected[role]
    if expected >= 400:
        assert_error(response, expected)
    else:
        assert response.status_code == expected, (response.status_code, response.content[:400])


def test_every_endpoint_is_in_the_matrix(world: World) -> None:
    """A new endpoint of the schema must get a row here."""
    schema = world.client(ANON).get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    operations = {
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }
    covered = set()
    for case in CASES:
        template = case.path(world)
        for method, path in operations:
            if method == case.method and _matches(path, template):
                covered.add((method, path))
    assert operations - covered == set()


def _matches(template: str, concrete: str) -> bool:
    parts, actual = template.strip("/").split("/"), concrete.strip("/").split("/")
    if len(parts) != len(actual):
        return False
    return all(p == a or p.startswith("{") for p, a in zip(parts, actual, strict=True))
