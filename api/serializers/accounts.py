"""Serializers of tokens, signups and the current user."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.validators import UnicodeUsernameValidator
from rest_framework import serializers

from api.serializers.base import StrictSerializer


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
