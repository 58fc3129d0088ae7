"""Serializers of the statistics endpoints: standings' confidence, the crosstable, what a
tournament's settings resolve (docs/api.md, "Statistics"). Output ones read the plain values
of :mod:`tournaments.statistics` and :mod:`tournaments.selectors.statistics`; an interval's
infinite end (fewer than two independent blocks: no interval yet) is sent as null."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.statistics.crosstable import Comparison
from tournaments.statistics.sprt import MIN_DEALS
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


# ---------------------------------------------------------------------------------------------
# How many deals?
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Matches
# ---------------------------------------------------------------------------------------------


class MatchCreateSerializer(serializers.Serializer[Any]):
    candidate = serializers.IntegerField(help_text="Your version to test (its id): v2.")
    baseline = serializers.IntegerField(
        required=False, help_text="Your version to beat (its id): v1. Or baseline_builtin."
    )
    baseline_builtin = serializers.CharField(
        max_length=32, required=False, help_text="A built-in bot to beat (random, lowest, ...)."
    )
    preset = serializers.CharField(max_length=64, required=False)
    house_bot = serializers.CharField(max_length=32, required=False)
    d0 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="H0, points per deal."
    )
    d1 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="H1, points per deal."
    )
    alpha = serializers.FloatField(required=False, min_value=0.0001, max_value=0.4999)
    beta = serializers.FloatField(required=False, min_value=0.0001, max_value=0.4999)
    max_deals = serializers.IntegerField(required=False, min_value=1, max_value=1_000_000)
    batch_deals = serializers.IntegerField(required=False, min_value=1, max_value=10_000)

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(set(data.keys()) - set(self.fields)) if hasattr(data, "keys") else []
        if unknown:
            raise serializers.ValidationError(
                {name: ["Unknown field."] for name in unknown}, code="unknown_field"
            )
        return super().to_internal_value(data)


class MatchVersionSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    number = serializers.IntegerField()
    name = serializers.CharField(source="label", help_text="The bot's name and version.")


class MatchSerializer(serializers.Serializer[Any]):
    """A match and where it stands (from selectors.match_progress)."""

    id = serializers.IntegerField(source="match.pk")
    owner = serializers.CharField(source="match.owner.username")
    game = serializers.CharField(source="match.game")
    preset = serializers.CharField(source="match.preset")
    candidate = MatchVersionSerializer(source="match.candidate")
    baseline = MatchVersionSerializer(source="match.baseline", allow_null=True)
    baseline_builtin = serializers.CharField(source="match.baseline_builtin")
    house_bot = serializers.CharField(source="match.house_bot")
    d0 = serializers.FloatField(source="match.d0", help_text="H0: points per deal.")
    d1 = serializers.FloatField(source="match.d1", help_text="H1: points per deal.")
    alpha = serializers.FloatField(source="match.alpha")
    beta = serializers.FloatField(source="match.beta")
    max_deals = serializers.IntegerField(source="match.max_deals")
    batch_deals = serializers.IntegerField(source="match.batch_deals")
    status = serializers.CharField(source="match.status")
    verdict = serializers.CharField(
        source="test.verdict.value",
        help_text="continue, accept_h1 (the candidate is better by about d1), accept_h0 (not "
        "better: about d0), capped (the cap of deals without a decision).",
    )
    deals = serializers.IntegerField(source="test.deals", help_text="Paired deals played.")
    mean = serializers.FloatField(
        source="test.mean", help_text="The candidate's mean score minus the baseline's, a deal."
    )
    low = FiniteFloatField(source="test.low", help_text="95% interval (null: too few deals).")
    high = FiniteFloatField(source="test.high")
    sd = serializers.FloatField(source="test.sd", help_text="Spread of a paired difference.")
    llr = FiniteFloatField(source="test.llr", help_text="The log-likelihood ratio of H1 to H0.")
    lower_bound = serializers.FloatField(source="test.lower_bound", help_text="Accept H0 at it.")
    upper_bound = serializers.FloatField(source="test.upper_bound", help_text="Accept H1 at it.")
    min_deals = serializers.SerializerMethodField(
        help_text="The test never decides before these many deals."
    )
    expected_deals = serializers.FloatField(
        allow_null=True, help_text="Wald's estimate of the deals the test takes on average."
    )
    batches_done = serializers.IntegerField()
    batches_in_flight = serializers.IntegerField()
    failure = serializers.CharField(source="match.error", help_text="Why it failed (empty).")
    created_at = serializers.DateTimeField(source="match.created_at")
    finished_at = serializers.DateTimeField(source="match.finished_at", allow_null=True)

    def get_min_deals(self, progress: Any) -> int:
        return MIN_DEALS
