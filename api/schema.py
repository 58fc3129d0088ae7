"""OpenAPI 3 schema of the API (drf-spectacular): every operation documents its errors.

The error body (:mod:`api.exceptions`) is the component ``Error``; :class:`AutoSchema` adds it
to every operation for the 4xx statuses the API answers, so that a client (and the
schemathesis run of the test suite) can rely on the schema for every answer it gets.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse

ERROR_REF = {"$ref": "#/components/schemas/Error"}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every 4xx answer of the API: one error.",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "A short machine-readable reason.",
                    "example": "invalid",
                },
                "message": {"type": "string", "description": "One sentence for a person."},
                "fields": {
                    "type": "object",
                    "description": "The input fields at fault, each with its messages.",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
                "details": {
                    "type": "object",
                    "description": "What the domain said beyond the message (some errors only).",
                    "additionalProperties": True,
                },
            },
            "required": ["code", "message", "fields"],
        }
    },
    "required": ["error"],
}

# Statuses every operation may answer, and those of operations with a body or parameters.
_ALWAYS = {
    "401": "Not authenticated (a token or a session is needed).",
    "403": "Not allowed, or hidden while the table is being played.",
    "404": "Not found.",
    "405": "Method not allowed.",
    "406": "Not acceptable (the API answers JSON).",
    "414": "The URL is too long.",
    "429": "Too many requests: wait Retry-After seconds.",
}
_WITH_INPUT = {
    "400": "Bad input: see fields.",
    "409": "The resource is not in a state that allows this.",
    "413": "The upload is too large.",
    "415": "Unsupported media type.",
}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's schema, with the error responses of every operation."""

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        statuses = dict(_ALWAYS)
        # Query parameters (pagination, filters) can be wrong too: 400 for every operation.
        statuses.update(_WITH_INPUT)
        for status, description in statuses.items():
            if status not in responses:
                responses[status] = self._get_response_for_code(
                    OpenApiResponse(response=ERROR_REF, description=description),
                    status,
                    direction=direction,
                )
        return responses


def add_error_component(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: the ``Error`` component the responses refer to."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    return result
