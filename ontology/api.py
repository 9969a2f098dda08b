"""REST endpoints of the ontology: facts (filter; verify, reject, edit for editors), entities,
parameters (every value across papers, conflicts flagged), and hybrid search.

Thin DRF views: read through ontology.selectors, write through ontology.services;
wired in infrawiki/api_urls.py under /api/.
"""
from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

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
        return Response(FactDetailSerializer(self.get_object()).data)

    @extend_schema(request=FactEditSerializer, responses=FactDetailSerializer)
    def partial_update(self, request, pk=None):
        """Edit a fact (editors): send only the fields to change, and a note."""
        fact = self.get_object()
        edit = FactEditSerializer(data=request.data)
        edit.is_valid(raise_exception=True)
        changes = dict(edit.validated_data)
        note = changes.pop("note", "")
        try:
            services.edit_fact(fact, user=request.user, changes=changes, note=note)
        except FactValidationError as exc:
            raise ValidationError({field: [message] for field, message in exc.errors}) from exc
        return Response(FactDetailSerializer(self.get_object()).data)

    @extend_schema(request=ReviewSerializer, responses=FactDetailSerializer)
    @action(detail=True, methods=["post"], permission_classes=[IsEditor])
    def verify(self, request, pk=None):
        """Mark a fact verified: its quote supports it (editors)."""
        return self._review(request, services.verify_fact)

    @extend_schema(request=ReviewSerializer, responses=FactDetailSerializer)
    @action(detail=True, methods=["post"], permission_classes=[IsEditor])
    def reject(self, request, pk=None):
        """Mark a fact rejected: its quote does not support it (editors)."""
        return self._review(request, services.reject_fact)

    def _review(self, request, service) -> Response:
        fact = self.get_object()
        review = ReviewSerializer(data=request.data)
        review.is_valid(raise_exception=True)
        service(fact, user=request.user, note=review.validated_data.get("note", ""))
        return Response(FactDetailSerializer(self.get_object()).data, status=status.HTTP_200_OK)


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
