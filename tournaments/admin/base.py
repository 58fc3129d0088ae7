"""What every admin page of the tournaments app shares: links, pretty JSON, actions that
call a service, and the hiding of what is secret until it may be shown."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.widgets import AdminSplitDateTime
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from tournaments import visibility
from tournaments.errors import ApplicationError
from tournaments.models import (
    Table,
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


def run_action(
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


HIDDEN = "(hidden until the table's round is done)"


def lookup_touches_secret(
    model: type[models.Model], lookup: str, *, own_fields_shown: bool = False
) -> bool:
    """Whether the ORM path ``lookup`` (a filter, a search or an ordering, from ``model``)
    reads a field of ``visibility.SECRET_FIELDS`` on its way, or goes through a relation to
    a model of ``visibility.SECRET_ROWS`` (whose rows' existence is secret); with
    ``own_fields_shown``, the first model's own fields do not count (its admin lists only
    rows that may be shown).

    >>> from tournaments.models import Entry, Table, Tournament
    >>> lookup_touches_secret(Tournament, "seed__startswith")
    True
    >>> lookup_touches_secret(Table, "-tournament__seed"), lookup_touches_secret(Table, "number")
    (True, False)
    >>> lookup_touches_secret(Entry, "faults__isnull"), lookup_touches_secret(Entry, "faults__id")
    (True, True)
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
        if related in visibility.SECRET_ROWS:
            return True
        model = related
    return False


class ZonedSplitDateTime(AdminSplitDateTime):
    """The admin's date and time inputs, saying in which zone the time is read: the site's
    (UTC), as everything the admin shows (config/formats/) and the organisers' forms."""

    def get_context(self, name: str, value: Any, attrs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context(name, value, attrs)
        context["time_label"] = f"Time ({timezone.get_current_timezone_name()}):"
        return context


# The admins' formfield_overrides: every date and time typed in says its zone.
ZONED_FORMFIELDS: dict[type[models.Field[Any, Any]], dict[str, Any]] = {
    models.DateTimeField: {"widget": ZonedSplitDateTime}
}


class HidingAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """An admin that shows nothing secret before it may be shown (see the module)."""

    formfield_overrides = ZONED_FORMFIELDS

    # Set for models whose rows are all secret (deals, faults): the path from the model to
    # its table; only rows whose table may be shown are listed, and their own fields are
    # then no secret.
    table_path: str | None = None
    # Set for models that hang off a tournament: the path from the model to it; only rows of
    # tournaments the user may see are listed (a practice run: staff see it once it is over).
    tournament_path: str | None = None
    # The admin's display methods that show a secret field, by the field they show.
    secret_displays: Mapping[str, str] = {}

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request)
        if self.table_path is not None:
            # What this user may see (table_shown): practice runs' rows too, to their author
            # and to staff once the run is over, as on the pages.
            qs = qs.filter(visibility.tables_shown_to_q(user=request.user, prefix=self.table_path))
        if self.tournament_path is not None:
            qs = qs.filter(
                visibility.tournaments_shown_q(user=request.user, prefix=self.tournament_path)
            )
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
    # The inline's display methods that show a secret field, by the field they show: left
    # out with it.
    secret_displays: Mapping[str, str] = {}

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        fields = list(super().get_fields(request, obj))
        if obj is None or not visibility.hidden_fields(user=request.user, obj=obj):
            return fields
        secret = visibility.SECRET_FIELDS.get(self.model, frozenset())
        secret |= {name for name, field in self.secret_displays.items() if field in secret}
        return [name for name in fields if name not in secret]


class ReadOnlyAdmin(HidingAdmin):
    """Rows that record what was played: never added, changed or deleted by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def results_shown(table: Table) -> bool:
    """Whether the results of ``table``, a row the admin lists (so of a tournament the user
    may see: ``tournament_path``), may be shown: :func:`visibility.play_shown`, the rule on
    the statuses, the same for whoever may see the tournament (a practice run's author, or
    staff once it is over, sees its results as everyone sees a tournament's)."""
    return visibility.play_shown(
        table_status=table.status,
        round_status=table.round.status,
        tournament_status=table.tournament.status,
        duplicate=table.tournament.duplicate,
    )


def finished_at_shown(table: Table) -> str:
    """When ``table`` finished, if its results may be shown (:func:`results_shown`)."""
    if not results_shown(table):
        return HIDDEN if table.status == Table.Status.DONE else "-"
    return formats.localize(timezone.localtime(table.finished_at)) if table.finished_at else "-"
