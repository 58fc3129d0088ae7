"""Practice runs: a bot author's "try it" (docs/members.md).

A practice run plays the author's ready version for a few deals against built-in bots, on a
worker, in the sandbox, and keeps every deal for the replay viewer. It is a tournament of one
round, one table and one entry (``Tournament.practice``): it goes through the tables' queue,
claim, lease, sweep, judge and recording like any table (a crashing or slow bot gives a
finished table with its faults; a lost worker's table is sent again by the sweep, or failed
after its attempts), so nothing of that machinery is written twice. What differs:

* it is created running, its one round seated at once (no registration, no second entry);
* it is its author's (its ``organiser``): listed nowhere, never rated, shown to its author and
  to staff once over (:func:`tournaments.visibility.practice_shown`);
* a failed table ends it (cancelled, :func:`practice_table_failed`), where a tournament would
  wait for its organiser to re-run the table;
* an author may have at most ``TAPIS_PRACTICE_ACTIVE`` runs waiting or playing, and start at
  most ``TAPIS_PRACTICE_PER_HOUR`` an hour; a run plays 1 to :data:`MAX_DEALS` deals;
* its clock is a tournament's but for the bank: ``TAPIS_PRACTICE_BANK_SECONDS`` (2 s) for a
  table of a few deals, where a tournament's 20 s last a whole table of many, so that a bot too
  slow for a tournament runs out of time in its try too, within seconds;
* all authors together have at most ``TAPIS_PRACTICE_IN_FLIGHT`` practice tables in flight
  (sent to the workers, or playing): the practice runs' fair share of the workers
  (:mod:`tournaments.services.fairshare`, as matches have theirs). The others wait, pending
  and unsent (``queued_at`` NULL), and :func:`practice_dispatch` sends them as those in flight
  end: when a run is created, when a practice table ends on its worker, and at every sweep.
  A tournament's table thus waits behind at most that many short practice tables, however
  many authors try their bots at once.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from judge import bots as builtin_bots
from tournaments import conf, queue, seeds
from tournaments.errors import ApplicationError
from tournaments.models import BotVersion, Entry, Table, Tournament
from tournaments.services import fairshare
from tournaments.services.lifecycle import round_advance, tournament_settings_checked
from tournaments.tournament_settings import TournamentSettings

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: The most deals a practice run plays (a few seconds against built-in bots).
MAX_DEALS = 10
DEFAULT_DEALS = 2
DEFAULT_OPPONENT = "heuristic"

# The practice form's fields, by the tournament setting (or engine option) a refusal names.
_FIELDS = {
    "deals_per_table": "deals",
    "fixed_deals": "deals",
    "table_size": "table_size",
    "players": "table_size",
    "preset": "preset",
    "house_bot": "opponent",
}


def practice_opponents(*, game: str) -> list[str]:
    """The built-in bots a practice run of ``game`` may play against."""
    return list(builtin_bots.builtin_names(game))


def _refusal(error: ApplicationError, *, table_size: int | None) -> ApplicationError:
    """A refusal of the tournament's checks, named after the practice form's field. A preset
    is sound as it is declared: an option of it the engine refuses is at odds with the table
    size chosen (Whisthub passes across, so not at a table of 3)."""
    named = str(error.extra.get("field") or error.extra.get("option") or "")
    field = _FIELDS.get(named, "")
    if not field and error.code == "invalid_option":
        field = "table_size" if table_size is not None and named else "preset"
    return ApplicationError(
        error.message, code=error.code, extra={**error.extra, "field": field} if field else {}
    )


def practice_create(
    *,
    owner: User,
    version: BotVersion,
    preset: str | None = None,
    table_size: int | None = None,
    deals: int = DEFAULT_DEALS,
    opponent: str = DEFAULT_OPPONENT,
) -> Tournament:
    """A practice run of ``version`` (``owner``'s own, ready) against the built-in
    ``opponent`` in every other seat: ``deals`` deals (1 to :data:`MAX_DEALS`) of its bot's
    game with ``preset`` (the game's default if None) at a table of ``table_size`` (the
    preset's if None). Its table is queued on the workers once this commits.

    Refused (ApplicationError, ``extra["field"]`` naming the form's field when there is one):
    another user's version (``not_owner``), a version not ready (``version_not_ready``), a
    number of deals out of bounds, an unknown opponent, rules the engine refuses (its own
    words), and an author over their limits (``practice_limit``)."""
    version = BotVersion.objects.select_related("bot").defer("content").get(pk=version.pk)
    if version.bot.owner_id != owner.pk:
        raise ApplicationError("you can only try your own bots", code="not_owner")
    if version.status != BotVersion.Status.READY:
        raise ApplicationError(
            f"{version.label} is {version.status}: only a ready version can be tried",
            code="version_not_ready",
        )
    if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MAX_DEALS:
        raise ApplicationError(
            f"a practice run plays from 1 to {MAX_DEALS} deals",
            code="deals_per_table",
            extra={"field": "deals"},
        )
    game = version.bot.game
    if opponent not in practice_opponents(game=game):
        raise ApplicationError(
            f"no built-in bot {opponent!r} plays {game}; there are: "
            + ", ".join(practice_opponents(game=game)),
            code="unknown_builtin",
            extra={"field": "opponent"},
        )
    try:
        values = tournament_settings_checked(
            settings=TournamentSettings(
                name=f"Practice: {version.label}",
                game=game,
                preset=preset or None,
                table_size=table_size,
                rounds=1,
                deals_per_table=deals,
                house_bot=opponent,
                bank_seconds=conf.practice_bank_seconds(),
            )
        )
    except ApplicationError as error:
        raise _refusal(error, table_size=table_size) from None
    now = timezone.now()
    with transaction.atomic():
        # One author's runs are counted one request at a time: two quick clicks never start
        # more than the limit.
        get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
        runs = Tournament.objects.filter(practice=True, organiser=owner)
        active = runs.filter(status=Tournament.Status.RUNNING).count()
        if active >= conf.practice_active_cap():
            raise ApplicationError(
                f"you have {active} practice run{'s' if active != 1 else ''} waiting or "
                "playing: try again once one is over",
                code="practice_limit",
                extra={"active": active, "max_active": conf.practice_active_cap()},
            )
        recent = runs.filter(created_at__gte=now - timedelta(hours=1)).count()
        if recent >= conf.practice_hourly_cap():
            raise ApplicationError(
                f"you started {recent} practice runs in the last hour, the most allowed: "
                "try again later",
                code="practice_limit",
                extra={"last_hour": recent, "max_per_hour": conf.practice_hourly_cap()},
            )
        seed = seeds.new_tournament_seed()
        tournament = Tournament.objects.create(
            organiser=owner,
            practice=True,
            status=Tournament.Status.RUNNING,
            started_at=now,
            created_at=now,
            seed=str(seed),
            commitment=seeds.seed_commitment(seed),
            **values,
        )
        Entry.objects.create(tournament=tournament, version=version, user=owner)
        round_advance(tournament=tournament)  # its table waits for a slot (queued_at NULL)
        practice_dispatch()
    tournament.refresh_from_db()
    return tournament


def practice_table_failed(*, table_id: int) -> bool:
    """End the practice run whose table ``table_id`` failed (cancelled: nobody re-runs a
    practice table, its author starts another). A table of a tournament is left alone (its
    organiser re-runs it); its slot goes to the next waiting run. True if a practice run
    ended."""
    ended = bool(
        Tournament.objects.filter(
            practice=True,
            status=Tournament.Status.RUNNING,
            tables__pk=table_id,
            tables__status=Table.Status.FAILED,
        ).update(status=Tournament.Status.CANCELLED, finished_at=timezone.now())
    )
    if ended:
        practice_dispatch()
    return ended


# Practice tables, by where they are: all of them belong to running practice runs.
_PRACTICE = Q(tournament__practice=True, tournament__status=Tournament.Status.RUNNING)
_SENT_OR_PLAYING = Q(status=Table.Status.RUNNING) | Q(
    status=Table.Status.PENDING, queued_at__isnull=False
)
_WAITING = Q(status=Table.Status.PENDING, queued_at__isnull=True)


def practice_tables_in_flight() -> int:
    """Practice tables sent to the workers (their message queued) or playing."""
    return Table.objects.filter(_PRACTICE & _SENT_OR_PLAYING).count()


def practice_dispatch() -> list[int]:
    """Send waiting practice tables while fewer than ``TAPIS_PRACTICE_IN_FLIGHT`` are in
    flight, by turns: an author's first waiting run before anyone's second, then the oldest
    first. A table whose message cannot be sent waits again (``queue.table_send`` clears its
    ``queued_at``), and so does one given back by its worker: the next dispatch sends it.
    Returns the tables sent (once the transaction, this one or the caller's, commits)."""

    busy: Counter[int] = Counter()  # each author's practice tables in flight

    def in_flight() -> int:
        busy.update(
            Table.objects.filter(_PRACTICE & _SENT_OR_PLAYING).values_list(
                "tournament__organiser_id", flat=True
            )
        )
        return busy.total()

    def waiting() -> list[Table]:  # after in_flight(), under the pool's lock
        tables = Table.objects.filter(_PRACTICE & _WAITING).select_related("tournament")
        return fairshare.fair_share_turns(
            list(tables.order_by("pk")), author=lambda t: t.tournament.organiser_id, busy=busy
        )

    def start(table: Table) -> bool:
        sent = Table.objects.filter(pk=table.pk).filter(_WAITING).update(queued_at=timezone.now())
        if sent:
            queue.table_enqueue(table=table, tournament=table.tournament)
        return bool(sent)

    with transaction.atomic():
        started = fairshare.fair_share_dispatch(
            pool=fairshare.PRACTICE,
            cap=conf.practice_in_flight_cap(),
            in_flight=in_flight,
            waiting=waiting,
            start=start,
        )
    return [table.pk for table in started]
