"""Who may see what, and from when: the one place that decides.

The API, the pages and the admin ask these functions before they show anything of a
tournament; none of them decides on its own. The answer depends on who asks (``user``: a
user, ``AnonymousUser`` or ``None`` for nobody in particular) and on the moment, that is on
the state of the rows given (a table's status, its round's, its tournament's), read when the
question is asked.

What is decided, for whom, until when:

=================================  ==========================================================
subject                            shown
=================================  ==========================================================
a tournament (and what hangs off   to everyone, once it is no longer a draft; a draft only to
it: entries, rounds, tables)       its organiser and staff (:func:`tournament_shown`)
a practice run (a bot author's     to its author always, to staff once it is over (finished
"try it": ``Tournament.practice``)  or failed), to nobody else (:func:`practice_shown`); listed
                                   nowhere: no list, ranking, standing, statistic, bot page
                                   or public API list counts it (:func:`tournaments_listed_q`,
                                   :func:`tables_shown_q`); its table's play follows the rule
                                   below, for those who may see the practice
everything a table played: its     to everyone, staff included, once the table is finished
deals, hands, passes, tricks,      and, in duplicate play, its whole round is (the other
decisions, faults, replay log,     tables of the round play the same cards); never before,
audit, and its results: totals,    to no one (:func:`table_shown`, :func:`deal_shown`)
scores, places, points, decision
counts, mean times, the judge's
summary, when it finished
a seat's bot log (what the bot     to the bot's owner and staff, once the table is shown
wrote to stderr)                   (:func:`seat_log_shown`)
a tournament's seed                to everyone once the tournament is finished (revealed);
                                   never before, to no one (:func:`seed_shown`)
a table's deal seed                with its deals (:func:`table_seed_shown`): every replay
                                   names it (``seed``), and it is derived through SHA-256, so
                                   it says nothing of the tournament seed or other tables
=================================  ==========================================================

"Staff included" is the rule, not a default: no function here has an exception for staff
except the three that are about who runs a tournament (drafts), who owns a bot (logs) and
whose practice run it is (staff see one once it is over, when nothing of it is hidden).

Queries that filter many rows at once use :func:`tables_shown_q` and
:func:`tournaments_shown_q`, which say the same as the functions (the tests compare them for
every combination of statuses; :func:`tables_shown_q` is what is shown to the public, so it
leaves practice tables out; :func:`tables_shown_to_q` is what one user may see, the admin's),
and the lean replay path's SQL reads the four statuses and the practice flag and asks
:func:`play_public`. Lists of tournaments use
:func:`tournaments_listed_q`: what is shown, practice runs left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import models
from django.db.models import Q

from tournaments.models import (
    Deal,
    DealReplay,
    Decision,
    Fault,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
)

Viewer: TypeAlias = AbstractBaseUser | AnonymousUser | None
"""Who asks: a user, an anonymous visitor, or ``None`` (nobody in particular: the public)."""


def _authenticated(user: Viewer) -> bool:
    return bool(user is not None and getattr(user, "is_authenticated", False))


def _staff(user: Viewer) -> bool:
    return _authenticated(user) and bool(getattr(user, "is_staff", False))


# ---------------------------------------------------------------------------------------------
# Tournaments and drafts
# ---------------------------------------------------------------------------------------------


# A practice run is over (staff may see it) once its tournament is no longer running: finished,
# or cancelled because its table failed.
PRACTICE_OVER = (Tournament.Status.FINISHED, Tournament.Status.CANCELLED)


def _mine(user: Viewer, tournament: Tournament) -> bool:
    return _authenticated(user) and tournament.organiser_id == getattr(user, "pk", None)


def practice_shown(*, user: Viewer, tournament: Tournament) -> bool:
    """Whether ``user`` may see the practice run ``tournament`` (its page, its table, its
    deals once played): its author (the tournament's ``organiser``) always; staff once it is
    over (nothing of it is hidden then: "staff see nothing hidden" holds for a practice too);
    nobody else, ever."""
    return _mine(user, tournament) or (_staff(user) and tournament.status in PRACTICE_OVER)


def tournament_shown(*, user: Viewer, tournament: Tournament) -> bool:
    """Whether ``user`` may see ``tournament`` at all: every tournament but a draft, which
    only its organiser and staff see (they prepare it), and a practice run, which only
    :func:`practice_shown` allows."""
    if tournament.practice:
        return practice_shown(user=user, tournament=tournament)
    if tournament.status != Tournament.Status.DRAFT:
        return True
    return _staff(user) or _mine(user, tournament)


def tournaments_shown_q(*, user: Viewer, prefix: str = "") -> Q:
    """The tournaments ``user`` may see, as a filter of ``Tournament`` rows
    (:func:`tournament_shown`), or of rows that reach a tournament through ``prefix``
    (``"tournament__"`` for tables and entries)."""
    p = prefix
    mine = (
        Q(**{f"{p}organiser_id": getattr(user, "pk", None)})
        if _authenticated(user)
        else Q(**{f"{p}pk__in": []})
    )
    if _staff(user):
        return Q(**{f"{p}practice": False}) | Q(**{f"{p}status__in": PRACTICE_OVER}) | mine
    return (Q(**{f"{p}practice": False}) & ~Q(**{f"{p}status": Tournament.Status.DRAFT})) | mine


def tournaments_listed_q(*, user: Viewer) -> Q:
    """The tournaments a list shows ``user`` (the site's lists, the API's, a bot's entries):
    those :func:`tournaments_shown_q` allows but practice runs, which are found from their
    version's page only."""
    return tournaments_shown_q(user=user) & Q(practice=False)


# ---------------------------------------------------------------------------------------------
# What a table played, and its results
# ---------------------------------------------------------------------------------------------


def play_shown(
    *, table_status: str, round_status: str, tournament_status: str, duplicate: bool
) -> bool:
    """The rule itself, on the statuses of a table, its round and its tournament: a table's
    play and results are shown once the table is finished and, in duplicate play, its round
    (never in a draft). It does not depend on who asks.

    >>> play_shown(table_status="done", round_status="running", tournament_status="running",
    ...            duplicate=False)
    True
    >>> play_shown(table_status="done", round_status="running", tournament_status="running",
    ...            duplicate=True)
    False
    """
    return (
        table_status == Table.Status.DONE
        and tournament_status != Tournament.Status.DRAFT
        and (not duplicate or round_status == Round.Status.DONE)
    )


def play_public(
    *,
    table_status: str,
    round_status: str,
    tournament_status: str,
    duplicate: bool,
    practice: bool,
) -> bool:
    """Whether a table's play is shown to anyone who asks (the lean replay paths answer
    these without knowing who asks): :func:`play_shown`, and not a practice run (only its
    author and staff see that: :func:`practice_shown`).

    >>> play_public(table_status="done", round_status="done", tournament_status="finished",
    ...             duplicate=False, practice=True)
    False
    """
    return not practice and play_shown(
        table_status=table_status,
        round_status=round_status,
        tournament_status=tournament_status,
        duplicate=duplicate,
    )


def table_shown(*, user: Viewer, table: Table) -> bool:
    """Whether anything ``table`` played (deals, hands, passes, tricks, decisions, faults, the
    replay log, audits) and its results (totals, scores, places, points, each seat's decision
    count, mean time and faults, the judge's summary, when it finished) may be shown to
    ``user``. The same answer for everyone, staff included, once the tournament is one the
    user may see. Reads ``table.round`` and ``table.tournament``: select them with the table."""
    tournament = table.tournament
    return tournament_shown(user=user, tournament=tournament) and play_shown(
        table_status=table.status,
        round_status=table.round.status,
        tournament_status=tournament.status,
        duplicate=tournament.duplicate,
    )


def table_hidden_reason(*, table: Table) -> str:
    """Why the play and results of ``table`` are not shown yet, in words for a person (the
    API's 403 and the pages say it); meant for a table :func:`table_shown` refuses."""
    if table.status != Table.Status.DONE:
        return f"this table is {table.status}: its deals and results are shown once it is finished"
    if table.tournament.duplicate and table.round.status != Round.Status.DONE:
        return (
            "duplicate play: the other tables of this round play the same deals, so a "
            "table's deals and results are shown once every table of the round is finished"
        )
    return "this table's deals and results are not shown"


def _play_shown_q(prefix: str) -> Q:
    """:func:`play_shown` as a filter of ``Table`` rows (or of rows reaching one by ``prefix``)."""
    return (
        Q(**{f"{prefix}status": Table.Status.DONE})
        & ~Q(**{f"{prefix}tournament__status": Tournament.Status.DRAFT})
        & (
            Q(**{f"{prefix}tournament__duplicate": False})
            | Q(**{f"{prefix}round__status": Round.Status.DONE})
        )
    )


def tables_shown_q(*, prefix: str = "") -> Q:
    """The tables whose play and results may be shown to anyone (:func:`play_public`: what
    :func:`table_shown` answers for the public), as a filter of ``Table`` rows, or of rows that
    reach a table through ``prefix`` (``"table__"`` for deals, seats and faults). Practice
    tables are never among them: lists, statistics and bot pages never count them."""
    return _play_shown_q(prefix) & Q(**{f"{prefix}tournament__practice": False})


def tables_shown_to_q(*, user: Viewer, prefix: str = "") -> Q:
    """The tables whose play and results ``user`` may see (:func:`table_shown` for that user),
    as a filter like :func:`tables_shown_q`'s: those, and the practice runs' tables that
    :func:`practice_shown` gives the user (its author always, staff once it is over). For
    the admin's lists of one kind of row (deals, faults), not for public lists."""
    return _play_shown_q(prefix) & tournaments_shown_q(user=user, prefix=f"{prefix}tournament__")


def deal_shown(*, user: Viewer, deal: Deal) -> bool:
    """Whether ``deal`` (its hands, passes, tricks, decisions, points, replay and audit) may
    be shown to ``user``: when its table is (:func:`table_shown`)."""
    return table_shown(user=user, table=deal.table)


def seat_log_shown(*, user: Viewer, seat: Seat) -> bool:
    """Whether ``user`` may read what the bot of ``seat`` wrote to stderr: the bot's owner
    (the user who entered it) and staff, once the table is shown; a house bot's log, staff
    only. Reads ``seat.table`` (with its round and tournament) and ``seat.entry``."""
    if not table_shown(user=user, table=seat.table):
        return False
    if _staff(user):
        return True
    return (
        _authenticated(user)
        and seat.entry is not None
        and seat.entry.user_id == getattr(user, "pk", None)
    )


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


def seed_shown(*, tournament: Tournament) -> bool:
    """Whether the seed of ``tournament`` may be shown (to anyone: it is the same for all):
    once the tournament is finished and the seed revealed, never before. Every deal of every
    table follows from it."""
    return (
        tournament.status == Tournament.Status.FINISHED and tournament.seed_revealed_at is not None
    )


def shown_seed(*, tournament: Tournament) -> int | None:
    """The seed of ``tournament`` if it may be shown (:func:`seed_shown`), else None."""
    return tournament.seed_int if seed_shown(tournament=tournament) else None


def table_seed_shown(*, user: Viewer, table: Table) -> bool:
    """Whether the deal seed of ``table`` may be shown: with the table's deals
    (:func:`table_shown`), which carry it (every replay names its ``seed``). It is derived
    from the tournament seed through SHA-256 and tells nothing of other tables; in duplicate
    play every table of a round shares it, and the round's deals are shown together."""
    return table_shown(user=user, table=table)


# ---------------------------------------------------------------------------------------------
# Fields: what of each row is secret until it may be shown
# ---------------------------------------------------------------------------------------------

# A seat's results, written when its table is recorded (without what its bot wrote).
SEAT_RESULT_FIELDS = frozenset(Seat.RESULT_FIELDS) - {"bot_name", "log"}

SECRET_FIELDS: Mapping[type[models.Model], frozenset[str]] = {
    Tournament: frozenset({"seed"}),
    Table: frozenset({"deal_seed", "result", "finished_at", "deals", "fault_set"}),
    Seat: frozenset(Seat.RESULT_FIELDS),
    Deal: frozenset(
        {
            "seed",
            "record",
            "passes",
            "points",
            "log",
            "decisions",
            "faults",
            "tricks",
            "decision_set",
            "replay",
        }
    ),
    Trick: frozenset({"leader", "cards", "winner", "points"}),
    Decision: frozenset({"seat", "action", "seconds", "fault"}),
    Fault: frozenset({"seat", "entry", "kind", "deal_index", "decision", "step", "detail"}),
    DealReplay: frozenset({"document"}),
}
"""The fields (and reverse relations) of each model that hold something secret until it may
be shown: a tournament's seed, a table's deal seed, its judge's summary, its deals and faults,
a seat's results and bot log, everything of a deal. Pages and the admin never filter, search
or order by these (nothing can be learnt by asking yes-or-no questions about them), and show
them on a row only when :func:`hidden_fields` leaves them out."""


SECRET_ROWS: frozenset[type[models.Model]] = frozenset({Deal, DealReplay, Trick, Decision, Fault})
"""The models whose every row is secret until its table may be shown (a deal and what hangs off
it, a fault): whether one exists at all tells something (which entries faulted at a table in
play). Nothing may reach them through a relation (a filter ``faults__isnull``, or
``faults__id__gt`` to bisect): only a list of their own rows that leaves out those not shown
yet (:func:`tables_shown_to_q`)."""


def _table_of(obj: models.Model) -> Table | None:
    if isinstance(obj, Table):
        return obj
    if isinstance(obj, Seat | Deal | Fault):
        return obj.table
    if isinstance(obj, Trick | Decision | DealReplay):
        return obj.deal.table
    return None


def hidden_fields(*, user: Viewer, obj: models.Model) -> frozenset[str]:
    """The fields of ``obj`` (names of :data:`SECRET_FIELDS`) that may not be shown to
    ``user`` now: all of them while its table may not be shown (:func:`table_shown`), a
    tournament's seed until :func:`seed_shown`, a seat's log unless :func:`seat_log_shown`.
    Empty for a row with nothing secret."""
    secret = SECRET_FIELDS.get(type(obj), frozenset())
    if isinstance(obj, Tournament):
        return frozenset() if seed_shown(tournament=obj) else secret
    table = _table_of(obj)
    if table is None:
        return frozenset()
    if not table_shown(user=user, table=table):
        return secret
    if isinstance(obj, Seat) and not seat_log_shown(user=user, seat=obj):
        return frozenset({"log"})
    return frozenset()
