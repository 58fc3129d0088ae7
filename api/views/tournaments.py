"""Views of tournaments, their entries, standings, progress, rounds and tables."""

from __future__ import annotations

import hashlib

from django.db.models import Count, QuerySet
from django.http import HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api import caching, permissions
from api.serializers.tables import TableFilterSerializer, TableSerializer
from api.serializers.tournaments import (
    EntryCreateSerializer,
    EntrySerializer,
    ProgressSerializer,
    RoundSerializer,
    StandingSerializer,
    TournamentDetailSerializer,
    TournamentFilterSerializer,
    TournamentSerializer,
    TournamentWriteSerializer,
)
from api.views.base import ApiView, immutable, request_user, validated
from tournaments import selectors, services
from tournaments.errors import ApplicationError
from tournaments.models import BotVersion, Tournament
from tournaments.tournament_settings import TournamentSettings


def _tournaments(request: Request) -> QuerySet[Tournament]:
    return (
        selectors.tournament_list()
        .filter(permissions.tournament_visibility(request.user))
        .select_related("organiser")
    )


def _tournament(request: Request, pk: int) -> Tournament:
    return get_object_or_404(_tournaments(request), pk=pk)


def _tournament_of(request: Request, pk: int) -> Tournament:
    """The tournament a sub-resource belongs to (its row only: no counts, no organiser)."""
    return get_object_or_404(
        Tournament.objects.filter(permissions.tournament_visibility(request.user)), pk=pk
    )


def _tournament_response(request: Request, tournament: Tournament, code: int = 200) -> Response:
    fresh = _tournament(request, tournament.pk)
    return Response(TournamentDetailSerializer(fresh).data, status=code)


class TournamentList(ApiView):
    """Tournaments (filter by status and game, order by ``ordering``), or create one
    (organisers: it starts as a draft)."""

    permission_classes = [permissions.IsOrganiser]
    serializer_class = TournamentSerializer

    @extend_schema(
        parameters=[TournamentFilterSerializer],
        responses=TournamentSerializer(many=True),
        operation_id="tournaments_list",
    )
    def get(self, request: Request) -> Response:
        query = validated(TournamentFilterSerializer, request.query_params)
        ordering = query.get("ordering", "-created_at")
        tournaments = (
            _tournaments(request)
            .filter(
                **{k: v for k, v in query.items() if k in ("status", "game")},
            )
            .order_by(ordering, "-pk" if ordering.startswith("-") else "pk")
        )
        return self.paginated(tournaments, TournamentSerializer)

    @extend_schema(request=TournamentWriteSerializer, responses={201: TournamentDetailSerializer})
    def post(self, request: Request) -> Response:
        data = validated(TournamentWriteSerializer, request.data)
        tournament = services.tournament_create(
            organiser=request_user(request), settings=TournamentSettings(**data)
        )
        return _tournament_response(request, tournament, status.HTTP_201_CREATED)


class TournamentDetail(ApiView):
    """A tournament: its settings, status, seed commitment, and its seed once finished.
    Its organiser (or staff) may change it before it starts."""

    permission_classes = [permissions.RunsTournament]
    serializer_class = TournamentDetailSerializer

    def get(self, request: Request, pk: int) -> Response:
        return Response(TournamentDetailSerializer(_tournament(request, pk)).data)

    @extend_schema(request=TournamentWriteSerializer(partial=True))
    def patch(self, request: Request, pk: int) -> Response:
        tournament = _tournament(request, pk)
        self.check_object_permissions(request, tournament)
        serializer = TournamentWriteSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        tournament = services.tournament_update(tournament=tournament, **serializer.validated_data)
        return _tournament_response(request, tournament)


class _TournamentAction(ApiView):
    permission_classes = [IsAuthenticated, permissions.RunsTournament]
    serializer_class = TournamentDetailSerializer

    def act(self, tournament: Tournament) -> object:
        raise NotImplementedError

    @extend_schema(request=None)
    def post(self, request: Request, pk: int) -> Response:
        tournament = _tournament(request, pk)
        self.check_object_permissions(request, tournament)
        self.act(tournament)
        return _tournament_response(request, tournament)


class TournamentOpen(_TournamentAction):
    """Open registration (draft -> open). Organiser or staff."""

    def act(self, tournament: Tournament) -> object:
        return services.tournament_open(tournament=tournament)


class TournamentStart(_TournamentAction):
    """Close registration, seat round 1 and queue its tables (open -> running). The seed
    stays secret until the end; its commitment is already published."""

    def act(self, tournament: Tournament) -> object:
        return services.tournament_start(tournament=tournament)


class TournamentCancel(_TournamentAction):
    """Cancel a tournament that is not finished. Organiser or staff."""

    def act(self, tournament: Tournament) -> object:
        return services.tournament_cancel(tournament=tournament)


class EntryList(ApiView):
    """The entries of a tournament, or enter one of your ready bot versions (while it is open).
    The version is frozen for the whole tournament."""

    serializer_class = EntrySerializer

    @extend_schema(responses=EntrySerializer(many=True), operation_id="tournaments_entries_list")
    def get(self, request: Request, pk: int) -> Response:
        tournament = _tournament_of(request, pk)
        return self.paginated(selectors.tournament_entries(tournament=tournament), EntrySerializer)

    @extend_schema(request=EntryCreateSerializer, responses={201: EntrySerializer})
    def post(self, request: Request, pk: int) -> Response:
        tournament = _tournament_of(request, pk)
        data = validated(EntryCreateSerializer, request.data)
        version = get_object_or_404(
            BotVersion.objects.select_related("bot").defer("content"), pk=data["version"]
        )
        if not permissions.owns_bot(request.user, version.bot):
            raise ApplicationError("you can only enter your own bots", code="not_owner")
        entry = services.entry_register(
            tournament=tournament, version=version, user=request_user(request)
        )
        fresh = get_object_or_404(selectors.tournament_entries(tournament=tournament), pk=entry.pk)
        return Response(EntrySerializer(fresh).data, status=status.HTTP_201_CREATED)


class Standings(ApiView):
    """The standings so far (final once finished): rank, points, relative score, head to
    head, tables played, and each entry's mean score per deal with its 95% interval, rank
    probabilities and whether its place is settled (``confidence``; docs/tournaments.md,
    "Statistics"). Withdrawn and disqualified entries come last, unranked.

    Kept in the cache under a key that changes with every recorded table and every entry
    (``selectors.standings_version``): final standings are computed once."""

    permission_classes = [AllowAny]
    serializer_class = StandingSerializer

    @extend_schema(
        responses=StandingSerializer(many=True), operation_id="tournaments_standings_list"
    )
    def get(self, request: Request, pk: int) -> HttpResponseBase:
        # Final standings are public and never change: their pages are kept as the bytes
        # sent (the links to the next and previous pages name the host: it is in the key).
        cache = caching.cache_for("standings")
        page_key = None
        if set(request.query_params) <= {"page", "page_size"}:
            digest = hashlib.sha256(request.build_absolute_uri().encode()).hexdigest()[:32]
            page_key = f"api:v1:standings:{pk}:final:page:{digest}"
            body = cache.get(page_key)
            if body is not None:
                return immutable(HttpResponse(body, content_type="application/json"))
        final = cache.get(f"api:v1:standings:{pk}:final")
        version = "final"
        if final is None:
            tournament = _tournament_of(request, pk)
            version = selectors.standings_version(tournament=tournament)
            final = caching.cached(
                "standings",
                f"api:v1:standings:{tournament.pk}:{version}",
                lambda: [
                    dict(row)
                    for row in StandingSerializer(
                        selectors.standings_for_tournament(tournament=tournament),
                        many=True,
                        context={
                            "confidence": selectors.tournament_statistics(
                                tournament=tournament
                            ).by_entry()
                        },
                    ).data
                ],
            )
        response = self.paginated_rows(final)
        if version != "final":
            return response
        body = JSONRenderer().render(response.data)
        if page_key is not None:
            cache.set(page_key, body, caching.TIMEOUT)
        return immutable(HttpResponse(body, content_type="application/json"))


class ProgressView(ApiView):
    """How far a tournament is: tables by status, the round being played; poll it."""

    permission_classes = [AllowAny]
    serializer_class = ProgressSerializer

    def get(self, request: Request, pk: int) -> Response:
        tournament = _tournament_of(request, pk)
        progress = selectors.tournament_progress(tournament=tournament)
        data = {
            **progress.as_json(),
            "status": tournament.status,
            "finished": tournament.status == Tournament.Status.FINISHED,
            "fraction": progress.fraction,
            # A failed table waits for an operator's re-run (docs/operations.md).
            "needs_attention": tournament.status == Tournament.Status.RUNNING
            and progress.tables_failed > 0,
        }
        return Response(ProgressSerializer(data).data)


class RoundList(ApiView):
    """The rounds of a tournament seated so far."""

    permission_classes = [AllowAny]
    serializer_class = RoundSerializer

    @extend_schema(responses=RoundSerializer(many=True), operation_id="tournaments_rounds_list")
    def get(self, request: Request, pk: int) -> Response:
        tournament = _tournament_of(request, pk)
        rounds = selectors.tournament_rounds(tournament=tournament).annotate(
            table_count=Count("tables")
        )
        return self.paginated(rounds, RoundSerializer)


class TableList(ApiView):
    """The tables of a tournament (``?round=N`` for one round), with their seats."""

    permission_classes = [AllowAny]
    serializer_class = TableSerializer

    @extend_schema(
        parameters=[TableFilterSerializer],
        responses=TableSerializer(many=True),
        operation_id="tournaments_tables_list",
    )
    def get(self, request: Request, pk: int) -> Response:
        tournament = _tournament_of(request, pk)
        query = validated(TableFilterSerializer, request.query_params)
        tables = selectors.tournament_tables(tournament=tournament, round_number=query.get("round"))
        return self.paginated(tables, TableSerializer)
