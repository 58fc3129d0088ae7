"""Views of the API: validate the input, call one service or selector, serialize the output.

Every list is paginated (:class:`api.pagination.Pagination`); every error has the shape of
:mod:`api.exceptions`; who may do what is in :mod:`api.permissions`.
"""

from __future__ import annotations

import hashlib
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db.models import Count, F, QuerySet, Window
from django.db.models.functions import RowNumber
from django.http import Http404, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

import games
from tournaments import member_selectors, ratings, selectors, services, visibility
from tournaments.errors import ApplicationError
from tournaments.models import Bot, BotVersion, Deal, Table, Tournament
from tournaments.tournament_settings import TournamentSettings

from . import accounts, caching, permissions
from .downloads import content_disposition
from .exceptions import Hidden
from .parsers import BotUploadParser
from .serializers import (
    BotCreateSerializer,
    BotSerializer,
    DealAuditSerializer,
    DealReplaySerializer,
    EntryCreateSerializer,
    EntrySerializer,
    GameSerializer,
    MeSerializer,
    PracticeCreateSerializer,
    PracticeSerializer,
    ProgressSerializer,
    RankingFilterSerializer,
    RatingHistoryFilterSerializer,
    RatingHistorySerializer,
    RatingSerializer,
    RoundSerializer,
    SeatLogSerializer,
    SignupSerializer,
    StandingSerializer,
    TableDetailSerializer,
    TableFilterSerializer,
    TableSerializer,
    TokenRequestSerializer,
    TokenSerializer,
    TournamentDetailSerializer,
    TournamentFilterSerializer,
    TournamentSerializer,
    TournamentWriteSerializer,
    VersionDetailSerializer,
    VersionSerializer,
    VersionUploadSerializer,
)

ResponseT = TypeVar("ResponseT", bound=HttpResponseBase)


def _user(request: Request) -> User:
    """The logged-in user (the view's permissions have made sure there is one)."""
    user = request.user
    if not isinstance(user, User):
        raise NotAuthenticated()
    return user


def _validated(serializer_class: type[BaseSerializer[Any]], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _immutable(response: ResponseT, *, private: bool = False) -> ResponseT:
    """Mark an answer that will never change (a replay, final standings): any client or
    proxy may keep it; only the client, if it is ``private`` (a practice run's: its author's
    and staff's only)."""
    scope = "private" if private else "public"
    response["Cache-Control"] = f"{scope}, max-age={caching.TIMEOUT}"
    return response


class ApiView(GenericAPIView[Any]):
    """A view of this API: lists go through the pagination."""

    def paginated_rows(self, rows: list[dict[str, Any]]) -> Response:
        """A page of rows already serialized (kept in the cache as they are)."""
        paginator = self.paginator
        assert paginator is not None
        page: Any = paginator.paginate_queryset(rows, self.request, view=self)  # type: ignore[arg-type]
        return paginator.get_paginated_response(page)

    def paginated(self, items: Any, serializer_class: type[BaseSerializer[Any]]) -> Response:
        page = self.paginate_queryset(items)
        assert page is not None  # every view of the API paginates its lists
        return self.get_paginated_response(
            serializer_class(page, many=True, context=self.get_serializer_context()).data
        )


# ---------------------------------------------------------------------------------------------
# Accounts
# ---------------------------------------------------------------------------------------------


class _LoginEndpoint(APIView):
    """An endpoint that takes a username and password: a ``POST`` ignores the ``Authorization``
    header and the session, so that its throttle counts the caller's address (the anonymous
    rate), whatever token comes with it."""

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
        data = _validated(TokenRequestSerializer, request.data)
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
        data = _validated(SignupSerializer, request.data)
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


# ---------------------------------------------------------------------------------------------
# Games
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Bots
# ---------------------------------------------------------------------------------------------


def _bot(pk: int) -> Bot:
    return get_object_or_404(Bot.objects.select_related("owner"), pk=pk)


class BotList(ApiView):
    """Your bots (GET), or a new bot (POST): a name and a game; its code comes in versions."""

    permission_classes = [IsAuthenticated]
    serializer_class = BotSerializer

    @extend_schema(responses=BotSerializer(many=True), operation_id="bots_list")
    def get(self, request: Request) -> Response:
        return self.paginated(selectors.bot_list(owner_id=_user(request).pk), BotSerializer)

    @extend_schema(request=BotCreateSerializer, responses={201: BotSerializer})
    def post(self, request: Request) -> Response:
        data = _validated(BotCreateSerializer, request.data)
        bot = services.bot_create(owner=_user(request), **data)
        return Response(BotSerializer(bot).data, status=status.HTTP_201_CREATED)


class BotDetail(ApiView):
    """A bot's public profile."""

    permission_classes = [AllowAny]
    serializer_class = BotSerializer

    def get(self, request: Request, pk: int) -> Response:
        return Response(BotSerializer(_bot(pk)).data)


class BotVersionList(ApiView):
    """A bot's versions (its owner and staff), or upload a new one (its owner).

    The upload is ``multipart/form-data`` with one ``file``: a single ``.py`` file or a
    ``.zip`` package with a manifest (docs/protocol.md), at most 4 MiB. The new version is
    ``pending``; a worker plays it at a short sandboxed table and it becomes ``ready`` or
    ``rejected`` (see its ``report``).
    """

    permission_classes = [IsAuthenticated, permissions.OwnerOrStaffReads]
    serializer_class = VersionSerializer
    parser_classes = [BotUploadParser]

    @extend_schema(responses=VersionSerializer(many=True), operation_id="bots_versions_list")
    def get(self, request: Request, pk: int) -> Response:
        bot = _bot(pk)
        self.check_object_permissions(request, bot)
        return self.paginated(selectors.bot_versions(bot=bot), VersionSerializer)

    @extend_schema(request=VersionUploadSerializer, responses={201: VersionDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        bot = _bot(pk)
        self.check_object_permissions(request, bot)
        upload = _validated(VersionUploadSerializer, request.data)["file"]
        version = services.bot_version_create(
            bot=bot, content=upload.read(), filename=upload.name or ""
        )
        return Response(VersionDetailSerializer(version).data, status=status.HTTP_201_CREATED)


def _version(request: Request, view: APIView, pk: int, number: int) -> BotVersion:
    bot = _bot(pk)
    view.check_object_permissions(request, bot)
    version = get_object_or_404(selectors.bot_versions(bot=bot), number=number)
    version.bot = bot
    return version


class BotVersionDetail(ApiView):
    """A version of a bot: its status (pending, validating, ready, rejected) and the
    validation report. Its owner and staff only."""

    permission_classes = [IsAuthenticated, permissions.OwnerOrStaffReads]
    serializer_class = VersionDetailSerializer

    def get(self, request: Request, pk: int, number: int) -> Response:
        return Response(VersionDetailSerializer(_version(request, self, pk, number)).data)


class VersionTry(ApiView):
    """Try a ready version of yours: a practice run of 1 to 10 deals against built-in bots
    on a worker, in the sandbox (``POST``, its owner); your practice runs of the version,
    newest first (``GET``; staff see them once over). Practice runs are never rated and no
    list shows them (docs/members.md, "Try it")."""

    permission_classes = [IsAuthenticated, permissions.OwnerOrStaffReads]
    serializer_class = PracticeSerializer

    @extend_schema(responses=PracticeSerializer(many=True), operation_id="bots_versions_try_list")
    def get(self, request: Request, pk: int, number: int) -> Response:
        version = _version(request, self, pk, number)
        lines = member_selectors.version_practices(user=request.user, version=version)
        # A page of them, as every list of the API (and as its schema says): a version may
        # have been tried hundreds of times.
        paginator = self.paginator
        assert paginator is not None
        shown: list[Any] = paginator.paginate_queryset(list(lines), request, view=self) or []  # type: ignore[arg-type]
        pages = [
            member_selectors.practice_page(
                user=request.user, practice_id=line.tournament.pk, results=False
            )
            for line in shown
        ]
        return paginator.get_paginated_response(PracticeSerializer(pages, many=True).data)

    @extend_schema(request=PracticeCreateSerializer, responses={201: PracticeSerializer})
    def post(self, request: Request, pk: int, number: int) -> Response:
        data = _validated(PracticeCreateSerializer, request.data)
        version = _version(request, self, pk, number)  # its owner only (403)
        practice = services.practice_create(owner=_user(request), version=version, **data)
        page = member_selectors.practice_page(
            user=request.user, practice_id=practice.pk, results=False
        )
        return Response(PracticeSerializer(page).data, status=status.HTTP_201_CREATED)


class PracticeDetail(ApiView):
    """A practice run: its state (``waiting``, ``playing``, ``finished``, ``failed``) and,
    once finished, each deal's id and points (replays: ``/api/v1/deals/{id}/``). Its author;
    staff once it is over; 404 for anyone else."""

    permission_classes = [IsAuthenticated]
    serializer_class = PracticeSerializer

    def get(self, request: Request, pk: int) -> Response:
        try:
            page = member_selectors.practice_page(user=request.user, practice_id=pk, results=False)
        except Http404:
            raise NotFound() from None
        return Response(PracticeSerializer(page).data)


class BinaryRenderer(BaseRenderer):
    """The code download; errors on this endpoint are still JSON."""

    media_type = "application/octet-stream"
    format = "bin"
    charset = None
    render_style = "binary"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> Any:
        if isinstance(data, bytes):
            return data
        return JSONRenderer().render(data)


class BotVersionCode(ApiView):
    """The uploaded file of a version, as uploaded. Its owner and staff only."""

    permission_classes = [IsAuthenticated, permissions.OwnerOrStaffReads]
    renderer_classes = [JSONRenderer, BinaryRenderer]

    @extend_schema(
        responses={(200, "application/octet-stream"): OpenApiResponse(description="The file.")}
    )
    def get(self, request: Request, pk: int, number: int) -> HttpResponse:
        version = _version(request, self, pk, number)
        if version.builtin:
            raise NotFound("a built-in bot has no uploaded code")
        content = selectors.bot_version_content(version=version)
        response = HttpResponse(content, content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition(version.filename, default="bot")
        response["X-Content-SHA256"] = version.sha256
        return response


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
        bot = _bot(pk)
        query = _validated(RatingHistoryFilterSerializer, request.query_params)
        family = ratings.preset_family(bot.game, query["preset"]) if "preset" in query else None
        return self.paginated(
            selectors.bot_rating_history(bot=bot, family=family), RatingHistorySerializer
        )


# ---------------------------------------------------------------------------------------------
# Tournaments
# ---------------------------------------------------------------------------------------------


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
        query = _validated(TournamentFilterSerializer, request.query_params)
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
        data = _validated(TournamentWriteSerializer, request.data)
        tournament = services.tournament_create(
            organiser=_user(request), settings=TournamentSettings(**data)
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
        data = _validated(EntryCreateSerializer, request.data)
        version = get_object_or_404(
            BotVersion.objects.select_related("bot").defer("content"), pk=data["version"]
        )
        if not permissions.owns_bot(request.user, version.bot):
            raise ApplicationError("you can only enter your own bots", code="not_owner")
        entry = services.entry_register(tournament=tournament, version=version, user=_user(request))
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
                return _immutable(HttpResponse(body, content_type="application/json"))
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
        return _immutable(HttpResponse(body, content_type="application/json"))


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
        query = _validated(TableFilterSerializer, request.query_params)
        tables = selectors.tournament_tables(tournament=tournament, round_number=query.get("round"))
        return self.paginated(tables, TableSerializer)


# ---------------------------------------------------------------------------------------------
# Tables and deals
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Rankings
# ---------------------------------------------------------------------------------------------


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


class NotFoundView(APIView):
    """Any other path under /api/v1/: a JSON 404."""

    permission_classes = [AllowAny]
    schema = None

    def dispatch_404(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise NotFound("no such endpoint")

    get = post = put = patch = delete = head = options = dispatch_404
