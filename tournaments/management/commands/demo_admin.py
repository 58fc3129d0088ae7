"""``manage.py demo_admin``: the demo's administrator account, made once.

The first run creates the superuser ``admin`` with a random password, prints it and keeps it
in ``var/demo_admin_password`` (readable by its owner only); later runs only say where it is.
Refused in production mode, where administrators are made with ``createsuperuser``.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

USERNAME = "admin"


def password_file() -> Path:
    return Path(settings.VAR_DIR) / "demo_admin_password"


class Command(BaseCommand):
    help = "Create the demo administrator account (once) and print its password."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=USERNAME)

    def handle(self, *args: Any, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError("demo_admin is for the demo: use createsuperuser in production")
        username: str = options["username"]
        path = password_file()
        user_model = get_user_model()
        if user_model.objects.filter(username=username).exists():
            if path.exists():
                self.stdout.write(f"Demo admin: user {username!r}, password in {path}")
            else:
                self.stdout.write(
                    f"Demo admin: user {username!r} exists; "
                    f"set its password with: python manage.py changepassword {username}"
                )
            return
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser(username=username, email="", password=password)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(password + "\n")
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo admin created: user {username!r}, password {password} (kept in {path})"
            )
        )
