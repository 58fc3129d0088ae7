"""Views of the rating leaderboard."""

from __future__ import annotations

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from api.serializers.ratings import RankingFilterSerializer, RatingSerializer
from api.views.base import ApiView, _validated
from tournaments import ratings, selectors


class RankingList(ApiView):
    """The rating leaderboard of a game (and preset family): ordinal (mu - 3 sigma), mu,
    sigma and tables played, best first."""

    permission_classes = [AllowAny]
    serializer_class = RatingSerializer

    @extend_schema(
        parameters=[RankingFilterSerializer],
        responses=RatingSerializer(many=True),
        operation_id="rankings_list",
    )
    def get(self, request: Request) -> Response:
        query = _validated(RankingFilterSerializer, request.query_params)
        family = ratings.preset_family(query["game"], query["preset"])
        leaderboard = selectors.rating_leaderboard(family=family).annotate(
            rank=Window(RowNumber(), order_by=[F("ordinal").desc(), F("pk").asc()])
        )
        return self.paginated(leaderboard.order_by("-ordinal", "pk"), RatingSerializer)
