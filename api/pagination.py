"""Pagination of every list of the API: ``?page=N`` and ``?page_size=M`` (at most 200)."""

from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    """Pages of 50 items by default: ``{"count", "next", "previous", "results"}``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
