"""Views of matches between two versions (docs/api.md, "Matches")."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from api.serializers.matches import MatchCreateSerializer, MatchSerializer
from api.views.base import ApiView, request_user, validated
from tournaments import selectors, services
from tournaments.models import BotVersion, Match


def _match(request: Request, pk: int) -> Match:
    """A match of the caller (staff: any); 404 for others' (their existence is private)."""
    return get_object_or_404(selectors.match_list(user=request.user), pk=pk)


def _match_response(match: Match, code: int = 200) -> Response:
    progress = selectors.match_progress(match=match)
    return Response(MatchSerializer(progress).data, status=code)


class MatchList(ApiView):
    """Your matches, newest first (staff: everyone's); or start one: is your ``candidate``
    version better than your ``baseline`` version (or a ``baseline_builtin`` bot)? The two play
    the same seat of the same deals with house bots in the other seats, batch after batch on
    the workers, until the sequential test decides (docs/tournaments.md, "Matches")."""

    permission_classes = [IsAuthenticated]
    serializer_class = MatchSerializer

    @extend_schema(responses=MatchSerializer(many=True), operation_id="matches_list")
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(selectors.match_list(user=request.user))
        assert page is not None
        return self.get_paginated_response(
            [MatchSerializer(selectors.match_progress(match=m)).data for m in page]
        )

    @extend_schema(request=MatchCreateSerializer, responses={201: MatchSerializer})
    def post(self, request: Request) -> Response:
        data = validated(MatchCreateSerializer, request.data)
        for role in ("candidate", "baseline"):
            if role in data:
                data[role] = get_object_or_404(
                    BotVersion.objects.select_related("bot").defer("content"), pk=data[role]
                )
        match = services.match_create(owner=request_user(request), **data)
        return _match_response(_match(request, match.pk), status.HTTP_201_CREATED)


class MatchDetail(ApiView):
    """A match and where it stands: deals played, the running mean difference per deal with
    its 95% interval, the log-likelihood ratio and its bounds, the verdict. Poll it."""

    permission_classes = [IsAuthenticated]
    serializer_class = MatchSerializer

    def get(self, request: Request, pk: int) -> Response:
        return _match_response(_match(request, pk))


class MatchCancel(ApiView):
    """Stop a running match of yours (staff: any); its batch in flight is still recorded."""

    permission_classes = [IsAuthenticated]
    serializer_class = MatchSerializer

    @extend_schema(request=None)
    def post(self, request: Request, pk: int) -> Response:
        services.match_cancel(match=_match(request, pk))
        return _match_response(_match(request, pk))
