"""Bases and fields shared by the API's serializers.

Input serializers are strict: a field the endpoint does not know is an error, not ignored.
Input ones check types and shapes (the services check the rest), output ones say what is
shown. No business logic here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tournaments.tournament_settings import BOUNDS


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


def bounded(field: Callable[..., FieldT], setting: str, **kwargs: Any) -> FieldT:
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
