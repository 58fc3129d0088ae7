"""Views of a table, its log, a seat's log, and a deal's replay and audit."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from api.downloads import content_disposition
from api.exceptions import Hidden
from api.serializers.deals import DealAuditSerializer, DealReplaySerializer
from api.serializers.tables import SeatLogSerializer, TableDetailSerializer
from api.views.base import ApiView, _immutable
from tournaments import member_selectors, selectors, services, visibility
from tournaments.models import Deal, Table


def _visible_table(request: Request, table: Table) -> Table:
    """404 for a table of a tournament the user may not see (a draft: drafts have no tables,
    but still). Whether what it played may be shown is :func:`visibility.table_shown`."""
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
        table = _visible_table(request, selectors.table_get(table_id=pk))
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
        table = _visible_table(request, selectors.table_get(table_id=pk))
        if not visibility.table_shown(user=request.user, table=table):
            raise Hidden(visibility.table_hidden_reason(table=table))
        response = _immutable(
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


def _visible_deal(request: Request, pk: int) -> Deal:
    deal = selectors.deal_get(deal_id=pk)
    _visible_table(request, deal.table)
    if not visibility.deal_shown(user=request.user, deal=deal):
        raise Hidden(visibility.table_hidden_reason(table=deal.table))
    return deal


class DealReplay(ApiView):
    """The replay of one deal of a finished table: the hands as dealt, the passes, every
    trick (leader, cards in order, winner, points), every decision with its time and any
    fault, and the points.

    Most requests (anonymous ones, for a replay that may be shown) are answered before they
    reach this view, by :class:`api.replays.ReplayMiddleware`, with the same bytes."""

    permission_classes = [AllowAny]
    serializer_class = DealReplaySerializer

    @extend_schema(responses=DealReplaySerializer)
    def get(self, request: Request, pk: int) -> HttpResponse:
        # The replay was rendered once, when its table was recorded (a recorded deal never
        # changes): it is sent as stored, in one query that also says whether it may be shown.
        stored = selectors.deal_replay_stored(deal_id=pk)
        if stored is not None and stored.visible and stored.document is not None:
            return _immutable(HttpResponse(stored.document, content_type="application/json"))
        # Hidden from the public (say why, or show it to whom it is shown: a practice run's
        # author), missing, or recorded before replays were stored.
        deal = _visible_deal(request, pk)
        text = stored.document if stored is not None and stored.document else None
        text = text or selectors.deal_replay_document(deal_id=deal.pk)
        private = deal.table.tournament.practice
        return _immutable(HttpResponse(text, content_type="application/json"), private=private)


class DealAuditView(ApiView):
    """Re-play the deal from its seed and log through the engine: every card legal, by the
    right seat, every point right, and the stored rows the same as the replay."""

    permission_classes = [AllowAny]
    serializer_class = DealAuditSerializer

    def get(self, request: Request, pk: int) -> Response:
        deal = _visible_deal(request, pk)
        return Response(DealAuditSerializer(services.deal_audit(deal=deal).as_json()).data)
