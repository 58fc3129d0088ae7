"""The admin of ratings and their history."""

from __future__ import annotations

from django.contrib import admin

from tournaments.admin.base import (
    ReadOnlyAdmin,
    ReadOnlyInline,
)
from tournaments.models import (
    Rating,
    RatingHistory,
)

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
