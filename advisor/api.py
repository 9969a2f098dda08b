"""REST endpoint of the advisor: POST /api/advisor/recommend (wired in infrawiki/api_urls.py).

Thin DRF view: the body is the advisor request of DESIGN.md, the answer the advisor response. Invalid
input raises advisor.validation.AdvisorInputError, which the API's exception handler turns into
HTTP 400 `{"error": ..., "hint": ...}`. Open to anonymous callers: it reads catalogs, writes nothing.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from advisor.services import recommend
from advisor.validation import AdvisorInputError


class AdviceRequestSerializer(serializers.Serializer):
    """Documents the request body for the OpenAPI schema; validation itself is advisor.validation's."""

    gpu = serializers.CharField(help_text="GPU model as nvidia-smi names it, e.g. A100-SXM4-40GB")
    gpu_count = serializers.IntegerField(required=False, default=1)
    cuda = serializers.CharField(required=False, allow_null=True, help_text="CUDA version the driver supports")
    model = serializers.CharField(help_text="Hugging Face model id")
    engine = serializers.CharField(required=False, allow_null=True)
    engine_version = serializers.CharField(required=False, allow_null=True)
    max_context = serializers.IntegerField(required=False, allow_null=True)
    workload = serializers.DictField(required=False, help_text="prompt_tokens, output_tokens, concurrency")
    sla = serializers.DictField(required=False, help_text="p95_ttft_ms, p95_tpot_ms, p95_latency_ms, min_throughput_tok_s")
    flags = serializers.DictField(required=False, help_text="engine flags already fixed")


class RecommendView(APIView):
    """Which engine, version and flags for this GPU, model, workload and SLA — with evidence."""

    permission_classes = [AllowAny]

    @extend_schema(
        tags=["advisor"], request=AdviceRequestSerializer, responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
        examples=[OpenApiExample("A100 + Llama 3.1 8B", value={
            "gpu": "A100-SXM4-40GB", "gpu_count": 1, "cuda": "12.2", "model": "meta-llama/Llama-3.1-8B-Instruct",
            "workload": {"prompt_tokens": 1024, "output_tokens": 256, "concurrency": 16},
            "sla": {"p95_latency_ms": 8000}})])
    def post(self, request):
        if not isinstance(request.data, dict):
            raise AdvisorInputError("the request body must be a JSON object", "send Content-Type: application/json")
        return Response(recommend(dict(request.data)))
