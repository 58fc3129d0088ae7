"""Fixtures of the API tests: five kinds of client and a small world made through the services.

Roles: ``anonymous``; ``author`` (owns the bots ``bot`` and ``pending``); ``other`` (another
author, owns ``other_bot``); ``organiser`` (in the ``organisers`` group, organises every
tournament of the world); ``staff``. Each logged-in client authenticates with a real token.

Tables are played in this process (``tournament_run_here``) by built-in bots: no worker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.cache import cache
from django.db import transaction
from django.test import override_settings
from rest_framework.test import APIClient

from api import accounts, caching
from api.permissions import ORGANISERS_GROUP
from tournaments import services
from tournaments.models import Bot, BotVersion, Deal, Table, Tournament
from tournaments.tournament_settings import TournamentSettings

ROLES = ("anonymous", "author", "other", "organiser", "staff")
BOT_FILE = Path(__file__).resolve().parent / "bots" / "first_legal.py"


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    """Throttle counters and the API's caches start empty in every test."""
    cache.clear()
    caching.clear()
    yield
    cache.clear()
    caching.clear()


def make_user(username: str, *, staff: bool = False, organiser: bool = False) -> User:
    user = User.objects.create_user(username=username, password=f"{username}-secret-pw")
    if staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    if organiser:
        group, _ = Group.objects.get_or_create(name=ORGANISERS_GROUP)
        user.groups.add(group)
    return user


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.token_issue(user=user).key}")
    return client


def builtin_bot(owner: User, name: str, builtin: str = "random", game: str = "hearts") -> Bot:
    bot = services.bot_create(owner=owner, name=name, game=game)
    services.bot_version_create(bot=bot, builtin=builtin)
    return bot


def ready_version(bot: Bot) -> BotVersion:
    """The bot's latest ready version."""
    version = bot.versions.filter(status=BotVersion.Status.READY).order_by("-number").first()
    assert version is not None
    return version


def make_tournament(organiser: User, *, open_it: bool = True, **kwargs: Any) -> Tournament:
    settings: dict[str, Any] = {
        "name": "Test cup",
        "game": "hearts",
        "preset": "whisthub",
        "rounds": 1,
        "deals_per_table": 2,
    }
    settings.update(kwargs)
    tournament = services.tournament_create(
        organiser=organiser, settings=TournamentSettings(**settings)
    )
    if open_it:
        services.tournament_open(tournament=tournament)
    return tournament


def enter(tournament: Tournament, bot: Bot) -> None:
    services.entry_register(tournament=tournament, version=ready_version(bot), user=bot.owner)


@dataclasses.dataclass
class World:
    users: dict[str, User | None]
    bot: Bot  # the author's, with a ready built-in version 1
    pending: Bot  # the author's, with an uploaded version 1 still pending
    other_bot: Bot  # the other author's
    draft: Tournament
    open: Tournament  # entries: other_bot and extra0 (the author's bot may enter)
    running: Tournament
    finished: Tournament
    table_running: Table
    table_done: Table
    deal_done: Deal

    def client(self, role: str) -> APIClient:
        return client_for(self.users[role])


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = FAST_HASHERS


def build_world() -> World:
    users: dict[str, User | None] = {
        "anonymous": None,
        "author": make_user("author"),
        "other": make_user("other"),
        "organiser": make_user("organiser", organiser=True),
        "staff": make_user("staff", staff=True),
    }
    author, other, organiser = users["author"], users["other"], users["organiser"]
    assert author is not None
    assert other is not None
    assert organiser is not None
    bot = builtin_bot(author, "alpha", "heuristic")
    pending = services.bot_create(owner=author, name="beta", game="hearts")
    services.bot_version_create(bot=pending, content=BOT_FILE.read_bytes(), filename="beta.py")
    other_bot = builtin_bot(other, "gamma", "lowest")
    extra = [builtin_bot(make_user(f"extra{i}"), f"extra{i}") for i in range(2)]

    draft = make_tournament(organiser, open_it=False, name="Draft cup")
    open_ = make_tournament(organiser, name="Open cup")
    enter(open_, other_bot)
    enter(open_, extra[0])

    running = make_tournament(organiser, name="Running cup")
    for b in (bot, other_bot, *extra):
        enter(running, b)
    services.tournament_start(tournament=running)

    finished = make_tournament(organiser, name="Finished cup")
    for b in (bot, other_bot, *extra):
        enter(finished, b)
    services.tournament_start(tournament=finished)
    services.tournament_run_here(tournament=finished)
    finished.refresh_from_db()
    assert finished.status == Tournament.Status.FINISHED

    table_done = Table.objects.filter(tournament=finished).order_by("pk").first()
    assert table_done is not None
    return World(
        users=users,
        bot=bot,
        pending=pending,
        other_bot=other_bot,
        draft=draft,
        open=open_,
        running=running,
        finished=finished,
        table_running=Table.objects.filter(tournament=running).order_by("pk")[0],
        table_done=table_done,
        deal_done=Deal.objects.filter(table=table_done).order_by("index")[0],
    )


@pytest.fixture(scope="module")
def _module_world(django_db_setup: None, django_db_blocker: Any) -> Iterator[World]:
    """One world per test module, inside a transaction rolled back at the end of the module;
    each test runs in a savepoint inside it (what ``TestCase.setUpTestData`` does)."""
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHERS),
        transaction.atomic(),
    ):
        yield build_world()
        transaction.set_rollback(True)


@pytest.fixture
def world(_module_world: World, db: None) -> World:
    """The world of this module, as it was built: each test's changes are rolled back.

    Its model instances are not refreshed: tests read them (pks, names), they do not rely on
    their fields after a request changed the database."""
    return _module_world


def assert_error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the documented error shape with this status (and code)."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error["code"], str)
    assert error["code"]
    assert isinstance(error["message"], str)
    assert error["message"]
    assert isinstance(error["fields"], dict)
    assert set(error) <= {"code", "message", "fields", "details"}
    if code is not None:
        assert error["code"] == code, error
    return dict(error)
