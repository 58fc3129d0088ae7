"""``manage.py organiser USER [--remove]``: grant (or take away) the right to create and run
tournaments, membership of the ``organisers`` group (api/organisers.py)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.organisers import organiser_grant, organiser_revoke


class Command(BaseCommand):
    help = "Make a user an organiser (may create and run tournaments), or --remove the right."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--remove", action="store_true", help="take the right away")

    def handle(self, *args: Any, **options: Any) -> None:
        name: str = options["username"]
        user = get_user_model().objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"no user named {name!r}")
        if options["remove"]:
            changed = organiser_revoke(user=user)
            done = "is no longer an organiser" if changed else "was not an organiser"
        else:
            changed = organiser_grant(user=user)
            done = "is now an organiser" if changed else "was already an organiser"
        self.stdout.write(f"{name} {done}.")
