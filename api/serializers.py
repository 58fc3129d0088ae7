"""Serializers of the API: input ones check types and shapes (the services check the rest),
output ones say what is shown. No business logic here.

Input serializers are strict: a field the endpoint does not know is an error, not ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib.auth.validators import UnicodeUsernameValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

import games
from judge.package import MAX_ZIP_BYTES
from tournaments import formats, visibility
from tournaments.models import (
    Bot,
    BotVersion,
    Entry,
    Rating,
    RatingHistory,
    Round,
    Seat,
    Table,
    Tournament,
)
from tournaments.tournament_settings import BOUNDS, NAME_MAX_LENGTH, PLACE_POINTS

from .exceptions import PayloadTooLarge
from .statistics_serializers import EntryConfidenceSerializer

# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


class StrictSerializer(serializers.Serializer[Any]):
    """Refuses fields it does not declare (a misspelt field is a mistake worth telling)."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "keys"):
            unknown = sorted(set(data.keys()) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: ["Unknown field."] for name in unknown}, code="unknown_field"
                )
        return super().to_internal_value(data)


class QuerySerializer(serializers.Serializer[Any]):
    """Query parameters (unknown ones, such as ``page``, are left to the pagination)."""


class TokenRequestSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )


class TokenSerializer(serializers.Serializer[Any]):
    token = serializers.CharField(source="key")
    username = serializers.CharField(source="user.username")


class SignupSerializer(StrictSerializer):
    username = serializers.CharField(max_length=150, validators=[UnicodeUsernameValidator()])
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, style={"input_type": "password"}
    )
    email = serializers.EmailField(required=False, allow_blank=True, default="")


class MeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    is_staff = serializers.BooleanField()
    is_organiser = serializers.BooleanField()


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


def _option_value(value: Any) -> Any:
    if not isinstance(value, bool | int | str) or isinstance(value, float):
        raise serializers.ValidationError("a rule option is an integer, a boolean or a string")
    return value


_OPTION_VALUE_SCHEMA = {"oneOf": [{"type": "integer"}, {"type": "boolean"}, {"type": "string"}]}


@extend_schema_field(_OPTION_VALUE_SCHEMA)
class OptionValueField(serializers.Field[Any, Any, Any, Any]):
    """A rule option's value: an integer, a boolean or a string."""

    def to_internal_value(self, data: Any) -> Any:
        return _option_value(data)

    def to_representation(self, value: Any) -> Any:
        return value


FieldT = TypeVar("FieldT", serializers.IntegerField, serializers.FloatField)


def _bounded(field: Callable[..., FieldT], setting: str, **kwargs: Any) -> FieldT:
    """A number field with the bounds of a tournament setting (the services check them too)."""
    bound = BOUNDS[setting]
    low, high = (
        (int(bound.low), int(bound.high))
        if field is serializers.IntegerField
        else (
            bound.low,
            bound.high,
        )
    )
    return field(min_value=low, max_value=high, **kwargs)


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
    table_size = _bounded(serializers.IntegerField, "table_size", required=False)
    rounds = _bounded(serializers.IntegerField, "rounds")
    deals_per_table = _bounded(serializers.IntegerField, "deals_per_table")
    seating = serializers.ChoiceField(choices=formats.format_names(), required=False)
    duplicate = serializers.BooleanField(required=False)
    place_points = serializers.ListField(
        child=serializers.IntegerField(
            min_value=int(PLACE_POINTS.low), max_value=int(PLACE_POINTS.high)
        ),
        max_length=10,
        required=False,
    )
    decision_seconds = _bounded(serializers.FloatField, "decision_seconds", required=False)
    bank_seconds = _bounded(serializers.FloatField, "bank_seconds", required=False)
    startup_seconds = _bounded(serializers.FloatField, "startup_seconds", required=False)
    max_faults = _bounded(serializers.IntegerField, "max_faults", required=False)
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


class TableFilterSerializer(QuerySerializer):
    round = _bounded(serializers.IntegerField, "rounds", required=False)


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


# ---------------------------------------------------------------------------------------------
# Games
# ---------------------------------------------------------------------------------------------


class GameOptionSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(help_text="The option's key in a tournament's `options`.")
    # (a declared field, which the serializer's metaclass takes out of the class: not the
    # label a Field has, which mypy sees)
    label = serializers.CharField(help_text="The option's name in words, for people.")  # type: ignore[assignment]
    type = serializers.ChoiceField(choices=["int", "bool", "str"])
    default = OptionValueField()
    doc = serializers.CharField()
    choices = serializers.ListField(child=OptionValueField(), allow_null=True)
    minimum = serializers.IntegerField(allow_null=True)
    maximum = serializers.IntegerField(allow_null=True)
    allowed = serializers.CharField(help_text="The allowed values, in words.")


class GamePresetSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    doc = serializers.CharField()
    values = serializers.DictField(child=OptionValueField())


class GameSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    title = serializers.CharField()
    default_preset = serializers.CharField()
    lower_is_better = serializers.BooleanField()
    presets = GamePresetSerializer(many=True)
    options = GameOptionSerializer(many=True)


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


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


_HIDDEN_HELP = " Null until the table's results are shown."


class SeatSerializer(serializers.ModelSerializer[Seat]):
    bot = serializers.IntegerField(source="entry.version.bot_id", read_only=True, allow_null=True)
    label = serializers.SerializerMethodField()  # type: ignore[assignment]
    house = serializers.BooleanField(source="is_house", read_only=True)
    score = serializers.IntegerField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    total = serializers.IntegerField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    place = serializers.IntegerField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    points = serializers.FloatField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    faults = serializers.IntegerField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    replaced = serializers.BooleanField(
        read_only=True,
        allow_null=True,
        help_text="The judge handed the seat to a built-in bot." + _HIDDEN_HELP,
    )
    replaced_deal = serializers.IntegerField(
        read_only=True,
        allow_null=True,
        help_text="The deal (from 0) from which the judge replaced the seat's bot: from it on, "
        "the seat forfeits the rest of the table (docs/tournaments.md, 'A fault never pays'). "
        "Null: never replaced." + _HIDDEN_HELP,
    )
    decisions = serializers.IntegerField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)
    mean_time = serializers.FloatField(read_only=True, allow_null=True, help_text=_HIDDEN_HELP)

    class Meta:
        model = Seat
        fields = [
            "position",
            "entry",
            "bot",
            "label",
            "house",
            "house_bot",
            "substitute",
            "score",
            "total",
            "place",
            "points",
            "faults",
            "replaced",
            "replaced_deal",
            "decisions",
            "mean_time",
        ]
        read_only_fields = fields

    def get_label(self, seat: Seat) -> str:
        if seat.entry is not None and not seat.substitute:
            return seat.entry.version.label
        if seat.entry is not None:
            return f"house:{seat.house_bot} for {seat.entry.version.label}"
        return f"house:{seat.house_bot}"


class TableSerializer(serializers.ModelSerializer[Table]):
    """A table and its seats. Until :func:`tournaments.visibility.table_shown` allows it
    (the table finished; in duplicate play, its whole round), each seat's results and the
    time the table finished are null: with one deal per table a score is that deal's points,
    and a bot's own times are a channel it controls."""

    round = serializers.IntegerField(source="round.number", read_only=True)
    seats = SeatSerializer(many=True, read_only=True)
    visible = serializers.SerializerMethodField(
        help_text="Whether the table's results and deals are shown: once the table (in "
        "duplicate play, its round) is finished. Until then they are null or empty."
    )
    finished_at = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="Null until the table's results are shown."
    )

    class Meta:
        model = Table
        fields = [
            "id",
            "tournament",
            "round",
            "number",
            "status",
            "started_at",
            "finished_at",
            "visible",
            "seats",
        ]
        read_only_fields = fields

    def shown(self, table: Table) -> bool:
        """Whether the results of ``table`` may be shown to the request's user (asked once
        per table)."""
        cache: dict[int, bool] = self.context.setdefault("tables_shown", {})
        if table.pk not in cache:
            request = self.context.get("request")
            cache[table.pk] = visibility.table_shown(
                user=getattr(request, "user", None), table=table
            )
        return cache[table.pk]

    def get_visible(self, table: Table) -> bool:
        return self.shown(table)

    def to_representation(self, instance: Table) -> dict[str, Any]:
        data = dict(super().to_representation(instance))
        if not self.shown(instance):
            data["finished_at"] = None
            for seat in data["seats"]:
                seat.update(dict.fromkeys(visibility.SEAT_RESULT_FIELDS & seat.keys()))
        return data


class FaultSerializer(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    entry = serializers.IntegerField(source="entry_id", allow_null=True)
    kind = serializers.CharField()
    deal_index = serializers.IntegerField(allow_null=True)
    step = serializers.IntegerField(allow_null=True)
    detail = serializers.CharField()


class DealSummarySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    index = serializers.IntegerField()
    points = serializers.ListField(child=serializers.IntegerField())
    decisions = serializers.IntegerField()
    faults = serializers.IntegerField()


class TableResultsSerializer(serializers.Serializer[Any]):
    totals = serializers.ListField(child=serializers.IntegerField())
    scores = serializers.ListField(child=serializers.IntegerField())
    places = serializers.ListField(child=serializers.IntegerField())
    elapsed = serializers.FloatField()


class TableDetailSerializer(TableSerializer):
    """A table; the view sets ``deal_rows`` and ``fault_rows`` on it (empty while the table
    may not be shown)."""

    results = serializers.SerializerMethodField()
    deals = DealSummarySerializer(source="deal_rows", many=True, read_only=True)
    faults = FaultSerializer(source="fault_rows", many=True, read_only=True)

    class Meta(TableSerializer.Meta):
        fields = [*TableSerializer.Meta.fields, "results", "deals", "faults"]
        read_only_fields = fields

    @extend_schema_field(TableResultsSerializer(allow_null=True))
    def get_results(self, table: Table) -> dict[str, Any] | None:
        if not self.shown(table) or not table.result:
            return None
        return TableResultsSerializer(table.result).data


# ---------------------------------------------------------------------------------------------
# Deals
# ---------------------------------------------------------------------------------------------


class TrickSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    leader = serializers.IntegerField()
    cards = serializers.ListField(child=serializers.CharField(), help_text="From the leader.")
    winner = serializers.IntegerField()
    points = serializers.IntegerField()


class DecisionSerializer(serializers.Serializer[Any]):
    step = serializers.IntegerField()
    seat = serializers.IntegerField()
    action = serializers.JSONField(help_text="A card name, or a list of cards for a pass.")
    seconds = serializers.FloatField(help_text="How long the bot took.")
    fault = serializers.CharField(help_text="The fault at this step, if any.")


class TakeoverSerializer(serializers.Serializer[Any]):
    from_action = serializers.IntegerField()
    bot = serializers.CharField()


class ReplaySeatSerializer(serializers.Serializer[Any]):
    position = serializers.IntegerField()
    entry = serializers.IntegerField(allow_null=True)
    bot = serializers.CharField()
    house = serializers.BooleanField()
    substitute = serializers.BooleanField()
    takeover = TakeoverSerializer(
        required=False,
        help_text="Only once a built-in bot took the seat over (after a crash or too many "
        "faults): its name and the index of its first action in this deal.",
    )


@extend_schema_field(TrickSerializer(many=True))
class TricksField(serializers.JSONField):
    """The tricks, already plain JSON: shown as they are (one serializer per trick would cost
    more than the rest of the replay)."""


@extend_schema_field(DecisionSerializer(many=True))
class DecisionsField(serializers.JSONField):
    """The decisions, already plain JSON: shown as they are."""


@extend_schema_field(ReplaySeatSerializer(many=True))
class ReplaySeatsField(serializers.JSONField):
    """The seats, already plain JSON: shown as they are."""


class DealReplaySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    tournament = serializers.IntegerField()
    round = serializers.IntegerField()
    table = serializers.IntegerField()
    index = serializers.IntegerField()
    game = serializers.CharField()
    preset = serializers.CharField()
    options = serializers.DictField(child=OptionValueField())
    seed = serializers.IntegerField(allow_null=True, help_text="The deal's seed.")
    seats = ReplaySeatsField()
    hands = serializers.JSONField(help_text="The hands as dealt (the engine's deal record).")
    record = serializers.JSONField(help_text="The engine's whole deal record.")
    passes = serializers.JSONField(allow_null=True, help_text="Cards passed by each seat.")
    tricks = TricksField()
    decisions = DecisionsField()
    faults = serializers.JSONField(help_text="The judge's faults in this deal.")
    points = serializers.ListField(child=serializers.IntegerField())
    log = serializers.JSONField(help_text="This deal's entry of the replay log (format v1).")


class AuditCheckSerializer(serializers.Serializer[Any]):
    name = serializers.CharField()
    description = serializers.CharField()
    verdict = serializers.ChoiceField(choices=["passed", "failed", "not checked"])
    detail = serializers.CharField(allow_blank=True)
    problems = serializers.ListField(child=serializers.CharField())


class DealAuditSerializer(serializers.Serializer[Any]):
    deal = serializers.IntegerField()
    table = serializers.IntegerField()
    index = serializers.IntegerField()
    ok = serializers.BooleanField()
    problems = serializers.ListField(child=serializers.CharField())
    checks = AuditCheckSerializer(many=True)


# ---------------------------------------------------------------------------------------------
# Ratings
# ---------------------------------------------------------------------------------------------


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


class SeatLogSerializer(serializers.Serializer[Any]):
    """A bot's own log at a table (tournaments.member_selectors.SeatLog)."""

    table = serializers.IntegerField(source="table.pk")
    seat = serializers.IntegerField(source="seat.position")
    bot = serializers.SerializerMethodField()
    log = serializers.CharField(help_text="What the bot wrote to stderr, as the judge kept it.")
    truncated = serializers.BooleanField(help_text="The judge cut the log (a note ends it).")
    faults = serializers.ListField(child=serializers.DictField())
    decisions = serializers.IntegerField()
    mean_time = serializers.FloatField(allow_null=True)
    p99_time = serializers.FloatField(allow_null=True)

    def get_bot(self, obj: Any) -> str:
        entry = obj.seat.entry
        return str(entry.version.label) if entry is not None else f"house:{obj.seat.house_bot}"


# ---------------------------------------------------------------------------------------------
# Practice runs (a version's "try it")
# ---------------------------------------------------------------------------------------------


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
