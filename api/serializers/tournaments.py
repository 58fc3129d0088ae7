"""Serializers of tournaments, their entries, standings, progress and rounds."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

import games
from api.serializers.base import OptionValueField, QuerySerializer, StrictSerializer, bounded
from api.serializers.statistics import EntryConfidenceSerializer
from tournaments import formats, visibility
from tournaments.models import Entry, Round, Tournament
from tournaments.tournament_settings import NAME_MAX_LENGTH, PLACE_POINTS


class TournamentWriteSerializer(StrictSerializer):
    """The settings of a tournament; the engine checks the rules (preset and options)."""

    name = serializers.CharField(max_length=NAME_MAX_LENGTH)
    game = serializers.ChoiceField(choices=games.game_names())
    preset = serializers.CharField(max_length=64, required=False)
    options = serializers.DictField(
        child=OptionValueField(),
        required=False,
        help_text="Rule option overrides, by name (GET /api/v1/games/ lists them).",
    )
    table_size = bounded(serializers.IntegerField, "table_size", required=False)
    rounds = bounded(serializers.IntegerField, "rounds")
    deals_per_table = bounded(serializers.IntegerField, "deals_per_table")
    seating = serializers.ChoiceField(choices=formats.format_names(), required=False)
    duplicate = serializers.BooleanField(required=False)
    place_points = serializers.ListField(
        child=serializers.IntegerField(
            min_value=int(PLACE_POINTS.low), max_value=int(PLACE_POINTS.high)
        ),
        max_length=10,
        required=False,
    )
    decision_seconds = bounded(serializers.FloatField, "decision_seconds", required=False)
    bank_seconds = bounded(serializers.FloatField, "bank_seconds", required=False)
    startup_seconds = bounded(serializers.FloatField, "startup_seconds", required=False)
    max_faults = bounded(serializers.IntegerField, "max_faults", required=False)
    house_bot = serializers.CharField(max_length=32, required=False)
    allow_multiple_entries = serializers.BooleanField(required=False)
    registration_opens_at = serializers.DateTimeField(required=False, allow_null=True)
    registration_closes_at = serializers.DateTimeField(required=False, allow_null=True)


class EntryCreateSerializer(StrictSerializer):
    version = serializers.IntegerField(
        min_value=1, help_text="The id of one of your ready bot versions."
    )


class TournamentFilterSerializer(QuerySerializer):
    ORDERINGS = ("created_at", "-created_at", "name", "-name", "started_at", "-started_at")

    status = serializers.ChoiceField(choices=Tournament.Status.choices, required=False)
    game = serializers.ChoiceField(choices=games.game_names(), required=False)
    ordering = serializers.ChoiceField(choices=ORDERINGS, required=False)


class TournamentSerializer(serializers.ModelSerializer[Tournament]):
    organiser = serializers.CharField(source="organiser.username", read_only=True)
    entries = serializers.IntegerField(source="entry_count", read_only=True)
    seed = serializers.SerializerMethodField(
        help_text="The tournament's secret seed, shown once the tournament is finished "
        "(a decimal string: it is a 128-bit number). SHA-256 of it is the commitment."
    )
    commitment = serializers.CharField(
        read_only=True, help_text="SHA-256 (hex) of the seed, published from the start."
    )

    class Meta:
        model = Tournament
        fields = [
            "id",
            "name",
            "organiser",
            "game",
            "preset",
            "status",
            "table_size",
            "rounds",
            "deals_per_table",
            "seating",
            "duplicate",
            "current_round",
            "entries",
            "commitment",
            "seed",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field({"type": "string", "nullable": True, "pattern": "^[0-9]+$"})
    def get_seed(self, tournament: Tournament) -> str | None:
        seed = visibility.shown_seed(tournament=tournament)
        return None if seed is None else str(seed)


class TournamentDetailSerializer(TournamentSerializer):
    options = serializers.DictField(child=OptionValueField(), read_only=True)
    place_points = serializers.ListField(child=serializers.IntegerField(), read_only=True)

    class Meta(TournamentSerializer.Meta):
        fields = [
            *TournamentSerializer.Meta.fields,
            "options",
            "place_points",
            "decision_seconds",
            "bank_seconds",
            "startup_seconds",
            "max_faults",
            "house_bot",
            "allow_multiple_entries",
            "registration_opens_at",
            "registration_closes_at",
            "seed_revealed_at",
        ]
        read_only_fields = fields


class EntrySerializer(serializers.ModelSerializer[Entry]):
    bot = serializers.IntegerField(source="version.bot_id", read_only=True)
    bot_name = serializers.CharField(source="version.bot.name", read_only=True)
    version_number = serializers.IntegerField(source="version.number", read_only=True)
    owner = serializers.CharField(source="user.username", read_only=True)
    final_points = serializers.FloatField(read_only=True, allow_null=True)

    class Meta:
        model = Entry
        fields = [
            "id",
            "tournament",
            "bot",
            "bot_name",
            "version",
            "version_number",
            "owner",
            "withdrawn",
            "disqualified",
            "created_at",
            "final_rank",
            "final_points",
        ]
        read_only_fields = fields


class StandingSerializer(serializers.Serializer[Any]):
    rank = serializers.IntegerField(allow_null=True, help_text="None for unranked entries.")
    entry = serializers.IntegerField(source="entry.pk")
    bot = serializers.IntegerField(source="entry.version.bot_id")
    bot_name = serializers.CharField(source="entry.version.bot.name")
    version = serializers.IntegerField(source="entry.version.number")
    owner = serializers.CharField(source="entry.user.username")
    points = serializers.FloatField()
    points_exact = serializers.CharField(source="points", help_text="Exact, as a fraction.")
    relative_score = serializers.FloatField()
    head_to_head = serializers.IntegerField(
        help_text="Wins minus losses against the entries tied with it on points and score."
    )
    head_to_head_decides = serializers.BooleanField(
        help_text="Whether head-to-head told this entry apart from entries tied with it on "
        "points and score (else it decided nothing: 0, or equal among the tied)."
    )
    tables = serializers.IntegerField()
    total_score = serializers.IntegerField()
    places = serializers.ListField(child=serializers.IntegerField())
    ranked = serializers.BooleanField()
    withdrawn = serializers.BooleanField(source="entry.withdrawn")
    disqualified = serializers.BooleanField(source="entry.disqualified")
    replaced = serializers.IntegerField(
        help_text="Tables at which the judge replaced the entry's bot for faults: it forfeited "
        "the rest of each (docs/tournaments.md, 'A fault never pays')."
    )
    confidence = serializers.SerializerMethodField(
        help_text="Mean score per deal with its 95% interval (null: no score yet, or unranked)."
    )

    @extend_schema_field(EntryConfidenceSerializer(allow_null=True))
    def get_confidence(self, row: Any) -> dict[str, Any] | None:
        line = self.context.get("confidence", {}).get(row.entry.pk)
        if line is None:
            return None
        return dict(EntryConfidenceSerializer(line).data)


class ProgressSerializer(serializers.Serializer[Any]):
    status = serializers.ChoiceField(choices=Tournament.Status.choices)
    finished = serializers.BooleanField()
    tables_total = serializers.IntegerField()
    tables_done = serializers.IntegerField()
    tables_running = serializers.IntegerField()
    tables_pending = serializers.IntegerField()
    tables_failed = serializers.IntegerField()
    current_round = serializers.IntegerField()
    rounds = serializers.IntegerField()
    fraction = serializers.FloatField()
    needs_attention = serializers.BooleanField(
        help_text="A table failed: the tournament waits for an operator to re-run it."
    )


class RoundSerializer(serializers.ModelSerializer[Round]):
    tables = serializers.IntegerField(source="table_count", read_only=True)

    class Meta:
        model = Round
        fields = ["id", "number", "status", "started_at", "finished_at", "tables"]
        read_only_fields = fields
