"""Views of a deal's replay and audit."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from api.exceptions import Hidden
from api.serializers.deals import DealAuditSerializer, DealReplaySerializer
from api.views.base import ApiView, immutable
from api.views.tables import visible_table
from tournaments import selectors, services, visibility
from tournaments.models import Deal


def _visible_deal(request: Request, pk: int) -> Deal:
    deal = selectors.deal_get(deal_id=pk)
    visible_table(request, deal.table)
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
            return immutable(HttpResponse(stored.document, content_type="application/json"))
        # Hidden from the public (say why, or show it to whom it is shown: a practice run's
        # author), missing, or recorded before replays were stored.
        deal = _visible_deal(request, pk)
        text = stored.document if stored is not None and stored.document else None
        text = text or selectors.deal_replay_document(deal_id=deal.pk)
        private = deal.table.tournament.practice
        return immutable(HttpResponse(text, content_type="application/json"), private=private)


class DealAuditView(ApiView):
    """Re-play the deal from its seed and log through the engine: every card legal, by the
    right seat, every point right, and the stored rows the same as the replay."""

    permission_classes = [AllowAny]
    serializer_class = DealAuditSerializer

    def get(self, request: Request, pk: int) -> Response:
        deal = _visible_deal(request, pk)
        return Response(DealAuditSerializer(services.deal_audit(deal=deal).as_json()).data)
