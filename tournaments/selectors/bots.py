"""Reads of bots: a user's bots, a version's upload, ratings and their history."""

from __future__ import annotations

from django.db.models import Count, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from tournaments.models import (
    Bot,
    BotVersion,
    Rating,
    RatingHistory,
)


def bot_list(*, owner_id: int) -> QuerySet[Bot]:
    """The bots of the user ``owner_id``, by name."""
    return Bot.objects.filter(owner_id=owner_id).select_related("owner").order_by("name", "pk")


def bot_versions(*, bot: Bot) -> QuerySet[BotVersion]:
    return bot.versions.order_by("-number").defer("content")


def bot_version_content(*, version: BotVersion) -> bytes:
    """The uploaded file of a version, as uploaded."""
    return bytes(BotVersion.objects.values_list("content", flat=True).get(pk=version.pk))


def rating_leaderboard(*, family: str) -> QuerySet[Rating]:
    return ratings_with_replaced(
        Rating.objects.filter(family=family).select_related("bot__owner").order_by("-ordinal")
    )


def ratings_with_replaced(ratings: QuerySet[Rating]) -> QuerySet[Rating]:
    """``ratings`` with ``replaced_tables``: the rated tables at which the judge replaced the
    bot for faults (it forfeited their rest: docs/tournaments.md, "A fault never pays")."""
    replaced = (
        RatingHistory.objects.filter(
            rating=OuterRef("pk"),
            table__seats__replaced=True,
            table__seats__entry__version__bot_id=OuterRef("bot_id"),
        )
        .order_by()
        .values("rating")
        .annotate(n=Count("table", distinct=True))
        .values("n")
    )
    return ratings.annotate(replaced_tables=Coalesce(Subquery(replaced), Value(0)))


def bot_rating_history(*, bot: Bot, family: str | None = None) -> QuerySet[RatingHistory]:
    """A bot's rating after each rated table, oldest first (every family unless one is named)."""
    qs = RatingHistory.objects.filter(rating__bot=bot).select_related("rating")
    if family is not None:
        qs = qs.filter(rating__family=family)
    return qs.order_by("created_at", "pk")
