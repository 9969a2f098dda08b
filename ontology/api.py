"""REST endpoints of the ontology: facts (filter; verify, reject, edit for editors), entities,
parameters (every value across papers, conflicts flagged), and hybrid search.

Thin DRF views: read through ontology.selectors, write through ontology.services;
wired in infrawiki/api_urls.py under /api/.
"""
from __future__ import annotations

import re

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from infrawiki.api_errors import error_body
from infrawiki.permissions import IsEditor, IsEditorOrReadOnly
from ontology import selectors, services
from ontology.schema import FactValidationError
from ontology.serializers import (
    EntityDetailSerializer,
    EntitySerializer,
    FactDetailSerializer,
    FactEditSerializer,
    FactFilters,
    FactSerializer,
    ParameterDetailSerializer,
    ParameterSerializer,
    ReviewSerializer,
    SearchQuerySerializer,
    SearchResponseSerializer,
)

IF_MATCH = OpenApiParameter("If-Match", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False,
                            description='the ETag you read, e.g. "3": refused with 412 once the fact moved on')
WRITE_RESPONSES = {
    200: FactDetailSerializer,
    409: OpenApiResponse(description="`version` is not the fact's: detail.current is the fact as it is now"),
    412: OpenApiResponse(description="If-Match is not the fact's ETag: detail.current is the fact as it is now"),
}


@extend_schema(tags=["facts"])
class FactViewSet(viewsets.GenericViewSet):
    """Facts with their evidence; editors verify, reject and edit them (each change is a revision)."""

    permission_classes = [IsEditorOrReadOnly]
    serializer_class = FactSerializer
    lookup_value_regex = r"[0-9]{1,18}"  # fits a bigint: anything else is a 404, not a database error

    def get_queryset(self):
        filters = FactFilters(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.fact_rows(**filters.validated_data)

    def get_object(self):
        fact = selectors.fact_with_history(int(self.kwargs["pk"]))
        if fact is None:
            raise Http404
        return fact

    @extend_schema(parameters=[FactFilters])
    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(FactSerializer(page, many=True).data)

    @extend_schema(responses=FactDetailSerializer)
    def retrieve(self, request, pk=None):
        return self._current(self.get_object())

    @extend_schema(request=FactEditSerializer, responses=WRITE_RESPONSES, parameters=[IF_MATCH])
    def partial_update(self, request, pk=None):
        """Edit a fact (editors): send only the fields to change, and a note. Send the version you read
        (If-Match: its ETag, or `version`) and a change made since is never overwritten: 412 / 409."""
        fact = self.get_object()
        edit = FactEditSerializer(data=request.data)
        edit.is_valid(raise_exception=True)
        changes = dict(edit.validated_data)
        note = changes.pop("note", "")
        body_version = changes.pop("version", None)
        try:
            return self._conditional(request, body_version, lambda expected: services.edit_fact(
                fact, user=request.user, changes=changes, note=note, expected_version=expected))
        except FactValidationError as exc:
            raise ValidationError({field: [message] for field, message in exc.errors}) from exc

    @extend_schema(request=ReviewSerializer, responses=WRITE_RESPONSES, parameters=[IF_MATCH])
    @action(detail=True, methods=["post"], permission_classes=[IsEditor])
    def verify(self, request, pk=None):
        """Mark a fact verified: its quote supports it (editors). If-Match / `version` as for an edit."""
        return self._review(request, services.verify_fact)

    @extend_schema(request=ReviewSerializer, responses=WRITE_RESPONSES, parameters=[IF_MATCH])
    @action(detail=True, methods=["post"], permission_classes=[IsEditor])
    def reject(self, request, pk=None):
        """Mark a fact rejected: its quote does not support it (editors). If-Match / `version` as for an edit."""
        return self._review(request, services.reject_fact)

    def _review(self, request, service) -> Response:
        fact = self.get_object()
        review = ReviewSerializer(data=request.data)
        review.is_valid(raise_exception=True)
        note = review.validated_data.get("note", "")
        return self._conditional(request, review.validated_data.get("version"),
                                 lambda expected: service(fact, user=request.user, note=note, expected_version=expected))

    def _current(self, fact) -> Response:
        """The fact with its history, and its version as the ETag."""
        fact = selectors.fact_with_history(fact.pk)
        return Response(FactDetailSerializer(fact).data, headers={"ETag": etag(fact.version)})

    def _conditional(self, request, body_version: int | None, write) -> Response:
        """Run `write(expected_version)`; a stale version answers the current fact instead of writing.

        Without If-Match and `version` the write applies to the fact as it is now (tools that send
        only the fields they change lose nobody's other fields). If-Match wins over `version`.
        """
        header = request.headers.get("If-Match")
        expected = if_match_version(header) if header is not None else body_version
        try:
            fact = write(expected)
        except services.StaleFact as exc:
            precondition = header is not None
            current = FactSerializer(exc.current).data
            return Response(
                error_body("precondition failed" if precondition else "edit conflict",
                           {"your_version": exc.expected, "current": current},
                           f"Someone changed this fact since you read it (now version {exc.current.version}). "
                           f"Apply your change to the current fact in detail.current and send it again with "
                           f"If-Match: {etag(exc.current.version)}."),
                status=status.HTTP_412_PRECONDITION_FAILED if precondition else status.HTTP_409_CONFLICT,
                headers={"ETag": etag(exc.current.version)})
        return self._current(fact)


def etag(version: int) -> str:
    """A fact's ETag: its version, quoted (RFC 9110 strong validator)."""
    return f'"{version}"'


_VERSION_TAG = re.compile(r"[0-9]{1,10}")  # ASCII digits, short: a tag this API gave out (Fact.version is an integer)


def if_match_version(header: str) -> int | None:
    """The version an If-Match header names: None for `*` (any), 0 (matches no fact) when it names
    none this API gave out or several, so the write is refused as stale rather than guessed at."""
    tags = [tag.strip().removeprefix("W/").strip('"') for tag in header.split(",") if tag.strip()]
    if "*" in tags:
        return None
    versions = {int(tag) for tag in tags if _VERSION_TAG.fullmatch(tag)}
    return versions.pop() if len(versions) == 1 and len(tags) == 1 else 0


@extend_schema(tags=["entities"])
class EntityViewSet(viewsets.ReadOnlyModelViewSet):
    """Named things the facts are about (engines, techniques, GPUs, models); one with its wiki page."""

    lookup_field = "key"
    lookup_value_regex = r".+"  # a key is a lower-cased subject, which may hold a slash ("vllm/sglang")
    serializer_class = EntitySerializer

    def get_queryset(self):
        return selectors.entity_rows()

    @extend_schema(responses=EntityDetailSerializer)
    def retrieve(self, request, key=None):
        wiki = selectors.entity_wiki(key)
        if wiki is None:
            raise Http404
        return Response(EntityDetailSerializer(wiki).data)


@extend_schema(tags=["parameters"])
class ParameterViewSet(viewsets.GenericViewSet):
    """Parameters the papers report; one parameter's values across papers, disagreements listed."""

    serializer_class = ParameterSerializer
    lookup_field = "name"
    lookup_value_regex = r"[^/]+"

    def list(self, request):
        page = self.paginate_queryset(selectors.parameter_index())
        return self.get_paginated_response(ParameterSerializer(page, many=True).data)

    @extend_schema(responses=ParameterDetailSerializer)
    def retrieve(self, request, name=None):
        wiki = selectors.parameter_wiki(name)
        if not wiki["facts"]:
            raise Http404
        return Response(ParameterDetailSerializer(wiki).data)


@extend_schema(tags=["search"])
class SearchView(APIView):
    """Hybrid (keyword + semantic) search over facts, sections and papers, best first."""

    @extend_schema(parameters=[SearchQuerySerializer], responses=SearchResponseSerializer)
    def get(self, request):
        query = SearchQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        types = tuple(sorted(q.get("type") or ())) or ("fact", "section", "paper")
        results = selectors.hybrid_search(q["q"], limit=q["limit"], types=types)
        return Response(SearchResponseSerializer({"results": results}).data)
