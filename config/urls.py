"""URLs of Tapis: the home page, /healthz, the admin and the REST API under /api/v1/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path

from api.views.base import NotFoundView
from config.health import healthz
from tournaments.pages.views import home

# Errors raised before or outside a view: JSON under /api/, Django's pages elsewhere.
handler400 = "api.exceptions.bad_request"
handler403 = "api.exceptions.permission_denied"
handler404 = "api.exceptions.not_found"
handler500 = "api.exceptions.server_error"

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    # Any other path under /api/ (/api/v2/..., /api//v1/...): the API's JSON 404, throttled.
    re_path(r"^api/", NotFoundView.as_view(), name="api-not-found"),
    path("", include("tournaments.urls")),
]
