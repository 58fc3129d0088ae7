"""URLs of Tapis: the home page, /healthz, the admin and the REST API under /api/v1/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from config.health import healthz
from tournaments.pages.views import home

# Errors raised before or outside a view: JSON under /api/, Django's pages elsewhere.
handler400 = "api.exceptions.bad_request"
handler500 = "api.exceptions.server_error"

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("", include("tournaments.urls")),
]
