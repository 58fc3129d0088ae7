"""Views of the games."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

import games
from api.serializers.games import GameSerializer
from api.views.base import ApiView


class GameList(ApiView):
    """Every game, its presets and its rule options (type, default, allowed values)."""

    permission_classes = [AllowAny]
    serializer_class = GameSerializer

    @extend_schema(responses=GameSerializer(many=True), operation_id="games_list")
    def get(self, request: Request) -> Response:
        return self.paginated(games.catalogue(), GameSerializer)


class GameDetail(ApiView):
    """One game, its presets and its rule options."""

    permission_classes = [AllowAny]
    serializer_class = GameSerializer

    def get(self, request: Request, name: str) -> Response:
        for game in games.catalogue():
            if game["name"] == name:
                return Response(GameSerializer(game).data)
        raise NotFound(f"no game named {name!r}")
