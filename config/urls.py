"""URLs of Tapis: the home page, /healthz, the admin and the REST API under /api/v1/."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView

from config.health import healthz

# Errors raised before or outside a view: JSON under /api/, Django's pages elsewhere.
handler400 = "api.exceptions.bad_request"
handler500 = "api.exceptions.server_error"

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("", include("tournaments.urls")),
]
