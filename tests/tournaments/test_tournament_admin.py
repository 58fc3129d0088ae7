"""The admin: every page of the tournaments app renders, and its actions call the services."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import F, Model
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from tests.tournaments.factories import (
    BuiltinVersionFactory,
    admin_change_data,
    enter_builtins,
    make_tournament,
)
from tournaments import services
from tournaments.admin.base import lookup_touches_secret
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    Entry,
    Fault,
    Rating,
    Round,
    Seat,
    Table,
    Tournament,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff() -> Client:
    user = get_user_model().objects.create_superuser("root", "root@example.org", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_every_page_renders_after_the_demo(staff: Client) -> None:
    call_command("demo", "--rounds", "2", "--deals", "2", stdout=io.StringIO())
    tournament = Tournament.objects.get()
    for model in (Tournament, Entry, Round, Table, Seat, Deal, Bot, BotVersion, Rating, Fault):
        name = model._meta.model_name
        page = staff.get(reverse(f"admin:tournaments_{name}_changelist"))
        assert page.status_code == 200, name
        row = model.objects.first()
        if row is not None:
            page = staff.get(reverse(f"admin:tournaments_{name}_change", args=[row.pk]))
            assert page.status_code == 200, name
    page = staff.get(reverse("admin:tournaments_tournament_change", args=[tournament.pk]))
    content = page.content.decode()
    assert "vs table average" in content  # the standings
    assert tournament.commitment in content
    assert str(tournament.revealed_seed) in content
    listing = staff.get(reverse("admin:tournaments_tournament_changelist")).content.decode()
    assert "round 2/2, 4/4 tables" in listing


def test_actions_open_start_audit_cancel(staff: Client) -> None:
    tournament = make_tournament(open_it=False)
    url = reverse("admin:tournaments_tournament_changelist")

    def act(action: str) -> str:
        response = staff.post(
            url, {"action": action, "_selected_action": [tournament.pk]}, follow=True
        )
        assert response.status_code == 200
        return response.content.decode()

    assert "Opened: 1" in act("open_tournaments")
    enter_builtins(tournament, ["random", "lowest", "heuristic"])
    assert "Started: 1" in act("start_tournaments")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.RUNNING
    assert "the tournament is running" in act("open_tournaments")
    assert "0 deals of 0 tables replayed" in act("audit")
    assert "Cancelled: 1" in act("cancel_tournaments")
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.CANCELLED


def test_editing_a_draft_goes_through_the_service(staff: Client) -> None:
    tournament = make_tournament(open_it=False)
    url = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    data = admin_change_data(staff, url)
    data["options"] = '{"jokers": true}'
    data["place_points"] = "[4, 2, 1, 0]"
    response = staff.post(url, data)
    assert response.status_code == 200
    assert "unknown option" in response.content.decode()
    data["options"] = "{}"
    data["rounds"] = 7
    response = staff.post(url, data)
    assert response.status_code == 302
    tournament.refresh_from_db()
    assert tournament.rounds == 7


def test_no_field_of_a_table_is_edited_by_hand(staff: Client) -> None:
    tournament, tables = _running()
    services.tournament_run_here(tournament=tournament)
    table = Table.objects.get(pk=tables[0].pk)
    assert table.status == Table.Status.DONE
    before = Table.objects.filter(pk=table.pk).values().get()
    url = _change(table)
    assert not staff.get(url).context["adminform"].form.fields  # nothing to edit
    data = {"claims": 99, "claimed_by": "me", "claim_token": "t", "status": "running"}
    assert staff.post(url, {**admin_change_data(staff, url), **data}).status_code == 302
    assert Table.objects.filter(pk=table.pk).values().get() == before


# --- nothing secret before it may be shown, staff included --------------------------------------


def _running(*, duplicate: bool = False) -> tuple[Tournament, list[Table]]:
    """A started tournament of two tables in round 1 (one deal each), none played yet."""
    tournament = make_tournament(duplicate=duplicate, rounds=2, deals_per_table=1)
    enter_builtins(tournament, ["random", "lowest", "heuristic", "random", "lowest"])
    services.tournament_start(tournament=tournament)
    return tournament, list(Table.objects.filter(tournament=tournament).order_by("number"))


def _changelist(model: type[Model]) -> str:
    return reverse(f"admin:tournaments_{model._meta.model_name}_changelist")


def _change(obj: Model) -> str:
    return reverse(f"admin:tournaments_{obj._meta.model_name}_change", args=[obj.pk])


def test_a_running_tournaments_seed_cannot_be_probed_by_filters(staff: Client) -> None:
    tournament, (table, _) = _running()
    seed = tournament.seed
    url = _changelist(Tournament)
    # The attack: one yes-or-no per prefix. Every answer is the same refusal now.
    for digit in "0123456789":
        response = staff.get(url, {"seed__startswith": digit, "id": tournament.pk})
        assert response.status_code == 400, digit
    for probe in ({"seed": seed}, {"seed__gt": "5"}, {"seed__regex": "^6"}, {"seed__in": seed}):
        assert staff.get(url, probe).status_code == 400, probe
    searched = staff.get(url, {"q": seed})
    assert searched.status_code == 200
    assert searched.context["cl"].result_count == 0
    for model, probe in [
        (Table, {"deal_seed": str(table.deal_seed)}),
        (Table, {"deal_seed__gt": "0"}),
        (Table, {"result__isnull": "False"}),
        (Table, {"tournament__seed__startswith": seed[0]}),
        (Round, {"tournament__seed__startswith": seed[0]}),
        (Seat, {"score": "0"}),
        (Seat, {"place__lte": "2"}),
        (Seat, {"log__contains": "Q"}),
        (Seat, {"table__deal_seed": str(table.deal_seed)}),
        (Deal, {"table__deal_seed": str(table.deal_seed)}),
        (Entry, {"tournament__seed__startswith": seed[0]}),
    ]:
        assert staff.get(_changelist(model), probe).status_code == 400, (model, probe)


def test_the_rows_of_a_hidden_table_cannot_be_reached_through_a_relation(staff: Client) -> None:
    """A fault, a deal, a trick, a decision is secret as a whole until its table is shown:
    no filter may even ask whether one exists (which entries faulted at a table in play),
    however it gets there."""
    tournament, (table, _) = _running(duplicate=True)
    services.table_run(table_id=table.pk, worker="test", token="test-1")
    seat = Seat.objects.filter(table=table, entry__isnull=False).first()
    assert seat is not None
    fault = Fault.objects.create(table=table, seat=seat.position, entry=seat.entry, kind="timeout")
    probes = [
        (Entry, {"faults__isnull": "False"}),
        (Entry, {"faults__id__gt": str(fault.pk - 1)}),
        (Entry, {"faults__id": str(fault.pk)}),
        (Entry, {"faults__kind": "timeout"}),
        (Entry, {"seats__table__deals__isnull": "False"}),
        (Table, {"deals__isnull": "False"}),
        (Table, {"fault_set__id__gt": "0"}),
        (BotVersion, {"entries__faults__isnull": "False"}),
        (Tournament, {"tables__fault_set__isnull": "False"}),
    ]
    for model, probe in probes:
        assert staff.get(_changelist(model), probe).status_code == 400, (model, probe)
    # Once the round is over, the same filter is still refused: the answer never depends on
    # what is hidden.
    services.tournament_run_here(tournament=tournament)
    assert staff.get(_changelist(Entry), {"faults__isnull": "False"}).status_code == 400
    assert lookup_touches_secret(Entry, "faults__isnull")
    assert lookup_touches_secret(Fault, "table__deals__isnull", own_fields_shown=True)
    assert not lookup_touches_secret(Fault, "kind", own_fields_shown=True)
    assert not lookup_touches_secret(Entry, "tournament__status")


def test_a_tables_deal_seed_is_not_shown_before_its_deals(staff: Client) -> None:
    tournament, (table, _) = _running()
    page = staff.get(_change(table))
    assert page.status_code == 200
    assert str(table.deal_seed) not in page.content.decode()
    assert str(tournament.seed) not in staff.get(_change(tournament)).content.decode()
    services.tournament_run_here(tournament=tournament)
    tournament.refresh_from_db()
    assert str(table.deal_seed) in staff.get(_change(table)).content.decode()
    assert str(tournament.seed) in staff.get(_change(tournament)).content.decode()


def test_nothing_of_a_duplicate_round_in_play_shows_in_the_admin(staff: Client) -> None:
    tournament, (first, second) = _running(duplicate=True)
    services.table_run(table_id=first.pk, worker="test", token="test-1")
    Seat.objects.filter(table=first).update(log="stderr-secret-marker")
    Fault.objects.create(table=first, seat=0, kind="timeout", detail="fault-secret-marker")
    deal = Deal.objects.get(table=first)
    seat = Seat.objects.get(table=first, position=0)
    # The hands as the deal's page shows its record (JSON, HTML-escaped).
    hands = escape(json.dumps(deal.record["hands"]))[:60]
    markers = [str(first.deal_seed), "stderr-secret-marker", "fault-secret-marker", hands]

    def shown(path: str) -> str:
        response = staff.get(path)
        assert response.status_code == 200, path
        return str(response.content.decode())

    table_page = staff.get(_change(first))
    inlines = {type(f.opts).__name__: f for f in table_page.context["inline_admin_formsets"]}
    assert set(inlines) == {"SeatInline"}
    seat_fields = [field["name"] for field in inlines["SeatInline"].fields()]
    assert not set(seat_fields) & {
        "score",
        "place",
        "points",
        "faults",
        "decisions",
        "mean_time",
        "mean_time_ms",
    }
    pages = [
        table_page.content.decode(),
        shown(_change(seat)),
        shown(_changelist(Seat)),
        shown(_changelist(Fault)),
        shown(_changelist(Deal)),
        shown(_changelist(Table)),
        shown(_change(tournament)),
    ]
    for content in pages:
        for marker in markers:
            assert marker not in content
    assert "&quot;totals&quot;" not in pages[0]
    assert staff.get(_change(deal)).status_code == 302  # "no such deal": not listed yet
    assert staff.get(_changelist(Deal)).context["cl"].result_count == 0
    assert staff.get(_changelist(Fault)).context["cl"].result_count == 0
    seat_fields = [f for line in staff.get(_change(seat)).context["adminform"] for f in line]
    assert seat_fields  # the seat's page renders its public fields

    services.table_run(table_id=second.pk, worker="test", token="test-2")
    table_page = staff.get(_change(first))
    assert {type(f.opts).__name__ for f in table_page.context["inline_admin_formsets"]} == {
        "SeatInline",
        "DealInline",
        "FaultInline",
    }
    assert str(first.deal_seed) in table_page.content.decode()
    assert "&quot;totals&quot;" in table_page.content.decode()
    assert hands in shown(_change(deal))
    assert "stderr-secret-marker" in shown(_change(seat))
    assert "fault-secret-marker" in shown(_changelist(Fault))


def test_staff_see_a_practice_run_in_the_admin_once_it_is_over(staff: Client) -> None:
    """The pages' rule (visibility.practice_shown): a practice run is its author's, and staff
    see it once it is over, its deals and faults included; while it plays, nothing of it."""
    version = BuiltinVersionFactory.create(builtin="heuristic")
    run = services.practice_create(owner=version.bot.owner, version=version, deals=2)
    table = Table.objects.get(tournament=run)
    for model in (Tournament, Table, Seat, Deal, Fault, Round, Entry):
        listed = staff.get(_changelist(model)).context["cl"].result_count
        assert listed == 0, model  # playing: not staff's yet

    services.tournament_run_here(tournament=run)
    run.refresh_from_db()
    assert run.status == Tournament.Status.FINISHED
    Fault.objects.create(table=table, seat=0, kind="timeout", detail="practice-fault-marker")
    deals = list(Deal.objects.filter(table=table))
    assert len(deals) == 2
    for model in (Tournament, Table, Round, Entry):
        assert staff.get(_changelist(model)).context["cl"].result_count == 1, model
    assert staff.get(_changelist(Seat)).context["cl"].result_count == run.table_size
    deal_list = staff.get(_changelist(Deal))
    assert {row.pk for row in deal_list.context["cl"].result_list} == {d.pk for d in deals}
    assert "practice-fault-marker" in staff.get(_changelist(Fault)).content.decode()
    # Its results, its deals' pages with their tricks, its table with every inline.
    for listing in (_changelist(Table), _changelist(Seat)):
        assert "(hidden until" not in staff.get(listing).content.decode(), listing
    deal_page = staff.get(_change(deals[0]))
    assert deal_page.status_code == 200
    assert {type(f.opts).__name__ for f in deal_page.context["inline_admin_formsets"]} == {
        "TrickInline",
        "DecisionInline",
    }
    table_page = staff.get(_change(table))
    assert {type(f.opts).__name__ for f in table_page.context["inline_admin_formsets"]} == {
        "SeatInline",
        "DealInline",
        "FaultInline",
    }


def test_the_audit_action_names_a_practice_runs_problems_to_staff_once_it_is_over(
    staff: Client,
) -> None:
    """The audit's details wait for what the user may see (visibility.tables_shown_to_q):
    a practice run's once it is over, for staff, as its deals."""
    version = BuiltinVersionFactory.create(builtin="heuristic")
    run = services.practice_create(owner=version.bot.owner, version=version, deals=1)
    services.tournament_run_here(tournament=run)
    Seat.objects.filter(table__tournament=run, position=0).update(score=F("score") + 7)
    response = staff.post(
        _changelist(Tournament), {"action": "audit", "_selected_action": [run.pk]}, follow=True
    )
    said = " ".join(str(m) for m in response.context["messages"])
    assert "problems; the details once" not in said
    assert "score" in said


def test_no_admin_filters_searches_or_orders_by_a_secret_field() -> None:
    """What the admin offers to filter, search or order by never reads a secret field."""
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label != "tournaments":
            continue
        own_shown = getattr(model_admin, "table_path", None) is not None
        paths = [name.lstrip("^=@") for name in model_admin.search_fields]
        paths += [f[0] if isinstance(f, list | tuple) else f for f in model_admin.list_filter]
        paths += list(model_admin.ordering or ())
        paths += [model_admin.date_hierarchy] if model_admin.date_hierarchy else []
        for name in model_admin.list_display:
            if not isinstance(name, str):
                continue
            attribute = getattr(model_admin, name, None)
            order = getattr(attribute, "admin_order_field", None)
            if order:
                paths.append(order)
            elif attribute is None and name != "__str__":
                paths.append(name)  # a model field: orderable
        for path in paths:
            assert isinstance(path, str), (model, path)
            assert not lookup_touches_secret(model, path, own_fields_shown=own_shown), (
                model,
                path,
            )


# --- moments say their zone -----------------------------------------------------------------------


def test_the_admin_writes_every_moment_in_utc_saying_so(staff: Client) -> None:
    """Lists and forms write a moment as the pages do, the zone said (config/formats/), and a
    date and time typed in say in which zone they are read."""
    tournament = make_tournament(open_it=False)
    moment = datetime(2026, 11, 24, 9, 27, 9, tzinfo=UTC)
    Tournament.objects.filter(pk=tournament.pk).update(created_at=moment, started_at=moment)
    listing = staff.get(_changelist(Tournament)).content.decode()
    assert "2026-11-24 09:27:09 UTC" in listing
    form = staff.get(_change(tournament)).content.decode()
    assert "2026-11-24 09:27:09 UTC" in form  # started at, read-only
    assert form.count("Time (UTC):") == 2  # the registration window
    # The accounts' admin too (a user's last login and date joined).
    user = get_user_model().objects.get(username="root")
    account = staff.get(reverse("admin:auth_user_change", args=[user.pk])).content.decode()
    assert account.count("Time (UTC):") == 2


def test_the_admin_names_the_site_and_finds_its_icon(staff: Client) -> None:
    """Its pages say Tapis, not Django, and name no icon: the browser's /favicon.ico is the
    site's icon, not a 404 (an error in the console of every admin page)."""
    index = staff.get(reverse("admin:index")).content.decode()
    assert "<title>Tournaments, bots and accounts | Tapis admin</title>" in index
    assert "Tapis administration" in index
    assert "Django" not in index
    icon = staff.get("/favicon.ico", follow=True)
    assert icon.redirect_chain[0][0].endswith("favicon.svg")
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)


def test_a_seats_mean_time_is_in_milliseconds_once_shown(staff: Client) -> None:
    tournament, (table, _) = _running()
    Seat.objects.filter(table=table).update(mean_time=0.0000009932856853213577)
    hidden = staff.get(_change(table)).content.decode()
    assert "mean time" not in hidden.lower()  # still played: no result shown
    services.tournament_run_here(tournament=tournament)
    Seat.objects.filter(table=table).update(mean_time=0.0123456789)
    shown = staff.get(_change(table)).content.decode()
    assert "12.3 ms" in shown
    assert "0.0123456789" not in shown


def _column(html: str, field: str) -> list[str]:
    """The values of an inline's column, in order."""
    return re.findall(rf'<td class="field-{field}">\s*<p>([^<]*)</p>', html)


def test_the_admin_counts_seats_deals_tricks_and_steps_from_1(staff: Client) -> None:
    """As the pages do: the first seat is seat 1, the first deal deal 1 (the API keeps
    indexes, docs/api.md "Numbers and indexes")."""
    tournament, (table, _) = _running()
    services.tournament_run_here(tournament=tournament)
    seats = staff.get(_change(table)).content.decode()
    assert _column(seats, "seat_number") == ["1", "2", "3", "4"]
    assert _column(seats, "deal_number") == ["1"]
    deal = Deal.objects.get(table=table)
    page = staff.get(_change(deal)).content.decode()
    assert f"deal 1 of {table}" in page
    assert _column(page, "trick_number")[:2] == ["1", "2"]
    steps = _column(page, "step_number")
    assert steps[:2] == ["1", "2"]
    assert set(_column(page, "seat_number")) == {"1", "2", "3", "4"}
