"""``manage.py audit_tournament ID``: re-play every deal of a tournament through the engine."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tournaments import services
from tournaments.models import Tournament


class Command(BaseCommand):
    help = (
        "Audit a tournament: re-play every recorded deal from its seed and log through the "
        "engine (every action legal, every score right), compare with the stored rows, and "
        "check the seed against its commitment once revealed. Exit status 1 if anything is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tournament_id", type=int)
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            tournament = Tournament.objects.get(pk=options["tournament_id"])
        except Tournament.DoesNotExist:
            raise CommandError(f"no tournament {options['tournament_id']}") from None
        report = services.tournament_audit(tournament=tournament)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), indent=2))
        else:
            commitment = {
                None: "seed not revealed yet",
                True: "the revealed seed matches the commitment",
                False: "the revealed seed does NOT match the commitment",
            }[report.commitment_ok]
            self.stdout.write(
                f"{tournament} ({tournament.status}): {report.deals} deals of "
                f"{report.tables} tables replayed; {commitment}"
            )
            for problem in report.problems:
                self.stdout.write(self.style.ERROR(f"  {problem}"))
            if report.ok:
                self.stdout.write(self.style.SUCCESS("OK: every action legal, every score right"))
        if not report.ok:
            raise SystemExit(1)
