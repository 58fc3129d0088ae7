"""Views of the rating leaderboard and a bot's rating history."""

from __future__ import annotations

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from api.serializers.ratings import (
    RankingFilterSerializer,
    RatingHistoryFilterSerializer,
    RatingHistorySerializer,
    RatingSerializer,
)
from api.views.base import ApiView, validated
from api.views.bots import bot_or_404
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
        query = validated(RankingFilterSerializer, request.query_params)
        family = ratings.preset_family(query["game"], query["preset"])
        leaderboard = selectors.rating_leaderboard(family=family).annotate(
            rank=Window(RowNumber(), order_by=[F("ordinal").desc(), F("pk").asc()])
        )
        return self.paginated(leaderboard.order_by("-ordinal", "pk"), RatingSerializer)


class BotRatingHistory(ApiView):
    """A bot's rating after each table it played (oldest first), in one preset family."""

    permission_classes = [AllowAny]
    serializer_class = RatingHistorySerializer

    @extend_schema(
        parameters=[RatingHistoryFilterSerializer],
        responses=RatingHistorySerializer(many=True),
        operation_id="bots_ratings_list",
    )
    def get(self, request: Request, pk: int) -> Response:
        bot = bot_or_404(pk)
        query = validated(RatingHistoryFilterSerializer, request.query_params)
        family = ratings.preset_family(bot.game, query["preset"]) if "preset" in query else None
        return self.paginated(
            selectors.bot_rating_history(bot=bot, family=family), RatingHistorySerializer
        )
