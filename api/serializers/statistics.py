"""Serializers of the statistics: standings' confidence, the crosstable, the resolution.

Output ones read the plain values of :mod:`tournaments.statistics` and
:mod:`tournaments.selectors.statistics`; an interval's infinite end (fewer than two
independent blocks: no interval yet) is sent as null (docs/api.md, "Statistics").
"""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.statistics.crosstable import Comparison
from tournaments.tournament_settings import BOUNDS


class FiniteFloatField(serializers.FloatField):
    """A float, or null when it is infinite or not a number (JSON has neither)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> Any:
        number = float(value)
        return number if math.isfinite(number) else None


class EntryConfidenceSerializer(serializers.Serializer[Any]):
    """An entry's mean score per deal (relative to its table, or in duplicate play to the
    seats that held the same cards; higher is better) with its 95% interval, and where the
    bootstrap ranks it by that mean."""

    mean = serializers.FloatField(help_text="Mean score per deal, higher is better.")
    low = FiniteFloatField(help_text="Low end of the 95% interval (null: no interval yet).")
    high = FiniteFloatField(help_text="High end of the 95% interval (null: no interval yet).")
    deals = serializers.IntegerField(help_text="Deals scored.")
    blocks = serializers.IntegerField(
        help_text="Independent blocks resampled: tables, or duplicate boards."
    )
    rank = serializers.IntegerField(help_text="Rank by mean score (not by points).")
    rank_probability = serializers.FloatField(
        help_text="Probability of holding that rank (widened like the interval with few "
        "blocks; with fewer than two blocks it means nothing: the pages say it needs two "
        "tables)."
    )
    rank_probabilities = serializers.ListField(
        child=serializers.FloatField(), help_text="Probability of each rank, from 1."
    )
    settled = serializers.BooleanField(
        help_text="The interval is clear of every other entry's: this place is settled."
    )


class PairSerializer(serializers.Serializer[Any]):
    a = serializers.IntegerField(help_text="An entry.")
    b = serializers.IntegerField(help_text="Another entry (a < b).")
    comparison = serializers.ChoiceField(
        choices=[(c.value, c.value) for c in Comparison],
        help_text="table: at the same table; cards: on the same cards (duplicate play).",
    )
    deals = serializers.IntegerField()
    blocks = serializers.IntegerField(help_text="Tables or boards shared.")
    mean = serializers.FloatField(help_text="Mean of a's score minus b's, per deal.")
    low = FiniteFloatField()
    high = FiniteFloatField()
    p_value = serializers.FloatField()
    significant = serializers.BooleanField(help_text="The 95% interval excludes 0.")


class CrosstableEntrySerializer(serializers.Serializer[Any]):
    entry = serializers.IntegerField(source="pk")
    bot = serializers.IntegerField(source="version.bot_id")
    bot_name = serializers.CharField(source="version.bot.name")
    version = serializers.IntegerField(source="version.number")
    owner = serializers.CharField(source="user.username")


class CrosstableSerializer(serializers.Serializer[Any]):
    tournament = serializers.IntegerField()
    duplicate = serializers.BooleanField()
    confidence = serializers.FloatField()
    final = serializers.BooleanField(help_text="The tournament is over: these never change.")
    entries = CrosstableEntrySerializer(many=True)
    pairs = PairSerializer(many=True)


def _bounded_int(name: str, **kwargs: Any) -> serializers.IntegerField:
    bound = BOUNDS[name]
    return serializers.IntegerField(min_value=int(bound.low), max_value=int(bound.high), **kwargs)


class ResolutionQuerySerializer(serializers.Serializer[Any]):
    game = serializers.CharField(max_length=32)
    preset = serializers.CharField(max_length=64, required=False)
    entries = serializers.IntegerField(min_value=2, max_value=10_000)
    rounds = _bounded_int("rounds")
    deals_per_table = _bounded_int("deals_per_table")
    table_size = _bounded_int("table_size", required=False)
    duplicate = serializers.BooleanField(default=False)
    difference = serializers.FloatField(
        min_value=0.01,
        max_value=1000.0,
        required=False,
        help_text="Also say how many rounds and deals tell this difference (points per deal) "
        "apart.",
    )

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data.keys()) - set(self.fields)) if hasattr(data, "keys") else []
        if unknown:
            raise serializers.ValidationError(
                {name: ["Unknown parameter."] for name in unknown}, code="unknown_field"
            )
        return super().to_internal_value(data)


class ResolutionFiguresSerializer(serializers.Serializer[Any]):
    difference = serializers.FloatField(
        help_text="The smallest difference in points per deal told apart at 95% (power 80%)."
    )
    half_width = serializers.FloatField(help_text="Expected half-width of an entry's interval.")
    deals_per_entry = serializers.IntegerField()
    units = serializers.IntegerField(help_text="Independent blocks: tables, or duplicate boards.")
    spread = serializers.FloatField(help_text="Spread of a score per deal used.")


class SpreadSerializer(serializers.Serializer[Any]):
    house_table = serializers.FloatField(source="house.table")
    house_duplicate = serializers.FloatField(source="house.duplicate")
    house_duplicate_tables = serializers.IntegerField(source="house.duplicate_tables")
    house_deals = serializers.IntegerField(source="house.deals")
    tournaments = serializers.IntegerField(help_text="Finished tournaments of the preset read.")
    tournament_deals = serializers.IntegerField()
    tournament_table = serializers.FloatField(allow_null=True)
    tournament_duplicate = serializers.FloatField(allow_null=True)


class NeededSerializer(serializers.Serializer[Any]):
    difference = serializers.FloatField()
    rounds = serializers.IntegerField(source="needed_rounds")
    deals_per_entry = serializers.IntegerField(source="needed.deals_per_entry")


class ResolutionSerializer(serializers.Serializer[Any]):
    game = serializers.CharField()
    preset = serializers.CharField()
    entries = serializers.IntegerField()
    table_size = serializers.IntegerField()
    rounds = serializers.IntegerField()
    deals_per_table = serializers.IntegerField()
    duplicate = serializers.BooleanField()
    confidence = serializers.FloatField(source="resolution.confidence")
    power = serializers.FloatField(source="resolution.power")
    difference = serializers.FloatField(source="resolution.difference")
    half_width = serializers.FloatField(source="resolution.half_width")
    deals_per_entry = serializers.IntegerField(source="resolution.deals_per_entry")
    normal = ResolutionFiguresSerializer(allow_null=True)
    duplicate_play = ResolutionFiguresSerializer(allow_null=True)
    narrowing = serializers.FloatField(
        allow_null=True,
        help_text="Duplicate play's interval width over normal play's, for these settings.",
    )
    spread = SpreadSerializer(source="source")
    needed = serializers.SerializerMethodField(
        help_text="With difference: the fewest rounds (and deals per entry) that tell it apart."
    )

    @extend_schema_field(NeededSerializer(allow_null=True))
    def get_needed(self, report: Any) -> dict[str, Any] | None:
        if report.needed is None:
            return None
        return dict(NeededSerializer(report).data)
