"""One error shape for every 4xx answer of the API.

Every error is a JSON object with a single key, ``error``::

    {"error": {"code": "invalid", "message": "rounds: ensure this value is at least 1.",
               "fields": {"rounds": ["Ensure this value is at least 1."]}}}

``code``
    A short machine-readable reason (``invalid``, ``invalid_option``, ``not_authenticated``,
    ``permission_denied``, ``not_found``, ``throttled``, ``too_large``, or the code of the
    tournaments' :class:`~tournaments.errors.ApplicationError` such as ``version_not_ready``).
``message``
    One sentence for a person.
``fields``
    The input fields at fault, each with its messages (``{}`` when the error is not about one
    field). Nested fields are joined with dots (``options.target_score``).
``details``
    Only for some domain errors: what the domain said beyond the message (the allowed values
    of an option, the status a tournament is in...).

:func:`exception_handler` (``REST_FRAMEWORK["EXCEPTION_HANDLER"]``) turns DRF's exceptions,
Django's ``Http404``/``PermissionDenied``/``ValidationError``/oversized requests, the engine's
:class:`~games.errors.OptionError` and the domain's ``ApplicationError`` into that shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.core import exceptions as django_exceptions
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from games.errors import OptionError
from tournaments.errors import ApplicationError, NotAllowed

# Domain error codes that are not a plain 400 (everything else the domain refuses is a 400).
APPLICATION_STATUS: dict[str, int] = {
    "not_found": status.HTTP_404_NOT_FOUND,
    "not_owner": status.HTTP_403_FORBIDDEN,
    "signup_closed": status.HTTP_403_FORBIDDEN,
    "hidden": status.HTTP_403_FORBIDDEN,
    # The resource is not in a state that allows the request (now).
    "status": status.HTTP_409_CONFLICT,
    "registration": status.HTTP_409_CONFLICT,
    "too_few": status.HTTP_409_CONFLICT,
    "duplicate_entry": status.HTTP_409_CONFLICT,
    "one_entry_per_user": status.HTTP_409_CONFLICT,
    "entries": status.HTTP_409_CONFLICT,
    "too_large": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    # An author over their practice runs' limits (tournaments.services.practice).
    "practice_limit": status.HTTP_429_TOO_MANY_REQUESTS,
    # An author over their uploads' limits (tournaments.services.bots), an address over its
    # sign-ups' (api.accounts).
    "upload_limit": status.HTTP_429_TOO_MANY_REQUESTS,
    "signup_limit": status.HTTP_429_TOO_MANY_REQUESTS,
}


# Options the engine reports that are tournament settings in the API, not keys of ``options``.
_SETTINGS_NAMED_LIKE_OPTIONS = frozenset({"game", "preset", "deals_per_table", "table_size"})


class Hidden(exceptions.PermissionDenied):
    """A resource that exists but may not be shown yet (a table still being played)."""

    default_detail = "This is hidden until the table is finished."
    default_code = "hidden"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request is too large."
    default_code = "too_large"


def error_body(
    code: str,
    message: str,
    fields: Mapping[str, list[str]] | None = None,
    details: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The documented error body.

    >>> error_body("not_found", "Not found.")
    {'error': {'code': 'not_found', 'message': 'Not found.', 'fields': {}}}
    """
    error: dict[str, Any] = {"code": code, "message": message, "fields": dict(fields or {})}
    if details:
        error["details"] = dict(details)
    return {"error": error}


def _flatten(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation detail as ``{"a.b": [messages]}``."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value, name))
    elif isinstance(detail, list) and any(isinstance(item, Mapping | list) for item in detail):
        for index, value in enumerate(detail):
            out.update(_flatten(value, f"{prefix}.{index}" if prefix else str(index)))
    elif isinstance(detail, list):
        out.setdefault(prefix or "non_field_errors", []).extend(str(item) for item in detail)
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def _first_code(codes: Any) -> str:
    if isinstance(codes, str):
        return codes
    if isinstance(codes, Mapping):
        for value in codes.values():
            return _first_code(value)
    if isinstance(codes, list) and codes:
        return _first_code(codes[0])
    return "invalid"


def _validation_response(detail: Any, codes: Any) -> Response:
    fields = _flatten(detail)
    general = fields.pop("non_field_errors", None)
    if general:
        message = " ".join(general)
        # A serializer's own reason (``invalid_credentials``...) names the error.
        code = _first_code(codes.get("non_field_errors") if isinstance(codes, Mapping) else codes)
    else:
        message = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in fields.items())
        code = "invalid"
    return Response(
        error_body(code, message or "Invalid input.", fields), status=status.HTTP_400_BAD_REQUEST
    )


def _application_response(exc: ApplicationError) -> Response:
    code = exc.code or "invalid"
    extra = dict(exc.extra)
    fields: dict[str, list[str]] = {}
    field = extra.get("field")
    option = extra.get("option")
    if not field and isinstance(option, str) and option:
        # A rule option is a key of the request's ``options``, unless it is a setting of its own.
        field = option if option in _SETTINGS_NAMED_LIKE_OPTIONS else f"options.{option}"
    if isinstance(field, str) and field:
        fields[field] = [exc.message]
    return Response(
        error_body(code, exc.message, fields, extra),
        status=APPLICATION_STATUS.get(code, status.HTTP_400_BAD_REQUEST),
    )


def _option_response(exc: OptionError) -> Response:
    option = getattr(exc, "option", None) or "options"
    message = str(exc)
    return Response(
        error_body("invalid_option", message, {str(option): [message]}),
        status=status.HTTP_400_BAD_REQUEST,
    )


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """DRF's ``EXCEPTION_HANDLER``: every known error as :func:`error_body`; ``None`` (a 500)
    for anything else, which is a bug of the server."""
    response: Response | None
    if isinstance(exc, ApplicationError):
        response = _application_response(exc)
    elif isinstance(exc, OptionError):
        response = _option_response(exc)
    elif isinstance(exc, Http404 | django_exceptions.ObjectDoesNotExist):
        response = Response(error_body("not_found", "Not found."), status=404)
    elif isinstance(exc, django_exceptions.PermissionDenied):
        response = Response(
            error_body("permission_denied", str(exc) or "You may not do this."), status=403
        )
    elif isinstance(exc, django_exceptions.RequestDataTooBig):
        response = Response(error_body("too_large", str(exc)), status=413)
    elif isinstance(exc, django_exceptions.SuspiciousOperation | django_exceptions.BadRequest):
        response = Response(error_body("bad_request", str(exc) or "Bad request."), status=400)
    elif isinstance(exc, django_exceptions.ValidationError):
        detail = (
            exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        )
        response = _validation_response(detail, "invalid")
    elif isinstance(exc, exceptions.ValidationError):
        response = _validation_response(exc.detail, exc.get_codes())
    elif isinstance(exc, exceptions.APIException):
        code = _first_code(exc.get_codes())
        message = " ".join(_flatten(exc.detail).get("non_field_errors", [])) or str(exc.detail)
        response = Response(error_body(code, message), status=exc.status_code)
        auth_header = getattr(exc, "auth_header", None)
        if auth_header:
            response["WWW-Authenticate"] = auth_header
        wait = getattr(exc, "wait", None)
        if wait is not None:
            response["Retry-After"] = str(math.ceil(wait))
    else:
        return None
    # Imported here: rest_framework.views loads the parsers, which import this module.
    from rest_framework.views import set_rollback

    set_rollback()
    _render_as_json(context.get("request"))
    return response


def _render_as_json(request: Any) -> None:
    """An error is JSON, whatever the request accepted and the view renders otherwise (the
    code download's ``application/octet-stream``, the schema's YAML, the docs page's HTML).

    The view copies the request's renderer onto the response after the handler returns."""
    if request is not None:
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type


# Django's own error views, for what goes wrong before a view of the API runs (a request with
# a Host the site does not serve...) or outside any handler (a bug): the API's paths get the
# error shape too; every other path gets Django's pages. Named in config/urls.py.


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("bad_request", "Bad request."), status=400)
    return defaults.bad_request(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(error_body("not_found", "No such endpoint."), status=404)
    return defaults.page_not_found(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """templates/403.html, told whether the page is hidden for now (a table still playing) or
    not the member's to open (:class:`NotAllowed`): only the first is worth coming back to."""
    return render(
        request,
        "403.html",
        {"exception": str(exception), "not_allowed": isinstance(exception, NotAllowed)},
        status=403,
    )


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        message = "The server failed to answer; the error was logged."
        return JsonResponse(error_body("server_error", message), status=500)
    return defaults.server_error(request)
