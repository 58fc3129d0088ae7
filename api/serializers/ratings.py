"""Serializers of the rating leaderboard and a bot's rating history."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

import games
from api.serializers.base import QuerySerializer
from tournaments.models import Rating, RatingHistory


class RankingFilterSerializer(QuerySerializer):
    game = serializers.ChoiceField(choices=games.game_names())
    preset = serializers.CharField(
        max_length=64, required=False, help_text="The game's default preset if not given."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        cls = games.game_class(attrs["game"])
        preset = attrs.get("preset") or cls.default_preset
        if preset not in cls.presets:
            raise serializers.ValidationError(
                {"preset": [f"unknown preset; presets are: {', '.join(cls.presets)}"]}
            )
        attrs["preset"] = preset
        return attrs


class RatingHistoryFilterSerializer(QuerySerializer):
    preset = serializers.CharField(max_length=64, required=False)


class RatingSerializer(serializers.ModelSerializer[Rating]):
    bot = serializers.IntegerField(source="bot_id", read_only=True)
    bot_name = serializers.CharField(source="bot.name", read_only=True)
    owner = serializers.CharField(source="bot.owner.username", read_only=True)
    rank = serializers.SerializerMethodField()
    replaced_tables = serializers.IntegerField(
        read_only=True,
        default=0,
        help_text="Rated tables at which the judge replaced the bot for faults: it forfeited "
        "the rest of each, and was placed last (docs/tournaments.md, 'A fault never pays').",
    )

    class Meta:
        model = Rating
        fields = [
            "rank",
            "bot",
            "bot_name",
            "owner",
            "family",
            "ordinal",
            "mu",
            "sigma",
            "tables",
            "replaced_tables",
            "updated_at",
        ]
        read_only_fields = fields

    def get_rank(self, rating: Rating) -> int | None:
        return getattr(rating, "rank", None)


class RatingHistorySerializer(serializers.ModelSerializer[RatingHistory]):
    family = serializers.CharField(source="rating.family", read_only=True)

    class Meta:
        model = RatingHistory
        fields = [
            "family",
            "tournament",
            "table",
            "place",
            "ordinal",
            "mu",
            "sigma",
            "created_at",
        ]
        read_only_fields = fields
