"""The fault suite's hands on the private database, run as a subprocess with the private
instances' environment (the test process's Django talks to the machine's test database):

    python tests/faults/probe.py create --entries 8 --rounds 2 --deals 3 [--bot slow]
    python tests/faults/probe.py check TOURNAMENT_ID
    python tests/faults/probe.py upload --think 0.3

``create`` makes a tournament of sandboxed slow bots through the services, starts it and prints
its id; ``check`` prints, as JSON, what the suite asserts: each table's status and deals,
duplicates, the audit, the rating changes; ``upload`` uploads a new version of a bot that
thinks ``--think`` seconds a decision (queued for validation: a worker takes it) and prints its
id.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def create(entries: int, rounds: int, deals: int, bot: str) -> int:
    import uuid

    from tests.tournaments.factories import (
        BotFactory,
        UserFactory,
        enter,
        file_version,
        make_tournament,
    )
    from tournaments import services

    run = uuid.uuid4().hex[:8]  # each probe is a new process: factory sequences start again

    tournament = make_tournament(
        organiser=UserFactory.create(username=f"organiser-{run}"),
        rounds=rounds,
        deals_per_table=deals,
        decision_seconds=2.0,
        name=f"Fault cup {run}",
    )
    for n in range(entries):
        owner = UserFactory.create(username=f"author-{run}-{n}")
        enter(tournament, file_version(BotFactory.create(owner=owner, name=f"bot-{run}-{n}"), bot))
    services.tournament_start(tournament=tournament)
    return tournament.pk


def upload(think: float) -> int:
    import uuid

    from tests.tournaments.factories import BOTS_DIR, UserFactory
    from tournaments import services

    run = uuid.uuid4().hex[:8]
    source = (BOTS_DIR / "slow.py").read_text().replace("sleep(0.03)", f"sleep({think!r})")
    assert f"sleep({think!r})" in source
    owner = UserFactory.create(username=f"uploader-{run}")
    bot = services.bot_create(owner=owner, name=f"thinker-{run}", game="hearts")
    version = services.bot_version_create(bot=bot, content=source.encode(), filename="bot.py")
    return version.pk


def check(tournament_id: int) -> dict[str, object]:
    from django.db.models import Count

    from tournaments import services
    from tournaments.models import Deal, RatingHistory, Seat, Table, Tournament

    tournament = Tournament.objects.get(pk=tournament_id)
    tables = list(Table.objects.filter(tournament=tournament).order_by("round__number", "number"))
    deals = dict(
        Deal.objects.filter(table__tournament=tournament)
        .values_list("table_id")
        .annotate(n=Count("pk"))
        .values_list("table_id", "n")
    )
    changes = RatingHistory.objects.filter(tournament=tournament)
    seats = Seat.objects.filter(table__tournament=tournament, entry__isnull=False).count()
    audit = services.tournament_audit(tournament=tournament) if deals else None
    return {
        "status": tournament.status,
        "deals_per_table": tournament.deals_per_table,
        "tables": [
            {
                "id": t.pk,
                "status": t.status,
                "deals": deals.get(t.pk, 0),
                "attempts": t.attempts,
                "claims": t.claims,
                "worker": t.claimed_by,
                "error": t.error[-300:],
            }
            for t in tables
        ],
        "audit_ok": bool(audit and audit.ok),
        "rating_changes": changes.count(),
        "rating_changes_distinct": changes.values("rating_id", "table_id").distinct().count(),
        "seats_with_entries": seats,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("create")
    make.add_argument("--entries", type=int, default=8)
    make.add_argument("--rounds", type=int, default=2)
    make.add_argument("--deals", type=int, default=3)
    make.add_argument("--bot", default="slow")
    send = sub.add_parser("upload")
    send.add_argument("--think", type=float, default=0.3)
    look = sub.add_parser("check")
    look.add_argument("tournament", type=int)
    args = parser.parse_args()

    import django

    django.setup()
    if args.command == "create":
        print(create(args.entries, args.rounds, args.deals, args.bot))
    elif args.command == "upload":
        print(upload(args.think))
    else:
        print(json.dumps(check(args.tournament)))


if __name__ == "__main__":
    main()
