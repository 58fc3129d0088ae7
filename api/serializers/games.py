"""Serializers of the games, their presets and rule options."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from api.serializers.base import OptionValueField


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
