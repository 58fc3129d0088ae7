"""Views of a table, its log and a seat's log."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from api.downloads import content_disposition
from api.exceptions import Hidden
from api.serializers.tables import SeatLogSerializer, TableDetailSerializer
from api.views.base import ApiView, immutable
from tournaments import member_selectors, selectors, visibility
from tournaments.models import Table


def visible_table(request: Request, table: Table) -> Table:
    """The table, or a 404 if the user may not see its tournament.

    (A draft: drafts have no tables, but still.) Whether what it played may be shown is
    :func:`visibility.table_shown`.
    """
    if not visibility.tournament_shown(user=request.user, tournament=table.tournament):
        raise NotFound()
    return table


class TableDetail(ApiView):
    """A table and its seats; once it may be shown (finished; in duplicate play, once its
    whole round is), its results (each seat's score, place, points, decisions, mean time and
    faults), each deal's points and the faults. Until then those are null or empty."""

    permission_classes = [AllowAny]
    serializer_class = TableDetailSerializer

    def get(self, request: Request, pk: int) -> Response:
        table = visible_table(request, selectors.table_get(table_id=pk))
        shown = visibility.table_shown(user=request.user, table=table)
        table.deal_rows = selectors.table_deal_points(table=table) if shown else []  # type: ignore[attr-defined]
        table.fault_rows = list(table.fault_set.all()) if shown else []  # type: ignore[attr-defined]
        return Response(TableDetailSerializer(table, context=self.get_serializer_context()).data)


class TableLog(ApiView):
    """The complete replay log of a finished table (the engine's replay format, with the
    judge's times and faults): feed it to ``tapis verify``."""

    permission_classes = [AllowAny]

    @extend_schema(responses={200: OpenApiResponse(description="A tapis-replay log (v1).")})
    def get(self, request: Request, pk: int) -> Response:
        table = visible_table(request, selectors.table_get(table_id=pk))
        if not visibility.table_shown(user=request.user, table=table):
            raise Hidden(visibility.table_hidden_reason(table=table))
        response = immutable(
            Response(selectors.table_log(table=table)), private=table.tournament.practice
        )
        response["Content-Disposition"] = content_disposition(f"table-{table.pk}.json")
        return response


class SeatLogView(ApiView):
    """What the bot at one seat of a table wrote to stderr (as kept: ``truncated`` says the
    judge cut it), its faults and decision times: for the bot's owner and staff, once the
    table may be shown (``tournaments.visibility.seat_log_shown``). Anyone else gets 404 (the
    seat is not theirs to know of, or its tournament not theirs to see: a running practice run
    to staff); the owner gets 403 ``hidden`` while the table is hidden."""

    permission_classes = [IsAuthenticated]
    serializer_class = SeatLogSerializer

    def get(self, request: Request, pk: int, seat: int) -> Response:
        try:
            log = member_selectors.seat_log(user=request.user, table_id=pk, position=seat)
        except Http404:
            raise NotFound() from None
        except DjangoPermissionDenied as exc:
            raise Hidden(str(exc)) from None
        return Response(SeatLogSerializer(log).data)
