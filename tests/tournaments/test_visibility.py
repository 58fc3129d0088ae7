"""tournaments.visibility: one rule, asked the same way by every path.

The lean replay path's SQL (``selectors.deal_replay_stored``), the querysets' filters
(``tables_shown_q``, ``tournaments_shown_q``) and the functions on model instances must agree
for every combination of statuses, for every kind of user.
"""

from __future__ import annotations

import doctest
import itertools
from types import ModuleType

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.tournaments.factories import (
    BuiltinVersionFactory,
    UserFactory,
    enter_builtins,
    make_tournament,
)
from tournaments import selectors, services, visibility
from tournaments.admin import base as admin_base
from tournaments.models import Deal, DealReplay, Entry, Round, Seat, Table, Tournament

pytestmark = pytest.mark.django_db

TOURNAMENT_STATUSES = [s.value for s in Tournament.Status]
ROUND_STATUSES = [s.value for s in Round.Status]
TABLE_STATUSES = [s.value for s in Table.Status]


def _tournament(
    organiser: User, status: str, duplicate: bool, *, practice: bool = False
) -> Tournament:
    finished = status == Tournament.Status.FINISHED
    return Tournament.objects.create(
        name=f"{status} {duplicate} {practice}",
        practice=practice,
        organiser=organiser,
        game="hearts",
        preset="whisthub",
        table_size=4,
        rounds=2,
        deals_per_table=1,
        duplicate=duplicate,
        status=status,
        seed="1234567890123456789",
        commitment="0" * 64,
        seed_revealed_at=timezone.now() if finished else None,
    )


@pytest.fixture
def users() -> dict[str, User | AnonymousUser | None]:
    return {
        "nobody": None,
        "anonymous": AnonymousUser(),
        "organiser": UserFactory.create(username="org"),
        "other": UserFactory.create(username="other"),
        "staff": UserFactory.create(username="staff", is_staff=True),
    }


def test_every_path_agrees_on_every_combination_of_statuses(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    """Practice runs included: their play follows the same rule, for their author (the
    "organiser" here) always and for staff once the run is over; the public paths (the lean
    replay SQL, ``tables_shown_q``) and everyone else never see them."""
    organiser = users["organiser"]
    assert isinstance(organiser, User)
    deals: list[tuple[Deal, bool, dict[str, bool]]] = []
    for status, duplicate, practice in itertools.product(
        TOURNAMENT_STATUSES, (False, True), (False, True)
    ):
        tournament = _tournament(organiser, status, duplicate, practice=practice)
        for number, round_status in enumerate(ROUND_STATUSES, start=1):
            round_ = Round.objects.create(tournament=tournament, number=number, status=round_status)
            for table_number, table_status in enumerate(TABLE_STATUSES, start=1):
                table = Table.objects.create(
                    tournament=tournament,
                    round=round_,
                    number=table_number,
                    deal_seed=7,
                    status=table_status,
                )
                deal = Deal.objects.create(table=table, index=0, record={}, points=[0], log={})
                DealReplay.objects.create(deal=deal, document="{}")
                play = (
                    table_status == "done"
                    and status != "draft"
                    and (not duplicate or round_status == "done")
                )
                over = status in ("finished", "cancelled")
                by_user = dict.fromkeys(users, play and not practice)
                if practice:
                    by_user.update(organiser=play, staff=play and over)
                deals.append((deal, play and not practice, by_user))
    assert len(deals) == len(TOURNAMENT_STATUSES) * 4 * len(ROUND_STATUSES) * len(TABLE_STATUSES)
    shown_by_query = set(
        Table.objects.filter(visibility.tables_shown_q()).values_list("pk", flat=True)
    )
    deals_by_query = set(
        Deal.objects.filter(visibility.tables_shown_q(prefix="table__")).values_list(
            "pk", flat=True
        )
    )
    deals_to_user = {
        name: set(
            Deal.objects.filter(
                visibility.tables_shown_to_q(user=user, prefix="table__")
            ).values_list("pk", flat=True)
        )
        for name, user in users.items()
    }
    assert any(by_user["organiser"] for _, public, by_user in deals if not public)
    assert any(by_user["staff"] for _, public, by_user in deals if not public)
    for deal, public, by_user in deals:
        stored = selectors.deal_replay_stored(deal_id=deal.pk)
        assert stored is not None
        assert stored.visible is public, deal.table  # the lean path's SQL
        assert (deal.table_id in shown_by_query) is public
        assert (deal.pk in deals_by_query) is public
        fresh = selectors.deal_get(deal_id=deal.pk)  # what the API's view reads
        for name, user in users.items():
            expected = by_user[name]
            assert visibility.deal_shown(user=user, deal=fresh) is expected, (name, deal.table)
            assert (deal.pk in deals_to_user[name]) is expected, (name, deal.table)
            assert visibility.table_shown(user=user, table=fresh.table) is expected, name
            # The same from the row of the tournament a path reads the table's through.
            shown = Tournament.objects.filter(
                visibility.tournaments_shown_q(user=user, prefix=""), pk=fresh.table.tournament_id
            ).exists()
            assert shown is visibility.tournament_shown(
                user=user, tournament=fresh.table.tournament
            )


def test_drafts_are_their_organisers_and_staffs_and_the_filter_agrees(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    organiser = users["organiser"]
    assert isinstance(organiser, User)
    tournaments = [_tournament(organiser, status, False) for status in TOURNAMENT_STATUSES]
    for name, user in users.items():
        by_query = set(
            Tournament.objects.filter(visibility.tournaments_shown_q(user=user)).values_list(
                "pk", flat=True
            )
        )
        for tournament in tournaments:
            expected = tournament.status != "draft" or name in ("organiser", "staff")
            assert visibility.tournament_shown(user=user, tournament=tournament) is expected
            assert (tournament.pk in by_query) is expected, (name, tournament.status)


def test_a_practice_run_is_its_authors_and_staffs_once_over_and_listed_nowhere(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    author = users["organiser"]  # a practice run's organiser is its author
    assert isinstance(author, User)
    runs = [_tournament(author, s, False, practice=True) for s in TOURNAMENT_STATUSES]
    ordinary = _tournament(author, Tournament.Status.RUNNING, False)
    for name, user in users.items():
        shown = set(
            Tournament.objects.filter(visibility.tournaments_shown_q(user=user)).values_list(
                "pk", flat=True
            )
        )
        listed = set(
            Tournament.objects.filter(visibility.tournaments_listed_q(user=user)).values_list(
                "pk", flat=True
            )
        )
        assert ordinary.pk in listed
        for run in runs:
            expected = name == "organiser" or (
                name == "staff" and run.status in ("finished", "cancelled")
            )
            assert visibility.practice_shown(user=user, tournament=run) is expected, name
            assert visibility.tournament_shown(user=user, tournament=run) is expected, name
            assert (run.pk in shown) is expected, (name, run.status)
            assert run.pk not in listed, (name, run.status)


def test_the_seed_is_shown_once_finished_to_everyone_and_never_before(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    organiser = users["organiser"]
    assert isinstance(organiser, User)
    for status in TOURNAMENT_STATUSES:
        tournament = _tournament(organiser, status, False)
        shown = status == Tournament.Status.FINISHED
        assert visibility.seed_shown(tournament=tournament) is shown
        assert visibility.shown_seed(tournament=tournament) == (
            1234567890123456789 if shown else None
        )
    # A finished tournament whose seed was somehow not revealed keeps it.
    odd = _tournament(organiser, Tournament.Status.FINISHED, False)
    odd.seed_revealed_at = None
    assert visibility.shown_seed(tournament=odd) is None


def test_a_bots_log_is_its_owners_and_staffs_once_the_table_is_shown(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    organiser = users["organiser"]
    assert isinstance(organiser, User)
    tournament = _tournament(organiser, Tournament.Status.RUNNING, True)
    version = BuiltinVersionFactory.create()
    owner = version.bot.owner
    entry = Entry.objects.create(tournament=tournament, version=version, user=owner)
    round_ = Round.objects.create(tournament=tournament, number=1)
    table = Table.objects.create(
        tournament=tournament, round=round_, number=1, deal_seed=1, status=Table.Status.DONE
    )
    seat = Seat.objects.create(table=table, position=0, entry=entry, log="my hand: QS")
    house = Seat.objects.create(table=table, position=1, house_bot="random", log="house")
    everyone = {**users, "owner": owner}
    # The round is still being played: no one, not the owner, not staff.
    for user in everyone.values():
        assert visibility.seat_log_shown(user=user, seat=seat) is False
        assert visibility.seat_log_shown(user=user, seat=house) is False
    round_.status = Round.Status.DONE
    round_.save(update_fields=["status"])
    for name, user in everyone.items():
        assert visibility.seat_log_shown(user=user, seat=seat) is (name in ("owner", "staff"))
        assert visibility.seat_log_shown(user=user, seat=house) is (name == "staff")


def test_hidden_fields_follow_the_rule_for_each_kind_of_row(
    users: dict[str, User | AnonymousUser | None],
) -> None:
    organiser = users["organiser"]
    staff = users["staff"]
    assert isinstance(organiser, User)
    tournament = _tournament(organiser, Tournament.Status.RUNNING, True)
    assert visibility.hidden_fields(user=staff, obj=tournament) == {"seed"}
    round_ = Round.objects.create(tournament=tournament, number=1)
    table = Table.objects.create(
        tournament=tournament, round=round_, number=1, deal_seed=1, status=Table.Status.DONE
    )
    seat = Seat.objects.create(table=table, position=0, house_bot="random")
    deal = Deal.objects.create(table=table, index=0, record={}, points=[0], log={})
    for row in (table, seat, deal):
        assert visibility.hidden_fields(user=staff, obj=row) == visibility.SECRET_FIELDS[type(row)]
    round_.status = Round.Status.DONE
    for row in (table, seat, deal):
        assert visibility.hidden_fields(user=staff, obj=row) == frozenset(), row
    assert visibility.hidden_fields(user=None, obj=seat) == {"log"}  # a log is staff's, owner's
    assert visibility.hidden_fields(user=staff, obj=round_) == frozenset()


@pytest.mark.parametrize("module", [visibility, admin_base])
def test_the_docstring_examples_hold(module: ModuleType) -> None:
    results = doctest.testmod(module)
    assert results.attempted > 0
    assert results.failed == 0


def test_a_public_audit_reports_nothing_of_a_duplicate_round_in_play() -> None:
    """The audit page re-plays the recorded tables; a problem names scores, places and seeds,
    so a table of a round still being played is not audited there (the admin and the command
    audit everything)."""
    tournament = make_tournament(duplicate=True, rounds=2, deals_per_table=1)
    enter_builtins(tournament, ["random", "lowest", "heuristic", "random", "lowest"])
    services.tournament_start(tournament=tournament)
    first, second = Table.objects.filter(tournament=tournament).order_by("number")
    services.table_run(table_id=first.pk, worker="test", token="test-1")
    Deal.objects.filter(table=first).update(points=[31, 41, 59, 26])  # a tampered row
    full = services.tournament_audit(tournament=tournament)
    assert any("31, 41, 59, 26" in problem for problem in full.problems)
    public = services.tournament_audit(tournament=tournament, shown_only=True)
    assert (public.ok, public.tables, public.deals) == (True, 0, 0)
    page = Client().get(reverse("tournaments:tournament-audit", args=[tournament.pk]))
    assert page.status_code == 200
    assert "31, 41, 59, 26" not in page.content.decode()

    services.table_run(table_id=second.pk, worker="test", token="test-2")
    page = Client().get(reverse("tournaments:tournament-audit", args=[tournament.pk]))
    assert "31, 41, 59, 26" in page.content.decode()
