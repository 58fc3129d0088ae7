"""The base of the API's views and the helpers they share.

A view validates the input, calls one service or selector and serializes the output. Every
list is paginated (:class:`api.pagination.Pagination`); every error has the shape of
:mod:`api.exceptions`; who may do what is in :mod:`api.permissions`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.http import HttpResponseBase
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from api import caching

ResponseT = TypeVar("ResponseT", bound=HttpResponseBase)


def request_user(request: Request) -> User:
    """The logged-in user (the view's permissions have made sure there is one)."""
    user = request.user
    if not isinstance(user, User):
        raise NotAuthenticated()
    return user


def validated(serializer_class: type[BaseSerializer[Any]], data: Any) -> dict[str, Any]:
    """The input ``data`` as ``serializer_class`` validated it (a 400 if it is wrong)."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def immutable(response: ResponseT, *, private: bool = False) -> ResponseT:
    """Mark ``response`` as one that will never change.

    Any client or proxy may keep it (a replay, final standings); only the client if it is
    ``private`` (a practice run's: its author's and staff's only).
    """
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


class NotFoundView(APIView):
    """Any other path under /api/v1/: a JSON 404."""

    permission_classes = [AllowAny]
    schema = None

    def dispatch_404(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise NotFound("no such endpoint")

    get = post = put = patch = delete = head = options = dispatch_404
