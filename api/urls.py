"""URLs of the REST API, mounted at /api/v1/: the OpenAPI schema for now."""

from django.urls import URLPattern, URLResolver, path
from drf_spectacular.views import SpectacularAPIView

app_name = "api"

urlpatterns: list[URLPattern | URLResolver] = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
]
