"""Serializers of matches between two versions (docs/api.md, "Matches")."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from api.serializers.statistics import FiniteFloatField
from tournaments.statistics.sprt import MIN_DEALS


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
