"""The world of the members' pages tests: the API tests' world (tests/api/conftest.py: an
author with a ready bot and a pending one, another author, an organiser of every tournament,
staff; a draft, an open, a running and a finished tournament) plus a second organiser who runs
none of them, the running tournament's table failed by a worker (through the services), and
two practice runs of the author's ready version: one played, one waiting for a worker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client, override_settings

from tests.api.conftest import FAST_HASHERS, World, build_world, make_user, ready_version
from tournaments import services
from tournaments.models import Seat, Table, Tournament

ROLES = ("anonymous", "author", "other", "organiser", "other_organiser", "staff")


@dataclasses.dataclass
class MembersWorld:
    api: World
    users: dict[str, User | None]
    failed: Table  # the running tournament's table, failed
    practice_done: Tournament  # the author's practice run of their ready version, played
    practice_waiting: Tournament  # another, queued (no worker in these tests)

    def client(self, role: str) -> Client:
        client = Client()
        user = self.users[role]
        if user is not None:
            client.force_login(user)
        return client

    def author_seat(self, table: Table) -> Seat:
        return Seat.objects.get(table=table, entry__user=self.users["author"])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)


def build_members_world() -> MembersWorld:
    api = build_world()
    users = {**api.users, "other_organiser": make_user("organiser2", organiser=True)}
    table = api.table_running
    claimed = services.table_claim(table_id=table.pk, worker="tests", token="tests-token")
    assert claimed is not None
    assert services.table_fail(
        table_id=table.pk, token="tests-token", error="RuntimeError: the judge fell over"
    )
    table.refresh_from_db()
    author = users["author"]
    assert author is not None
    version = ready_version(api.bot)
    done = services.practice_create(owner=author, version=version, deals=2)
    services.tournament_run_here(tournament=done)
    done.refresh_from_db()
    assert done.status == Tournament.Status.FINISHED
    waiting = services.practice_create(owner=author, version=version, deals=1)
    return MembersWorld(
        api=api, users=users, failed=table, practice_done=done, practice_waiting=waiting
    )


def members_world_for_module(django_db_blocker: Any) -> Iterator[MembersWorld]:
    """The body of a module-scoped fixture: one world for the whole module, built once in a
    transaction that is rolled back when the module is done."""
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHERS),
        transaction.atomic(),
    ):
        yield build_members_world()
        transaction.set_rollback(True)
