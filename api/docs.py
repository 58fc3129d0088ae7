"""The views serving the OpenAPI schema (:mod:`api.schema`) and Swagger UI.

The schema has one version (``SPECTACULAR_SETTINGS["VERSION"]``) in one language: these views
ignore drf-spectacular's ``?version=`` and ``?lang=`` parameters, which went into a header and
a translation (a 500 for ``?version=%00``, a parameter of the client's in
``Content-Disposition``). Swagger UI's files come from drf-spectacular-sidecar, served by the
service itself (whitenoise): no third-party script runs on the service's origin.

Kept apart from :mod:`api.schema`, which drf-spectacular imports while its views load.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.request import Request
from rest_framework.response import Response

from api.downloads import content_disposition


class SchemaView(SpectacularAPIView):
    """The OpenAPI document, always of the API's one version (YAML, or JSON with
    ``?format=json``)."""

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        version = spectacular_settings.VERSION
        generator = self.generator_class(urlconf=self.urlconf)
        response = Response(generator.get_schema(request=request, public=self.serve_public))
        renderer = self.perform_content_negotiation(request, force=True)[0]
        name = f"{spectacular_settings.TITLE} ({version}).{renderer.format}"
        response["Content-Disposition"] = content_disposition(name, inline=True)
        return response


class DocsView(SpectacularSwaggerView):
    """Swagger UI, from the files of drf-spectacular-sidecar served by the service (no CDN),
    on the schema of :class:`SchemaView`."""

    url_name = "api:schema"

    def _get_schema_url(self, request: Request) -> str:
        return reverse(self.url_name)

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        """drf-spectacular's page, with its language said (axe: html-has-lang): its template
        writes a bare ``<html>``, outside any block an extending template could change."""
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code == 200 and hasattr(response, "render"):
            response.render()
            response.content = response.content.replace(b"<html>", b'<html lang="en">', 1)
        return response
