"""Serializers of a deal's replay and audit."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.base import OptionValueField


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
