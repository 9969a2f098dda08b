"""Paper scorecards: one row per distinct set of scoring inputs, the newest flagged `is_latest`.

Written only by papers.scoring.services.score_paper (after extraction, after a GitHub crawl, or by
`manage.py score_papers`); read by the digest, the UI and the API. Keeping old rows gives the
history of how a paper's score moved as its repository and facts changed.
"""
from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models


class Score(models.Model):
    """A 0–10 scorecard of a paper, every sub-score with the evidence behind it."""

    class Tier(models.TextChoices):
        RECOMMENDED = "recommended", "recommended"
        TO_VERIFY = "to_verify", "to verify"

    class Source(models.TextChoices):
        COMPUTED = "computed", "computed here from the paper's text"
        IMPORTED = "imported", "imported with the paper's knowledge (a pack or another instance)"

    class Quadrant(models.TextChoices):
        QUICK_WIN = "quick_win", "quick win (high value, low cost)"
        MAJOR_PROJECT = "major_project", "major project (high value, high cost)"
        FILL_IN = "fill_in", "fill-in (low value, low cost)"
        THANKLESS = "thankless", "thankless (low value, high cost)"

    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="scores")
    total = models.FloatField(help_text="0–10, the sum of the four sub-scores")
    code_availability = models.FloatField(help_text="0–3")
    experimental_realism = models.FloatField(help_text="0–3")
    parameter_transparency = models.FloatField(help_text="0–2")
    community_feedback = models.FloatField(help_text="0–2")
    tier = models.CharField(max_length=20, choices=Tier.choices)
    evidence = models.JSONField(default=dict, help_text="sub-score name -> list of {rule, points, evidence}")
    screening = models.JSONField(default=dict, help_text="question -> {answer: yes|no|unknown, evidence}")
    production_value = models.FloatField(help_text="value-matrix axis, 0–5")
    implementation_cost = models.FloatField(help_text="value-matrix axis, 0–5")
    quadrant = models.CharField(max_length=20, choices=Quadrant.choices)
    value_matrix = models.JSONField(default=dict, help_text="reasons behind both axes")
    flags = models.JSONField(default=list, help_text="list of {code, detail}")
    topics = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    fingerprint = models.CharField(max_length=64, help_text="sha256 of the inputs this row was computed from")
    is_latest = models.BooleanField(default=True, db_index=True)
    scored_at = models.DateTimeField(help_text="the 'now' the time-dependent rules used")
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.COMPUTED,
                              help_text="imported scores stand until this instance reads the paper's PDF itself")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["paper"], condition=models.Q(is_latest=True), name="one_latest_score_per_paper"
            ),
            models.CheckConstraint(condition=models.Q(total__gte=0) & models.Q(total__lte=10), name="score_total_0_10"),
        ]
        indexes = [models.Index(fields=["is_latest", "-total"], name="score_latest_total")]

    def __str__(self) -> str:
        return f"{self.paper_id}: {self.total:.1f}/10 ({self.tier})"
