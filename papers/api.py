"""REST endpoints of the papers app: papers, scores, repositories, the caller's digest subscription.

Thin DRF views: read through papers.selectors, write through the subscription
services; wired in infrawiki/api_urls.py under /api/.
"""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from papers import arxiv_ids, selectors
from papers.digest import subscriptions, tokens
from papers.models.scoring import Score
from papers.serializers import (
    PaperDetailSerializer,
    PaperListSerializer,
    RepoSerializer,
    ScoreSerializer,
    SubscriptionSerializer,
)


class PaperFilters(serializers.Serializer):
    q = serializers.CharField(required=False, max_length=200, help_text="words in the title or abstract, or an arXiv id")
    status = serializers.ChoiceField(choices=selectors.PAPER_STATUSES, required=False)
    category = serializers.CharField(required=False, max_length=40, help_text="arXiv category, e.g. cs.DC")
    min_score = serializers.FloatField(required=False, min_value=0, max_value=10)
    ordering = serializers.ChoiceField(
        choices=[o for key in selectors.PAPER_ORDERS for o in (key, f"-{key}")], required=False, default="-published")


@extend_schema(tags=["papers"])
class PaperViewSet(viewsets.ReadOnlyModelViewSet):
    """Papers, newest first, with their latest score; one paper with sections, score and repositories."""

    lookup_field = "arxiv_id"
    lookup_value_regex = arxiv_ids.URL_PATTERN

    def get_serializer_class(self):
        return PaperDetailSerializer if self.action == "retrieve" else PaperListSerializer

    def get_queryset(self):
        filters = PaperFilters(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        f = filters.validated_data
        return selectors.paper_rows(search=f.get("q"), status=f.get("status"), category=f.get("category"),
                                    min_score=f.get("min_score"), order=f["ordering"])

    def get_object(self):
        paper = selectors.paper_page(self.kwargs["arxiv_id"])
        if paper is None:
            raise Http404
        return paper

    @extend_schema(parameters=[PaperFilters])
    def list(self, request, *args, **kwargs):
        """A page of papers; the same page is served from the cache for API_LIST_CACHE_S seconds.

        The page is the same for every caller (public data), so the key is the full URL (hashed: any
        length, a fixed-size key). Only valid
        requests reach the cache (bad filters raise first); throttles apply before either.
        """
        seconds = settings.API_LIST_CACHE_S
        key = "api:papers:" + hashlib.sha256(request.build_absolute_uri().encode()).hexdigest()
        data = cache.get(key) if seconds else None
        if data is None:
            data = super().list(request, *args, **kwargs).data
            if seconds:
                cache.set(key, data, seconds)
        return Response(data)


class ScoreFilters(serializers.Serializer):
    tier = serializers.ChoiceField(choices=Score.Tier.choices, required=False)
    quadrant = serializers.ChoiceField(choices=Score.Quadrant.choices, required=False)
    min_total = serializers.FloatField(required=False, min_value=0, max_value=10)


@extend_schema(tags=["scores"])
class ScoreViewSet(viewsets.ReadOnlyModelViewSet):
    """Latest scorecards, best first; `/api/scores/<arXiv id>/` is one paper's scorecard."""

    serializer_class = ScoreSerializer
    lookup_field = "paper__arxiv_id"
    lookup_url_kwarg = "arxiv_id"
    lookup_value_regex = arxiv_ids.URL_PATTERN

    def get_queryset(self):
        filters = ScoreFilters(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.latest_scores(**filters.validated_data)

    @extend_schema(parameters=[ScoreFilters])
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)


@extend_schema(tags=["repositories"])
class RepoViewSet(viewsets.ReadOnlyModelViewSet):
    """GitHub repositories linked to papers, with their health signals."""

    serializer_class = RepoSerializer
    lookup_field = "full_name"
    lookup_value_regex = r"[^/]+/[^/]+"
    queryset = selectors.repo_rows()



class SubscribeSerializer(serializers.Serializer):
    topics = serializers.ListField(child=serializers.CharField(max_length=40), required=False, default=list,
                                   max_length=50, help_text="empty = all topics")
    min_score = serializers.FloatField(required=False, default=0.0, min_value=0, max_value=10)


@extend_schema(tags=["digest"])
class MySubscriptionView(APIView):
    """The caller's own weekly-digest subscription (the one for their account's email address).

    POST subscribes (a confirmation email goes out; the subscription stays pending until its link is
    opened), PATCH changes topics and minimum score, DELETE unsubscribes.
    """

    permission_classes = [IsAuthenticated]
    serializer_class = SubscriptionSerializer

    def _email(self, request) -> str:
        email = (request.user.email or "").strip()
        if not email:
            raise ValidationError({"email": ["Your account has no email address; an admin can add one."]})
        return email

    def _mine(self, request):
        self._email(request)
        subscription = selectors.subscription_for_user(request.user)
        if subscription is None:
            raise NotFound("You have no digest subscription; POST here to subscribe.")
        return subscription

    def get(self, request):
        return Response(SubscriptionSerializer(self._mine(request)).data)

    @extend_schema(request=SubscribeSerializer, responses={201: SubscriptionSerializer})
    def post(self, request):
        body = SubscribeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        subscription = self._call(subscriptions.subscribe, self._email(request), **body.validated_data)
        return Response(SubscriptionSerializer(subscription).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=SubscribeSerializer, responses=SubscriptionSerializer)
    def patch(self, request):
        subscription = self._mine(request)
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["Send a JSON object with topics and/or min_score."]})
        body = SubscribeSerializer(data={"topics": subscription.topics, "min_score": subscription.min_score,
                                         **request.data})
        body.is_valid(raise_exception=True)
        self._call(subscriptions.update_preferences, subscription, **body.validated_data)
        return Response(SubscriptionSerializer(subscription).data)

    @extend_schema(responses={200: SubscriptionSerializer})
    def delete(self, request):
        subscription = self._mine(request)
        subscription = self._call(subscriptions.unsubscribe, tokens.make_token(subscription, "manage"))
        return Response(SubscriptionSerializer(subscription).data)

    @staticmethod
    def _call(service, *args, **kwargs):
        try:
            return service(*args, **kwargs)
        except tokens.SubscriptionError as exc:
            raise ValidationError({"subscription": [str(exc)]}) from exc
