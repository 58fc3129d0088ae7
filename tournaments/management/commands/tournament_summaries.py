"""``manage.py tournament_summaries``: store the statistics of the finished tournaments that
have none (those finished before summaries existed). Deployments run it after ``migrate``
(docker/compose.yaml, ``make run``): one query when none is missing."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from tournaments import services
from tournaments.models import Tournament, TournamentSummary


class Command(BaseCommand):
    help = (
        "Compute and store the statistics (standings with intervals, crosstable) of every "
        "finished tournament without a stored summary, so that its pages read them instead of "
        "computing them (the tournament's finish does this for every tournament since). "
        "--all computes them again for every finished tournament."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all", action="store_true", help="every finished tournament, stored or not"
        )
        parser.add_argument(
            "--audits",
            action="store_true",
            help="also make and store the audit of every finished tournament that has none "
            "(each re-plays every deal: about 1.5 s for 1,000 deals; the finish queues it for "
            "every tournament since)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        finished = Tournament.objects.filter(
            status=Tournament.Status.FINISHED, practice=False
        ).order_by("pk")
        if not options["all"]:
            finished = finished.filter(summary__isnull=True)
        started = time.perf_counter()
        count = 0
        for tournament in finished.iterator():
            services.tournament_summary_store(tournament=tournament)
            count += 1
        if options["verbosity"] > 0:
            self.stdout.write(
                f"{count} tournament summar{'y' if count == 1 else 'ies'} stored "
                f"in {time.perf_counter() - started:.1f} s"
            )
        if not options["audits"]:
            return
        started = time.perf_counter()
        audits = 0
        unaudited = TournamentSummary.objects.filter(tournament__status=Tournament.Status.FINISHED)
        if not options["all"]:
            unaudited = unaudited.filter(audit__isnull=True)
        for tournament_id in unaudited.order_by("pk").values_list("tournament_id", flat=True):
            if services.tournament_audit_store(tournament_id=tournament_id) is not None:
                audits += 1
        if options["verbosity"] > 0:
            self.stdout.write(
                f"{audits} tournament audit{'' if audits == 1 else 's'} stored "
                f"in {time.perf_counter() - started:.1f} s"
            )
