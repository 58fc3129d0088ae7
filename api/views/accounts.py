"""Views of tokens, signups and the current user."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import accounts, permissions
from api.serializers.accounts import (
    MeSerializer,
    SignupSerializer,
    TokenRequestSerializer,
    TokenSerializer,
)
from api.views.base import validated


class _LoginEndpoint(APIView):
    """An endpoint that takes a username and password.

    A ``POST`` ignores the ``Authorization`` header and the session, so that its throttle
    counts the caller's address (the anonymous rate), whatever token comes with it.
    """

    def get_authenticators(self) -> list[Any]:
        # Called before the DRF request exists: self.request is Django's (None when the
        # schema is generated).
        request = getattr(self, "request", None)
        if request is not None and request.method == "POST":
            return []
        return super().get_authenticators()


class TokenView(_LoginEndpoint):
    """Your API token: get a new one from your username and password, or revoke them all.

    Send it as ``Authorization: Token <token>``. The service keeps only a digest of it: it is
    shown once, in the answer to this ``POST``. Each ``POST`` makes a new token (a user holds
    at most 10, the oldest going first); ``DELETE`` revokes every token of the user, logging
    out every client using them. Failed attempts are limited per username and per address
    (429 ``locked_out``: docs/api.md).
    """

    def get_permissions(self) -> list[Any]:
        return [IsAuthenticated()] if self.request.method == "DELETE" else [AllowAny()]

    @extend_schema(
        request=TokenRequestSerializer, responses=TokenSerializer, operation_id="token_obtain"
    )
    def post(self, request: Request) -> Response:
        data = validated(TokenRequestSerializer, request.data)
        issued = accounts.token_obtain(**data, request=request)
        return Response(TokenSerializer(issued).data)

    @extend_schema(request=None, responses={204: None}, operation_id="token_revoke")
    def delete(self, request: Request) -> Response:
        accounts.token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SignupView(_LoginEndpoint):
    """Open an account (when the service allows it: ``TAPIS_ALLOW_SIGNUP``); returns a token."""

    permission_classes = [AllowAny]

    @extend_schema(request=SignupSerializer, responses={201: TokenSerializer})
    def post(self, request: Request) -> Response:
        data = validated(SignupSerializer, request.data)
        issued = accounts.user_signup(**data, request=request)
        return Response(TokenSerializer(issued).data, status=status.HTTP_201_CREATED)


class MeView(APIView):
    """Who you are to the API, and whether you may organise tournaments."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=MeSerializer)
    def get(self, request: Request) -> Response:
        user = request.user
        return Response(
            MeSerializer(
                {
                    "id": user.pk,
                    "username": user.get_username(),
                    "is_staff": user.is_staff,
                    "is_organiser": permissions.is_organiser(user),
                }
            ).data
        )
