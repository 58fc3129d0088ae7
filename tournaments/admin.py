"""The admin of the tournaments app: every model browsable, searchable and filterable; played
tables and deals read-only; tournament actions (open, start, cancel, re-run failed tables,
audit) call the services.

Staff see nothing secret before it may be shown, as everyone else (``tournaments.visibility``
decides): a field of ``visibility.SECRET_FIELDS`` (a tournament's seed, a table's deal seed
and summary, a seat's results and bot log, everything of a deal, its tricks, decisions and
faults) is never a filter, a search or an ordering (``lookup_allowed`` refuses it: a yes or
no per request would reveal it bit by bit), and a row shows it only once
``visibility.hidden_fields`` leaves it out. Deals and faults are listed once their table may
be shown, not before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Count, QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from tournaments import selectors, services, visibility
from tournaments.errors import ApplicationError
from tournaments.models import (
    Bot,
    BotVersion,
    Deal,
    Decision,
    Entry,
    Fault,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
    Trick,
    WorkerHeartbeat,
)


def pretty_json(value: object) -> SafeString:
    return format_html(
        '<pre style="white-space: pre-wrap; max-height: 40em; overflow: auto">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False),
    )


def admin_link(obj: Any, text: str | None = None) -> SafeString:
    if obj is None:
        return format_html("{}", "-")
    meta = obj._meta
    url = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text or str(obj))


def _run_action(
    modeladmin: admin.ModelAdmin[Any],
    request: HttpRequest,
    queryset: QuerySet[Any],
    service: Callable[[Any], object],
    verb: str,
) -> None:
    done = 0
    for obj in queryset:
        try:
            service(obj)
            done += 1
        except ApplicationError as exc:
            modeladmin.message_user(request, f"{obj}: {exc}", messages.ERROR)
    if done:
        modeladmin.message_user(request, f"{verb}: {done}", messages.SUCCESS)


_BOT_VERSION_INLINE_FIELDS = (
    "number",
    "status",
    "builtin",
    "filename",
    "size",
    "short_sha",
    "created_at",
)


# ---------------------------------------------------------------------------------------------
# What is secret until it may be shown
# ---------------------------------------------------------------------------------------------

HIDDEN = "(hidden until the table's round is done)"


def lookup_touches_secret(
    model: type[models.Model], lookup: str, *, own_fields_shown: bool = False
) -> bool:
    """Whether the ORM path ``lookup`` (a filter, a search or an ordering, from ``model``)
    reads a field of ``visibility.SECRET_FIELDS`` on its way; with ``own_fields_shown``, the
    first model's own fields do not count (its admin lists only rows that may be shown).

    >>> lookup_touches_secret(Tournament, "seed__startswith")
    True
    >>> lookup_touches_secret(Table, "-tournament__seed"), lookup_touches_secret(Table, "number")
    (True, False)
    """
    for depth, part in enumerate(lookup.lstrip("-?").split(LOOKUP_SEP)):
        try:
            field = model._meta.get_field(part)
        except FieldDoesNotExist:
            return False  # a transform or a lookup (startswith, year...) from here on
        if part in visibility.SECRET_FIELDS.get(model, ()) and not (
            depth == 0 and own_fields_shown
        ):
            return True
        related = field.related_model
        if not field.is_relation or not isinstance(related, type):
            return False
        model = related
    return False


class HidingAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """An admin that shows nothing secret before it may be shown (see the module)."""

    # Set for models whose rows are all secret (deals, faults): the path from the model to
    # its table; only rows whose table may be shown are listed, and their own fields are
    # then no secret.
    table_path: str | None = None
    # The admin's display methods that show a secret field, by the field they show.
    secret_displays: Mapping[str, str] = {}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if self.table_path is not None:
            qs = qs.filter(visibility.tables_shown_q(prefix=self.table_path))
        return qs

    def lookup_allowed(self, lookup: str, value: str, request: Any = None) -> bool:
        if lookup_touches_secret(self.model, lookup, own_fields_shown=self.table_path is not None):
            return False
        return bool(super().lookup_allowed(lookup, value, request))

    def hidden_names(self, request: HttpRequest, obj: Any) -> frozenset[str]:
        """The fields and display methods of ``obj`` that may not be shown now."""
        if obj is None:
            return frozenset()
        secret = visibility.hidden_fields(user=request.user, obj=obj)
        displays = {name for name, field in self.secret_displays.items() if field in secret}
        return secret | displays

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        hidden = self.hidden_names(request, obj)
        return [name for name in super().get_fields(request, obj) if name not in hidden]

    def get_inlines(self, request: HttpRequest, obj: Any) -> list[Any]:
        inlines = list(super().get_inlines(request, obj))
        if obj is None or not visibility.hidden_fields(user=request.user, obj=obj):
            return inlines
        return [inline for inline in inlines if not getattr(inline, "all_secret", False)]


class ReadOnlyInline(admin.TabularInline):  # type: ignore[type-arg]
    """An inline of rows never changed by hand. While its parent row has hidden fields (a
    table not shown yet), its own secret fields are left out, and an ``all_secret`` inline
    (deals, faults, tricks, decisions) is left out whole by :class:`HidingAdmin`."""

    extra = 0
    can_delete = False
    show_change_link = True
    all_secret = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        fields = list(super().get_fields(request, obj))
        if obj is None or not visibility.hidden_fields(user=request.user, obj=obj):
            return fields
        secret = visibility.SECRET_FIELDS.get(self.model, frozenset())
        return [name for name in fields if name not in secret]


class ReadOnlyAdmin(HidingAdmin):
    """Rows that record what was played: never added, changed or deleted by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(HidingAdmin):  # type: ignore[type-arg]
    list_display = ["hostname", "last_seen", "beats"]
    readonly_fields = ["hostname", "last_seen", "beats"]
    ordering = ["hostname"]


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


class BotVersionInline(ReadOnlyInline):
    model = BotVersion
    fields = _BOT_VERSION_INLINE_FIELDS
    readonly_fields = _BOT_VERSION_INLINE_FIELDS
    ordering = ["-number"]

    @admin.display(description="SHA-256")
    def short_sha(self, obj: BotVersion) -> str:
        return obj.sha256[:12]


@admin.register(Bot)
class BotAdmin(HidingAdmin):
    list_display = ["name", "game", "owner", "version_count", "created_at"]
    list_filter = ["game"]
    search_fields = ["name", "owner__username", "description"]
    autocomplete_fields = ["owner"]
    inlines = [BotVersionInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Bot]:
        return super().get_queryset(request).annotate(version_total=Count("versions"))

    @admin.display(description="versions", ordering="version_total")
    def version_count(self, obj: Bot) -> int:
        return getattr(obj, "version_total", 0)


@admin.register(BotVersion)
class BotVersionAdmin(HidingAdmin):
    list_display = ["label", "status", "builtin", "filename", "size", "short_sha", "created_at"]
    list_filter = ["status", "bot__game"]
    search_fields = ["bot__name", "bot__owner__username", "sha256", "filename"]
    list_select_related = ["bot"]
    readonly_fields = [
        "bot",
        "number",
        "builtin",
        "filename",
        "size",
        "sha256",
        "status",
        "created_at",
        "validated_at",
        "validation_report",
    ]
    exclude = ["report"]
    actions = ["revalidate"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # versions are uploaded through the API

    def get_queryset(self, request: HttpRequest) -> QuerySet[BotVersion]:
        return super().get_queryset(request).defer("content")

    @admin.display(description="SHA-256")
    def short_sha(self, obj: BotVersion) -> str:
        return obj.sha256[:12]

    @admin.display(description="validation report")
    def validation_report(self, obj: BotVersion) -> SafeString:
        return pretty_json(obj.report)

    @admin.action(description="Validate again (rejected versions)")
    def revalidate(self, request: HttpRequest, queryset: QuerySet[BotVersion]) -> None:
        _run_action(
            self,
            request,
            queryset,
            lambda v: services.bot_version_revalidate(version=v),
            "Queued for validation",
        )


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


_ENTRY_INLINE_FIELDS = (
    "version",
    "user",
    "withdrawn",
    "disqualified",
    "final_rank",
    "final_points",
)


class EntryInline(admin.TabularInline):  # type: ignore[type-arg]
    model = Entry
    extra = 0
    can_delete = False
    show_change_link = True
    fields = _ENTRY_INLINE_FIELDS
    readonly_fields = _ENTRY_INLINE_FIELDS

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


_ROUND_INLINE_FIELDS = (
    "number",
    "status",
    "started_at",
    "finished_at",
    "tables_done",
)


class RoundInline(ReadOnlyInline):
    model = Round
    fields = _ROUND_INLINE_FIELDS
    readonly_fields = _ROUND_INLINE_FIELDS

    @admin.display(description="tables done")
    def tables_done(self, obj: Round) -> str:
        tables = list(obj.tables.values_list("status", flat=True))
        return f"{sum(s == Table.Status.DONE for s in tables)}/{len(tables)}"


_TABLE_INLINE_FIELDS = (
    "round",
    "number",
    "status",
    "attempts",
    "claimed_by",
    "finished",
    "players",
)


def _finished(table: Table) -> str:
    """When ``table`` finished, if its results may be shown (they are the same for every
    user: ``user=None``)."""
    if "finished_at" in visibility.hidden_fields(user=None, obj=table):
        return HIDDEN if table.status == Table.Status.DONE else "-"
    return f"{table.finished_at:%Y-%m-%d %H:%M:%S}" if table.finished_at else "-"


class TableInline(ReadOnlyInline):
    model = Table
    fk_name = "tournament"
    fields = _TABLE_INLINE_FIELDS
    readonly_fields = _TABLE_INLINE_FIELDS
    ordering = ["round__number", "number"]

    @admin.display(description="finished at")
    def finished(self, obj: Table) -> str:
        return _finished(obj)

    @admin.display(description="seats")
    def players(self, obj: Table) -> str:
        return ", ".join(
            selectors.seat_label(seat=seat) for seat in selectors.table_seats(table=obj)
        )


class TournamentAdminForm(forms.ModelForm):  # type: ignore[type-arg]
    """Changes of a tournament's settings are checked by the service, as through the API."""

    class Meta:
        model = Tournament
        fields = services.TOURNAMENT_SETTINGS

    def changes(self) -> dict[str, Any]:
        return {
            name: self.cleaned_data[name]
            for name in self.changed_data
            if name in services.TOURNAMENT_SETTINGS and name in self.cleaned_data
        }

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.instance.pk is not None and self.changes():
            try:
                services.tournament_check_update(tournament=self.instance, **self.changes())
            except ApplicationError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned


@admin.register(Tournament)
class TournamentAdmin(HidingAdmin):
    list_display = [
        "name",
        "game",
        "preset",
        "status",
        "progress",
        "entry_count",
        "seating",
        "duplicate",
        "created_at",
    ]
    list_filter = ["status", "game", "seating", "duplicate"]
    search_fields = ["name", "organiser__username"]
    date_hierarchy = "created_at"
    autocomplete_fields = ["organiser"]
    inlines = [EntryInline, RoundInline, TableInline]
    actions = [
        "open_tournaments",
        "start_tournaments",
        "cancel_tournaments",
        "rerun_failed",
        "audit",
    ]
    readonly_fields = [
        "status",
        "current_round",
        "commitment",
        "revealed_seed",
        "progress",
        "standings",
        "started_at",
        "finished_at",
        "seed_revealed_at",
    ]
    fieldsets = [
        (None, {"fields": ["name", "organiser", "status", "progress"]}),
        (
            "Rules",
            {"fields": ["game", "preset", "options", "table_size", "rounds", "deals_per_table"]},
        ),
        ("Format", {"fields": ["seating", "duplicate", "place_points", "house_bot"]}),
        (
            "Time and faults",
            {"fields": ["decision_seconds", "bank_seconds", "startup_seconds", "max_faults"]},
        ),
        (
            "Registration",
            {
                "fields": [
                    "allow_multiple_entries",
                    "registration_opens_at",
                    "registration_closes_at",
                ]
            },
        ),
        ("Fair dealing", {"fields": ["commitment", "revealed_seed", "seed_revealed_at"]}),
        ("Results", {"fields": ["current_round", "started_at", "finished_at", "standings"]}),
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Tournament]:
        return super().get_queryset(request).annotate(entry_total=Count("entries"))

    form = TournamentAdminForm

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # made by tournament_create (checks the rules), through the API or demo

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.status not in (
            Tournament.Status.DRAFT,
            Tournament.Status.OPEN,
        ):
            fields += [
                f.name for f in Tournament._meta.fields if f.name not in fields and f.editable
            ]
        else:
            fields += ["organiser"]
        return fields

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any, change: bool) -> None:
        if change and isinstance(form, TournamentAdminForm) and form.changes():
            services.tournament_update(tournament=obj, **form.changes())

    @admin.display(description="entries", ordering="entry_total")
    def entry_count(self, obj: Tournament) -> int:
        return getattr(obj, "entry_total", 0)

    @admin.display(description="progress")
    def progress(self, obj: Tournament) -> str:
        if obj.status in (Tournament.Status.DRAFT, Tournament.Status.OPEN):
            return "-"
        progress = selectors.tournament_progress(tournament=obj)
        failed = f", {progress.tables_failed} failed" if progress.tables_failed else ""
        return f"{progress}{failed}"

    @admin.display(description="seed (revealed at the end)")
    def revealed_seed(self, obj: Tournament) -> str:
        seed = visibility.shown_seed(tournament=obj)
        return str(seed) if seed is not None else "secret until the tournament finishes"

    @admin.display(description="standings")
    def standings(self, obj: Tournament) -> SafeString:
        if obj.pk is None or obj.status in (Tournament.Status.DRAFT, Tournament.Status.OPEN):
            return format_html("{}", "-")
        rows = selectors.standings_for_tournament(tournament=obj)
        body = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    row.rank if row.rank is not None else "-",
                    row.entry.version.label,
                    row.entry.user.get_username(),
                    f"{float(row.points):g}",
                    f"{float(row.relative_score):+g}",
                    " ".join(str(p) for p in row.places),
                    "withdrawn"
                    if row.entry.withdrawn
                    else ("disqualified" if row.entry.disqualified else ""),
                )
                for row in rows
            ),
        )
        return format_html(
            "<table><thead><tr><th>rank</th><th>bot</th><th>owner</th><th>points</th>"
            "<th>vs table average</th><th>places</th><th></th></tr></thead>"
            "<tbody>{}</tbody></table>",
            body,
        )

    @admin.action(description="Open registration")
    def open_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        _run_action(
            self, request, queryset, lambda t: services.tournament_open(tournament=t), "Opened"
        )

    @admin.action(description="Start (seat round 1 and queue its tables)")
    def start_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        _run_action(
            self, request, queryset, lambda t: services.tournament_start(tournament=t), "Started"
        )

    @admin.action(description="Cancel")
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        _run_action(
            self, request, queryset, lambda t: services.tournament_cancel(tournament=t), "Cancelled"
        )

    @admin.action(description="Re-run failed tables")
    def rerun_failed(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        tables = Table.objects.filter(tournament__in=queryset, status=Table.Status.FAILED)
        _run_action(
            self, request, tables, lambda t: services.table_rerun(table=t), "Tables queued again"
        )

    @admin.action(description="Audit (re-play every deal)")
    def audit(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        for tournament in queryset:
            report = services.tournament_audit(tournament=tournament)
            if report.ok:
                self.message_user(
                    request,
                    f"{tournament}: {report.deals} deals of {report.tables} tables replayed, "
                    "all legal and scored right",
                    messages.SUCCESS,
                )
            elif Table.objects.filter(tournament=tournament, status=Table.Status.DONE).exclude(
                visibility.tables_shown_q()
            ):
                # A problem names a table's scores, places or seeds: not before they may be
                # shown (a duplicate round in play).
                self.message_user(
                    request,
                    f"{tournament}: {len(report.problems)} problems; the details once every "
                    "recorded table may be shown (python manage.py audit_tournament)",
                    messages.ERROR,
                )
            else:
                shown = "; ".join(report.problems[:5])
                self.message_user(request, f"{tournament}: {shown}", messages.ERROR)


@admin.register(Entry)
class EntryAdmin(HidingAdmin):
    list_display = [
        "__str__",
        "user",
        "withdrawn",
        "disqualified",
        "final_rank",
        "final_points",
        "created_at",
    ]
    list_filter = ["withdrawn", "disqualified", "tournament__status", "tournament__game"]
    search_fields = ["tournament__name", "version__bot__name", "user__username"]
    list_select_related = ["tournament", "version__bot", "user"]
    readonly_fields = [
        "tournament",
        "version",
        "user",
        "withdrawn",
        "disqualified",
        "flag_reason",
        "flagged_at",
        "final_rank",
        "final_points",
        "created_at",
    ]
    actions = ["withdraw", "disqualify"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Withdraw (a house bot plays the remaining seats)")
    def withdraw(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        _run_action(
            self,
            request,
            queryset,
            lambda e: services.entry_withdraw(entry=e, reason="withdrawn by an administrator"),
            "Withdrawn",
        )

    @admin.action(description="Disqualify (a house bot plays the remaining seats)")
    def disqualify(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        _run_action(
            self,
            request,
            queryset,
            lambda e: services.entry_disqualify(entry=e, reason="disqualified by an administrator"),
            "Disqualified",
        )


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "status", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["tournament__name"]
    list_select_related = ["tournament"]

    class RoundTableInline(TableInline):
        fk_name = "round"

    inlines = [RoundTableInline]


# ---------------------------------------------------------------------------------------------
# Tables, seats, deals
# ---------------------------------------------------------------------------------------------


_SEAT_INLINE_FIELDS = (
    "position",
    "entry",
    "house_bot",
    "substitute",
    "score",
    "place",
    "points",
    "faults",
    "replaced",
    "decisions",
    "mean_time",
)


class SeatInline(ReadOnlyInline):
    model = Seat
    fields = _SEAT_INLINE_FIELDS
    readonly_fields = _SEAT_INLINE_FIELDS
    show_change_link = False


_DEAL_INLINE_FIELDS = (
    "index",
    "seed",
    "points",
    "decisions",
    "faults",
)


class DealInline(ReadOnlyInline):
    model = Deal
    all_secret = True
    fields = _DEAL_INLINE_FIELDS
    readonly_fields = _DEAL_INLINE_FIELDS


_FAULT_INLINE_FIELDS = (
    "seat",
    "entry",
    "kind",
    "deal_index",
    "decision",
    "step",
    "detail",
)


class FaultInline(ReadOnlyInline):
    model = Fault
    all_secret = True
    fields = _FAULT_INLINE_FIELDS
    readonly_fields = _FAULT_INLINE_FIELDS
    show_change_link = False


@admin.register(Table)
class TableAdmin(HidingAdmin):
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="result")
    def result_summary(self, obj: Table) -> SafeString:
        return pretty_json(obj.result)

    @admin.display(description="finished at")
    def finished(self, obj: Table) -> str:
        return _finished(obj)

    @admin.action(description="Re-run (failed tables)")
    def rerun(self, request: HttpRequest, queryset: QuerySet[Table]) -> None:
        _run_action(
            self, request, queryset, lambda t: services.table_rerun(table=t), "Queued again"
        )


_TRICK_INLINE_FIELDS = (
    "number",
    "leader",
    "cards",
    "winner",
    "points",
)


class TrickInline(ReadOnlyInline):
    model = Trick
    all_secret = True
    fields = _TRICK_INLINE_FIELDS
    readonly_fields = _TRICK_INLINE_FIELDS
    show_change_link = False


_DECISION_INLINE_FIELDS = (
    "step",
    "seat",
    "action",
    "seconds",
    "fault",
)


class DecisionInline(ReadOnlyInline):
    model = Decision
    all_secret = True
    fields = _DECISION_INLINE_FIELDS
    readonly_fields = _DECISION_INLINE_FIELDS
    show_change_link = False


@admin.register(Deal)
class DealAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "points", "decisions", "faults"]
    list_filter = ["table__tournament__game"]
    search_fields = ["table__tournament__name"]
    list_select_related = ["table__tournament", "table__round"]
    table_path = "table__"
    inlines = [TrickInline, DecisionInline]
    readonly_fields = ["table_link", "index", "seed", "record", "passes", "points", "log_json"]
    exclude = ["table", "log"]

    @admin.display(description="table")
    def table_link(self, obj: Deal) -> SafeString:
        return admin_link(obj.table)

    @admin.display(description="log")
    def log_json(self, obj: Deal) -> SafeString:
        return pretty_json(obj.log)


@admin.register(Fault)
class FaultAdmin(ReadOnlyAdmin):
    list_display = ["kind", "seat", "entry", "table", "deal_index", "step", "detail"]
    list_filter = ["kind", "table__tournament__game"]
    search_fields = ["detail", "entry__version__bot__name", "table__tournament__name"]
    list_select_related = ["table__tournament", "table__round", "entry__version__bot"]
    table_path = "table__"


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin):
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
        # A seat's results are the same for every user (user=None): its table's.
        if name in visibility.hidden_fields(user=None, obj=obj):
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


# ---------------------------------------------------------------------------------------------
# Ratings
# ---------------------------------------------------------------------------------------------


_RATING_HISTORY_INLINE_FIELDS = (
    "tournament",
    "table",
    "place",
    "mu",
    "sigma",
    "ordinal",
    "created_at",
)


class RatingHistoryInline(ReadOnlyInline):
    model = RatingHistory
    fields = _RATING_HISTORY_INLINE_FIELDS
    readonly_fields = _RATING_HISTORY_INLINE_FIELDS
    show_change_link = False


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ["bot", "family", "ordinal", "mu", "sigma", "tables", "updated_at"]
    list_filter = ["family"]
    search_fields = ["bot__name", "bot__owner__username"]
    list_select_related = ["bot"]
    inlines = [RatingHistoryInline]
