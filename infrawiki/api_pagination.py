"""Pagination for every API list: `?page=N&page_size=M` (at most 100 a page).

Used by DRF for every list endpoint (settings.REST_FRAMEWORK). A page past the end answers 404
through the API's error shape, with a hint naming the last page.
"""
from __future__ import annotations

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 100
