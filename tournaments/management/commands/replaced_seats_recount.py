"""``manage.py replaced_seats_recount``: recount the tables recorded before the rule that a
fault never pays (docs/tournaments.md, "A fault never pays"). Deployments run it after
``migrate`` (docker/compose.yaml, ``make run``): one query when nothing is left to recount."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from tournaments import services


class Command(BaseCommand):
    help = (
        "Recount every table recorded before the rule that a fault never pays: its replaced "
        "seats forfeit the rest of the table from the deal they were replaced in; then the "
        "matchpoints, final standings, summaries and ratings that depend on them. Idempotent."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        done = services.replaced_seats_recount()
        if options["verbosity"] > 0:
            self.stdout.write(
                f"{done.tables} table{'' if done.tables == 1 else 's'} of "
                f"{done.tournaments} tournament{'' if done.tournaments == 1 else 's'} recounted"
                + (f"; ratings rebuilt: {', '.join(done.families)}" if done.families else "")
            )
