"""The admin of tournaments, their entries and rounds: edits and actions go through the
services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from tournaments import selectors, services, visibility
from tournaments.admin.base import (
    HidingAdmin,
    ReadOnlyAdmin,
    ReadOnlyInline,
    finished_at_shown,
    run_action,
)
from tournaments.errors import ApplicationError
from tournaments.models import (
    Entry,
    Round,
    Table,
    Tournament,
)
from tournaments.tournament_settings import TournamentSettings

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


class TableInline(ReadOnlyInline):
    model = Table
    fk_name = "tournament"
    fields = _TABLE_INLINE_FIELDS
    readonly_fields = _TABLE_INLINE_FIELDS
    ordering = ["round__number", "number"]

    @admin.display(description="finished at")
    def finished(self, obj: Table) -> str:
        return finished_at_shown(obj)

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

    def settings(self) -> TournamentSettings:
        """The settings of a new tournament (the add form)."""
        values = {
            name: self.cleaned_data[name]
            for name in services.TOURNAMENT_SETTINGS
            if name in self.cleaned_data
        }
        # An empty scale means the default one for the table size, as through the API.
        values["place_points"] = values.get("place_points") or None
        values["options"] = values.get("options") or {}
        return TournamentSettings(**values)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.instance.pk is None and not self.errors:
            try:
                services.tournament_check(settings=self.settings())
            except ApplicationError as exc:
                field = exc.extra.get("field") or exc.extra.get("option")
                if field == "players":
                    field = "table_size"
                if field not in self.fields:
                    field = "options" if exc.code == "invalid_option" else None
                self.add_error(field, str(exc))  # type: ignore[arg-type]
        elif self.instance.pk is not None and self.changes():
            try:
                services.tournament_check_update(tournament=self.instance, **self.changes())
            except ApplicationError as exc:
                raise forms.ValidationError(str(exc)) from None
        return cleaned


@admin.register(Tournament)
class TournamentAdmin(HidingAdmin):
    tournament_path = ""
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
    list_filter = ["status", "game", "seating", "duplicate", "practice"]
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
        # Staff add tournaments through tournament_create (save_model), as the API and the
        # organiser pages do: the add form is checked by tournament_check first.
        return bool(request.user.is_staff and request.user.has_perm("tournaments.add_tournament"))

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
        if not change and isinstance(form, TournamentAdminForm):
            organiser = request.user
            assert isinstance(organiser, User)  # staff: logged in
            created = services.tournament_create(organiser=organiser, settings=form.settings())
            obj.pk = created.pk
            obj.refresh_from_db()
            return
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
        attention = (
            " - NEEDS ATTENTION (re-run the failed tables)"
            if progress.tables_failed and obj.status == Tournament.Status.RUNNING
            else ""
        )
        return f"{progress}{failed}{attention}"

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
                    ", ".join(
                        word
                        for word in (
                            "withdrawn" if row.entry.withdrawn else "",
                            "disqualified" if row.entry.disqualified else "",
                            f"replaced at {row.replaced} table{'s' if row.replaced != 1 else ''}"
                            if row.replaced
                            else "",
                        )
                        if word
                    ),
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
        run_action(
            self, request, queryset, lambda t: services.tournament_open(tournament=t), "Opened"
        )

    @admin.action(description="Start (seat round 1 and queue its tables)")
    def start_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        run_action(
            self, request, queryset, lambda t: services.tournament_start(tournament=t), "Started"
        )

    @admin.action(description="Cancel")
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        run_action(
            self, request, queryset, lambda t: services.tournament_cancel(tournament=t), "Cancelled"
        )

    @admin.action(description="Re-run failed tables")
    def rerun_failed(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        tables = Table.objects.filter(tournament__in=queryset, status=Table.Status.FAILED)
        run_action(
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
                visibility.tables_shown_to_q(user=request.user)
            ):
                # A problem names a table's scores, places or seeds: not before they may be
                # shown to this user (a duplicate round in play; a practice run's are staff's
                # once it is over).
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
    tournament_path = "tournament__"
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
        run_action(
            self,
            request,
            queryset,
            lambda e: services.entry_withdraw(entry=e, reason="withdrawn by an administrator"),
            "Withdrawn",
        )

    @admin.action(description="Disqualify (a house bot plays the remaining seats)")
    def disqualify(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        run_action(
            self,
            request,
            queryset,
            lambda e: services.entry_disqualify(entry=e, reason="disqualified by an administrator"),
            "Disqualified",
        )


@admin.register(Round)
class RoundAdmin(ReadOnlyAdmin):
    tournament_path = "tournament__"
    list_display = ["__str__", "status", "started_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["tournament__name"]
    list_select_related = ["tournament"]

    class RoundTableInline(TableInline):
        fk_name = "round"

    inlines = [RoundTableInline]
