"""``manage.py login_unlock --username NAME --address ADDRESS``: lift a login lock-out."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.authentication import login_unlock


class Command(BaseCommand):
    help = (
        "Lift the lock-out of a user name (and of every look-alike of it) and/or an address "
        "after too many failed logins: their failed logins are forgotten."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", help="the user name that is locked out")
        parser.add_argument("--address", help="the client address that is locked out")

    def handle(self, *args: Any, username: str | None, address: str | None, **options: Any) -> None:
        if username is None and address is None:
            raise CommandError("name a user name (--username), an address (--address) or both")
        deleted = login_unlock(username=username, address=address)
        named = " and ".join(
            part
            for part in (
                f"user name {username!r}" if username is not None else "",
                f"address {address}" if address is not None else "",
            )
            if part
        )
        self.stdout.write(f"Lifted the lock-out of {named} ({deleted} failure counts deleted).")
