"""Views of a tournament's crosstable and what a tournament's settings resolve.

The standings' intervals are in :class:`api.views.tournaments.Standings` (docs/api.md,
"Statistics").
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from api import permissions
from api.serializers.statistics import (
    CrosstableSerializer,
    ResolutionQuerySerializer,
    ResolutionSerializer,
)
from api.views.base import ApiView, immutable, validated
from tournaments import selectors
from tournaments.models import Tournament


class Crosstable(ApiView):
    """For each pair of entries that met: the mean difference of their scores per deal with
    its 95% interval, the deals compared and whether it is significant; in duplicate play
    also the pairs compared on the same cards. Only tables whose results may be shown count."""

    permission_classes = [AllowAny]
    serializer_class = CrosstableSerializer

    def get(self, request: Request, pk: int) -> Any:
        tournament = get_object_or_404(
            Tournament.objects.filter(permissions.tournament_visibility(request.user)), pk=pk
        )
        figures = selectors.tournament_statistics(tournament=tournament)
        table = figures.crosstable
        data = {
            "tournament": tournament.pk,
            "duplicate": table.duplicate,
            "confidence": table.confidence,
            "final": figures.version == "final",
            "entries": selectors.tournament_entries(tournament=tournament),
            "pairs": table.pairs,
        }
        response = Response(CrosstableSerializer(data).data)
        return immutable(response) if figures.version == "final" else response


class Resolution(ApiView):
    """What a tournament's settings tell apart: the smallest difference in points per deal
    between two entries told apart at 95% (with 80% power), the expected half-width of an
    entry's interval, the same in normal and in duplicate play (how much duplicate narrows the
    intervals for this preset, as measured), and with ``difference`` the rounds and deals
    needed to tell it apart. The spread per deal is measured from the house bots and from the
    finished tournaments of the preset."""

    permission_classes = [AllowAny]
    serializer_class = ResolutionSerializer

    @extend_schema(parameters=[ResolutionQuerySerializer])
    def get(self, request: Request) -> Response:
        query = validated(ResolutionQuerySerializer, request.query_params)
        report = selectors.tournament_resolution(**query)
        return Response(ResolutionSerializer(report).data)
