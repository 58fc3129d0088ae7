"""Test data for the tournaments app (factory-boy), and helpers that go through the services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.test import Client

from tournaments import services
from tournaments.models import Bot, BotVersion, Entry, Tournament
from tournaments.tournament_settings import TournamentSettings

BOTS_DIR = Path(__file__).resolve().parent / "bots"


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"author{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.org")


class BotFactory(factory.django.DjangoModelFactory[Bot]):
    class Meta:
        model = Bot

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"bot-{n}")
    game = "hearts"


class BuiltinVersionFactory(factory.django.DjangoModelFactory[BotVersion]):
    """A ready version running a built-in bot (trusted, no validation)."""

    class Meta:
        model = BotVersion

    bot = factory.SubFactory(BotFactory)
    number = factory.Sequence(lambda n: n + 1)
    builtin = "random"
    sha256 = factory.LazyAttribute(lambda v: f"builtin-{v.builtin}".ljust(64, "0"))
    status = BotVersion.Status.READY
    report = factory.LazyFunction(lambda: {"ok": True})


def file_version(bot: Bot, name: str, *, status: str = BotVersion.Status.READY) -> BotVersion:
    """A version of ``bot`` uploaded from tests/tournaments/bots/<name>.py, marked ``status``
    without running the validation (tests of the validation run it on purpose)."""
    import hashlib

    data = (BOTS_DIR / f"{name}.py").read_bytes()
    last = bot.versions.order_by("-number").first()
    return BotVersion.objects.create(
        bot=bot,
        number=(last.number + 1) if last else 1,
        content=data,
        filename=f"{name}.py",
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        status=status,
        report={"ok": True} if status == BotVersion.Status.READY else {},
    )


def make_tournament(
    *, organiser: User | None = None, open_it: bool = True, **kwargs: Any
) -> Tournament:
    """A tournament made by the service (so with a seed and its commitment), open by default."""
    settings: dict[str, Any] = {
        "name": "Test cup",
        "game": "hearts",
        "preset": "whisthub",
        "rounds": 3,
        "deals_per_table": 4,
        "decision_seconds": 2.0,
        "bank_seconds": 10.0,
        "startup_seconds": 10.0,
    }
    settings.update(kwargs)
    user = organiser or UserFactory.create()
    tournament = services.tournament_create(organiser=user, settings=TournamentSettings(**settings))
    if open_it:
        services.tournament_open(tournament=tournament)
    return tournament


def enter(tournament: Tournament, version: BotVersion) -> Entry:
    return services.entry_register(tournament=tournament, version=version, user=version.bot.owner)


def enter_builtins(tournament: Tournament, names: list[str]) -> list[Entry]:
    """One entry per name, each a built-in bot of its own user."""
    versions = [
        BuiltinVersionFactory.create(builtin=name, bot__game=tournament.game) for name in names
    ]
    return [enter(tournament, version) for version in versions]


def admin_change_data(client: Client, url: str) -> dict[str, Any]:
    """What an admin change form at ``url`` would post unchanged: its fields' initial values
    and its inlines' management forms."""
    page = client.get(url)
    form = page.context["adminform"].form
    data = {name: form.initial.get(name) for name in form.fields}
    data = {k: ("" if v is None else v) for k, v in data.items()}
    for inline in page.context["inline_admin_formsets"]:
        management = inline.formset.management_form
        data.update({management.add_prefix(k): v for k, v in management.initial.items()})
    return data
