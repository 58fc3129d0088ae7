"""Serializers of tables, their seats and results, and a seat's log."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.base import QuerySerializer, bounded
from tournaments import visibility
from tournaments.models import Seat, Table


class TableFilterSerializer(QuerySerializer):
    round = bounded(serializers.IntegerField, "rounds", required=False)


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
