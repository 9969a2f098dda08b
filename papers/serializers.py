"""JSON shapes of papers, scores, repositories and subscriptions for the REST API (papers/api.py).

Read-only except the subscription preferences; extracted text goes out as
plain JSON strings (clients must escape it, as the pages do).
"""
from __future__ import annotations

from rest_framework import serializers

from papers.models import CodeRepo, Paper, Section
from papers.models.digest import Subscription
from papers.models.scoring import Score


class PaperListSerializer(serializers.ModelSerializer):
    score = serializers.FloatField(source="score_total", read_only=True, allow_null=True,
                                   help_text="latest total score 0–10, null when unscored")
    tier = serializers.CharField(source="score_tier", read_only=True, allow_null=True)

    class Meta:
        model = Paper
        fields = ["arxiv_id", "version", "title", "published", "primary_category", "status", "score", "tier"]

    def to_representation(self, paper: Paper) -> dict:
        """The same fields as declared, built directly: the busiest endpoint skips DRF's per-field walk."""
        return {
            "arxiv_id": paper.arxiv_id, "version": paper.version, "title": paper.title,
            "published": paper.published.isoformat().replace("+00:00", "Z") if paper.published else None,
            "primary_category": paper.primary_category, "status": paper.status,
            "score": paper.score_total, "tier": paper.score_tier,
        }


class SectionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Section
        fields = ["order", "number", "title", "page_start", "page_end", "text"]


class RepoSerializer(serializers.ModelSerializer):
    class Meta:
        model = CodeRepo
        fields = ["full_name", "html_url", "description", "stars", "forks", "open_issues", "pushed_at",
                  "license_spdx", "archived", "has_ci", "fetched_at", "failure_reason"]


class ScoreSerializer(serializers.ModelSerializer):
    paper = serializers.SlugRelatedField(slug_field="arxiv_id", read_only=True)

    class Meta:
        model = Score
        fields = ["paper", "total", "tier", "code_availability", "experimental_realism", "parameter_transparency",
                  "community_feedback", "evidence", "screening", "production_value", "implementation_cost",
                  "quadrant", "value_matrix", "flags", "topics", "scored_at"]


class PaperDetailSerializer(serializers.ModelSerializer):
    authors = serializers.ListField(source="author_names", child=serializers.CharField(), read_only=True)
    sections = SectionSerializer(source="section_list", many=True, read_only=True)
    repositories = RepoSerializer(source="repo_list", many=True, read_only=True)
    score = ScoreSerializer(source="latest_score", read_only=True, allow_null=True)

    class Meta:
        model = Paper
        fields = ["arxiv_id", "version", "title", "abstract", "authors", "published", "updated", "primary_category",
                  "categories", "pdf_url", "code_urls", "page_count", "environment", "status", "failure_stage",
                  "failure_reason", "score", "repositories", "sections"]


class SubscriptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Subscription
        fields = ["email", "status", "topics", "min_score", "confirmed_at", "last_digest_at"]
        read_only_fields = ["email", "status", "confirmed_at", "last_digest_at"]
