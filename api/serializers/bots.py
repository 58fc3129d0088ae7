"""Serializers of bots, their versions and practice runs."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

import games
from api.exceptions import PayloadTooLarge
from api.serializers.base import StrictSerializer
from judge.package import MAX_ZIP_BYTES
from tournaments.models import Bot, BotVersion


class BotCreateSerializer(StrictSerializer):
    name = serializers.CharField(max_length=64)
    game = serializers.ChoiceField(choices=games.game_names())
    description = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default=""
    )


class VersionUploadSerializer(StrictSerializer):
    file = serializers.FileField(
        max_length=200,
        allow_empty_file=False,
        help_text="A source file (.py .c .cpp .rs .go .java .js) or a .zip package.",
    )

    def validate_file(self, value: Any) -> Any:
        if value.size > MAX_ZIP_BYTES:
            raise PayloadTooLarge(
                f"the upload is {value.size} bytes; the limit is {MAX_ZIP_BYTES} bytes"
            )
        return value


class BotSerializer(serializers.ModelSerializer[Bot]):
    owner = serializers.CharField(source="owner.username", read_only=True)

    class Meta:
        model = Bot
        fields = ["id", "name", "game", "description", "owner", "created_at"]
        read_only_fields = fields


class VersionSerializer(serializers.ModelSerializer[BotVersion]):
    bot = serializers.IntegerField(source="bot_id", read_only=True)

    class Meta:
        model = BotVersion
        fields = [
            "id",
            "bot",
            "number",
            "status",
            "filename",
            "size",
            "sha256",
            "builtin",
            "runtime",
            "toolchain",
            "created_at",
            "validated_at",
        ]
        read_only_fields = fields


class VersionDetailSerializer(VersionSerializer):
    report = serializers.JSONField(
        read_only=True, help_text="What the validation found (empty until it has run)."
    )

    class Meta(VersionSerializer.Meta):
        fields = [*VersionSerializer.Meta.fields, "report"]
        read_only_fields = fields


class PracticeCreateSerializer(StrictSerializer):
    preset = serializers.CharField(
        required=False, allow_blank=True, help_text="The rules (default: the game's default)."
    )
    table_size = serializers.IntegerField(
        required=False, allow_null=True, help_text="Seats (default: the preset's)."
    )
    deals = serializers.IntegerField(required=False, help_text="From 1 to 10 (default 2).")
    opponent = serializers.CharField(
        required=False, help_text="The built-in bot in the other seats (default heuristic)."
    )


class PracticeDealSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(help_text="The deal: its replay is /api/v1/deals/{id}/.")
    index = serializers.IntegerField()
    points = serializers.ListField(child=serializers.IntegerField(), help_text="Each seat's.")


class PracticeSerializer(serializers.Serializer[Any]):
    """A practice run (tournaments.member_selectors.PracticePage)."""

    id = serializers.IntegerField(source="tournament.pk")
    bot = serializers.IntegerField(source="version.bot_id")
    version = serializers.IntegerField(source="version.number")
    game = serializers.CharField(source="tournament.game")
    preset = serializers.CharField(source="tournament.preset")
    table_size = serializers.IntegerField(source="tournament.table_size")
    deal_count = serializers.IntegerField(
        source="tournament.deals_per_table", help_text="The deals it plays."
    )
    opponent = serializers.CharField(source="tournament.house_bot")
    status = serializers.CharField(
        source="line.state", help_text="waiting, playing, finished or failed."
    )
    failure = serializers.CharField(source="error", help_text="Why it failed (else empty).")
    table = serializers.IntegerField(source="line.table.pk", allow_null=True, default=None)
    seat = serializers.IntegerField(allow_null=True, help_text="Your bot's seat.")
    created_at = serializers.DateTimeField(source="tournament.created_at")
    finished_at = serializers.DateTimeField(source="tournament.finished_at", allow_null=True)
    deals = PracticeDealSerializer(many=True, help_text="Once finished: each deal's points.")
