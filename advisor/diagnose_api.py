"""REST endpoint of diagnose: POST /api/diagnose with {"query": "symptom or error message"}.

Thin DRF view over advisor.diagnose (a pasted engine error comes back fix first: findings of kind
"known_failure" whose actions carry direction, value, arithmetic and source, "named_fix" for the
settings the message itself asks to change, "quantity" for the flags its comparison of quantities moves and
"suspect" for the features to rule out after a crash that names no cause); bad input is answered 400 `{"error", "hint"}` by the API's
exception handler. Open to anonymous callers: it reads, writes nothing.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor.diagnose import DiagnoseInputError, diagnose


class DiagnoseRequestSerializer(serializers.Serializer):
    """Documents the body for the OpenAPI schema; advisor.diagnose validates it."""

    query = serializers.CharField(help_text="a symptom in plain words or an error message (at most 2000 characters)")


class DiagnoseView(APIView):
    """What a production symptom points at: techniques, engine flags, paper evidence, GitHub reports."""

    permission_classes = [AllowAny]

    @extend_schema(tags=["advisor"], request=DiagnoseRequestSerializer,
                   responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
                   examples=[OpenApiExample("OOM", value={"query": "CUDA out of memory with many concurrent requests"}),
                             OpenApiExample("pasted error", value={"query": (
                                 "ValueError: The model's max seq len (4096) is larger than the maximum number of "
                                 "tokens that can be stored in KV cache (3664).")})])
    def post(self, request: Request) -> Response:
        body = request.data if isinstance(request.data, dict) else None
        if body is None or not isinstance(body.get("query"), str):
            raise DiagnoseInputError("send a JSON object with a `query` string",
                                     '{"query": "requests keep getting preempted under load"}')
        return Response(diagnose(body["query"]))
