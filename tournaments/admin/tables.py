"""The admin of tables, seats, deals and faults (read-only: a recorded table never changes), and
of the workers' heartbeats."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from tournaments import operations, services
from tournaments.admin.base import (
    HIDDEN,
    HidingAdmin,
    ReadOnlyAdmin,
    ReadOnlyInline,
    admin_link,
    finished_at_shown,
    pretty_json,
    results_shown,
    run_action,
)
from tournaments.models import (
    Deal,
    Decision,
    Fault,
    Housekeeping,
    Seat,
    Table,
    Trick,
    WorkerHeartbeat,
)


def _counted(value: int | None) -> object:
    """An index as people count (from 1), as the pages say it: the admin shows seats, deals,
    tricks, decisions and faults so too (docs/api.md, "Numbers and indexes")."""
    return "-" if value is None else value + 1


class _Numbered:
    """Display methods that count from 1 the seat, deal, trick and step indexes of a row."""

    @admin.display(description="seat")
    def seat_number(self, obj: Any) -> object:
        return _counted(obj.position if isinstance(obj, Seat) else obj.seat)

    @admin.display(description="deal")
    def deal_number(self, obj: Any) -> object:
        return _counted(obj.index if isinstance(obj, Deal) else obj.deal_index)

    @admin.display(description="decision")
    def decision_number(self, obj: Fault) -> object:
        return _counted(obj.decision)

    @admin.display(description="step")
    def step_number(self, obj: Any) -> object:
        return _counted(obj.step)

    @admin.display(description="trick")
    def trick_number(self, obj: Trick) -> object:
        return _counted(obj.number)

    @admin.display(description="leader")
    def leader_number(self, obj: Trick) -> object:
        return _counted(obj.leader)

    @admin.display(description="winner")
    def winner_number(self, obj: Trick) -> object:
        return _counted(obj.winner)


_SEAT_INLINE_FIELDS = (
    "seat_number",
    "entry",
    "house_bot",
    "substitute",
    "score",
    "place",
    "points",
    "faults",
    "replaced",
    "replaced_deal",
    "decisions",
    "mean_time_ms",
)


class SeatInline(_Numbered, ReadOnlyInline):
    model = Seat
    fields = _SEAT_INLINE_FIELDS
    readonly_fields = _SEAT_INLINE_FIELDS
    show_change_link = False
    secret_displays = {"mean_time_ms": "mean_time"}

    @admin.display(description="mean time")
    def mean_time_ms(self, obj: Seat) -> str:
        """In milliseconds as the pages give it, not a float of seconds to 20 digits (which
        made the inline wider than the page)."""
        return "-" if obj.mean_time is None else f"{obj.mean_time * 1000:,.1f} ms"


_DEAL_INLINE_FIELDS = (
    "deal_number",
    "seed",
    "points",
    "decisions",
    "faults",
)


class DealInline(_Numbered, ReadOnlyInline):
    model = Deal
    all_secret = True
    fields = _DEAL_INLINE_FIELDS
    readonly_fields = _DEAL_INLINE_FIELDS


_FAULT_INLINE_FIELDS = (
    "seat_number",
    "entry",
    "kind",
    "deal_number",
    "decision_number",
    "step_number",
    "detail",
)


class FaultInline(_Numbered, ReadOnlyInline):
    model = Fault
    all_secret = True
    fields = _FAULT_INLINE_FIELDS
    readonly_fields = _FAULT_INLINE_FIELDS
    show_change_link = False


@admin.register(Table)
class TableAdmin(HidingAdmin):
    tournament_path = "tournament__"
    list_display = [
        "__str__",
        "status",
        "attempts",
        "claimed_by",
        "lease_expires_at",
        "started_at",
        "finished",
    ]
    list_filter = ["status", "tournament__game", "tournament__status"]
    search_fields = ["tournament__name", "claimed_by"]
    list_select_related = ["tournament", "round"]
    inlines = [SeatInline, DealInline, FaultInline]
    actions = ["rerun"]
    readonly_fields = [
        "tournament",
        "round",
        "number",
        "deal_seed",
        "status",
        "claimed_by",
        "claim_token",
        "lease_expires_at",
        "attempts",
        "queued_at",
        "started_at",
        "finished_at",
        "result_summary",
        "error",
    ]
    exclude = ["result"]
    secret_displays = {"result_summary": "result"}

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        """Every field: a table is the workers' (its claims, lease and token) and, once
        recorded, what was played; staff act on it through the actions (re-run), never by
        editing a field. A field added to the model is read-only too, unless excluded."""
        listed = list(super().get_readonly_fields(request, obj))
        hidden = {"id", *self.exclude}
        others = [f.name for f in Table._meta.concrete_fields if f.name not in hidden]
        return listed + [name for name in others if name not in listed]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="result")
    def result_summary(self, obj: Table) -> SafeString:
        return pretty_json(obj.result)

    @admin.display(description="finished at")
    def finished(self, obj: Table) -> str:
        return finished_at_shown(obj)

    @admin.action(description="Re-run (failed tables)")
    def rerun(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        run_action(self, request, queryset, lambda t: services.table_rerun(table=t), "Queued again")


_TRICK_INLINE_FIELDS = (
    "trick_number",
    "leader_number",
    "cards",
    "winner_number",
    "points",
)


class TrickInline(_Numbered, ReadOnlyInline):
    model = Trick
    all_secret = True
    fields = _TRICK_INLINE_FIELDS
    readonly_fields = _TRICK_INLINE_FIELDS
    show_change_link = False


_DECISION_INLINE_FIELDS = (
    "step_number",
    "seat_number",
    "action",
    "seconds",
    "fault",
)


class DecisionInline(_Numbered, ReadOnlyInline):
    model = Decision
    all_secret = True
    fields = _DECISION_INLINE_FIELDS
    readonly_fields = _DECISION_INLINE_FIELDS
    show_change_link = False


@admin.register(Deal)
class DealAdmin(_Numbered, ReadOnlyAdmin):
    list_display = ["__str__", "points", "decisions", "faults"]
    list_filter = ["table__tournament__game"]
    search_fields = ["table__tournament__name"]
    list_select_related = ["table__tournament", "table__round"]
    table_path = "table__"
    inlines = [TrickInline, DecisionInline]
    readonly_fields = [
        "table_link",
        "deal_number",
        "seed",
        "record",
        "passes",
        "points",
        "log_json",
    ]
    exclude = ["table", "log"]

    @admin.display(description="table")
    def table_link(self, obj: Deal) -> SafeString:
        return admin_link(obj.table)

    @admin.display(description="log")
    def log_json(self, obj: Deal) -> SafeString:
        return pretty_json(obj.log)


@admin.register(Fault)
class FaultAdmin(_Numbered, ReadOnlyAdmin):
    list_display = [
        "kind",
        "seat_number",
        "entry",
        "table",
        "deal_number",
        "decision_number",
        "step_number",
        "detail",
    ]
    list_filter = ["kind", "table__tournament__game"]
    search_fields = ["detail", "entry__version__bot__name", "table__tournament__name"]
    list_select_related = ["table__tournament", "table__round", "entry__version__bot"]
    table_path = "table__"


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin):
    tournament_path = "table__tournament__"
    list_display = [
        "__str__",
        "entry",
        "house_bot",
        "seat_score",
        "seat_place",
        "seat_points",
        "seat_faults",
    ]
    list_filter = ["substitute"]
    search_fields = ["entry__version__bot__name", "table__tournament__name"]
    list_select_related = ["table__tournament", "table__round", "entry__version__bot", "entry"]
    exclude = ["log"]
    readonly_fields = ["bot_log"]
    secret_displays = {"bot_log": "log"}

    @staticmethod
    def _result(obj: Seat, name: str) -> object:
        # A seat's results are its table's, the same for every user who may see the seat.
        if not results_shown(obj.table):
            return HIDDEN if obj.table.status == Table.Status.DONE else "-"
        value = getattr(obj, name)
        return "-" if value is None else value

    @admin.display(description="score")
    def seat_score(self, obj: Seat) -> object:
        return self._result(obj, "score")

    @admin.display(description="place")
    def seat_place(self, obj: Seat) -> object:
        return self._result(obj, "place")

    @admin.display(description="points")
    def seat_points(self, obj: Seat) -> object:
        return self._result(obj, "points")

    @admin.display(description="faults")
    def seat_faults(self, obj: Seat) -> object:
        return self._result(obj, "faults")

    @admin.display(description="bot log (stderr)")
    def bot_log(self, obj: Seat) -> SafeString:
        return format_html("<pre>{}</pre>", obj.log or "(empty)")


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(HidingAdmin):  # type: ignore[type-arg]
    """Each worker's own heartbeat (docs/operations.md, "When things fail")."""

    list_display = ["hostname", "state", "last_seen", "playing", "problem", "host", "started_at"]
    readonly_fields = [
        "hostname",
        "state",
        "last_seen",
        "beats",
        "playing",
        "problem",
        "host",
        "pid",
        "started_at",
        "stopped_at",
    ]
    ordering = ["hostname"]

    @admin.display(description="state")
    def state(self, obj: WorkerHeartbeat) -> str:
        states = {w.hostname: w for w in operations.worker_states()}
        found = states.get(obj.hostname)
        return found.state if found else "-"


@admin.register(Housekeeping)
class HousekeepingAdmin(HidingAdmin):  # type: ignore[type-arg]
    """When the sweep last ran, and by which worker: late by two periods is a problem."""

    list_display = ["name", "last_done_at", "last_by", "runs", "late"]
    readonly_fields = ["name", "last_run_at", "last_done_at", "last_by", "runs", "last_report"]

    @admin.display(description="late", boolean=True)
    def late(self, obj: Housekeeping) -> bool:
        return not operations.sweep_state().ok
