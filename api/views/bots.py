"""Views of bots, their versions, their code and practice runs."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import permissions
from api.downloads import content_disposition
from api.parsers import BotUploadParser
from api.serializers.bots import (
    BotCreateSerializer,
    BotSerializer,
    PracticeCreateSerializer,
    PracticeSerializer,
    VersionDetailSerializer,
    VersionSerializer,
    VersionUploadSerializer,
)
from api.views.base import ApiView, request_user, validated
from tournaments import member_selectors, selectors, services
from tournaments.models import Bot, BotVersion


def bot_or_404(pk: int) -> Bot:
    return get_object_or_404(Bot.objects.select_related("owner"), pk=pk)


class BotList(ApiView):
    """Your bots (GET), or a new bot (POST): a name and a game; its code comes in versions."""

    permission_classes = [IsAuthenticated]
    serializer_class = BotSerializer

    @extend_schema(responses=BotSerializer(many=True), operation_id="bots_list")
    def get(self, request: Request) -> Response:
        return self.paginated(selectors.bot_list(owner_id=request_user(request).pk), BotSerializer)

    @extend_schema(request=BotCreateSerializer, responses={201: BotSerializer})
    def post(self, request: Request) -> Response:
        data = validated(BotCreateSerializer, request.data)
        bot = services.bot_create(owner=request_user(request), **data)
        return Response(BotSerializer(bot).data, status=status.HTTP_201_CREATED)


class BotDetail(ApiView):
    """A bot's public profile."""

    permission_classes = [AllowAny]
    serializer_class = BotSerializer

    def get(self, request: Request, pk: int) -> Response:
        return Response(BotSerializer(bot_or_404(pk)).data)


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
        bot = bot_or_404(pk)
        self.check_object_permissions(request, bot)
        return self.paginated(selectors.bot_versions(bot=bot), VersionSerializer)

    @extend_schema(request=VersionUploadSerializer, responses={201: VersionDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        bot = bot_or_404(pk)
        self.check_object_permissions(request, bot)
        upload = validated(VersionUploadSerializer, request.data)["file"]
        version = services.bot_version_create(
            bot=bot, content=upload.read(), filename=upload.name or ""
        )
        return Response(VersionDetailSerializer(version).data, status=status.HTTP_201_CREATED)


def _version(request: Request, view: APIView, pk: int, number: int) -> BotVersion:
    bot = bot_or_404(pk)
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
        data = validated(PracticeCreateSerializer, request.data)
        version = _version(request, self, pk, number)  # its owner only (403)
        practice = services.practice_create(owner=request_user(request), version=version, **data)
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
