"""The admin of bots and their versions."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.utils.safestring import SafeString

from tournaments import services
from tournaments.admin.base import (
    HidingAdmin,
    ReadOnlyInline,
    pretty_json,
    run_action,
)
from tournaments.models import (
    Bot,
    BotVersion,
)

_BOT_VERSION_INLINE_FIELDS = (
    "number",
    "status",
    "builtin",
    "runtime",
    "toolchain",
    "filename",
    "size",
    "short_sha",
    "created_at",
)


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
    list_display = [
        "label",
        "status",
        "builtin",
        "runtime",
        "filename",
        "size",
        "short_sha",
        "created_at",
    ]
    list_filter = ["status", "runtime", "bot__game"]
    search_fields = ["bot__name", "bot__owner__username", "sha256", "filename"]
    list_select_related = ["bot"]
    readonly_fields = [
        "bot",
        "number",
        "builtin",
        "filename",
        "size",
        "sha256",
        "runtime",
        "toolchain",
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
        run_action(
            self,
            request,
            queryset,
            lambda v: services.bot_version_revalidate(version=v),
            "Queued for validation",
        )
