"""REST endpoint of the advisor: POST /api/advisor/recommend (wired in infrawiki/api_urls.py).

Thin DRF view: the body is the advisor request of DESIGN.md (its schema is `advisor.request.AdviceRequest`,
the same model that validates it), the answer the advisor response. Invalid input raises
advisor.validation.AdvisorInputError, which the API's exception handler turns into
HTTP 400 `{"error": ..., "hint": ...}`. Open to anonymous callers: it reads catalogs, writes nothing.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor.request import openapi_schema
from advisor.services import recommend
from advisor.validation import AdvisorInputError


class RecommendView(APIView):
    """Which engine, version and flags for this GPU, model, workload and SLA — with evidence."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["advisor"], request={"application/json": openapi_schema()},
                   responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise AdvisorInputError("the request body must be a JSON object", "send Content-Type: application/json")
        return Response(recommend(dict(request.data)))
