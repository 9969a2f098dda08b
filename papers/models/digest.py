"""Digest subscriptions and the record of every digest sent (or failed) to each subscriber.

Written by papers.digest.subscriptions (subscribe/confirm/unsubscribe/preferences) and papers.digest.services
(the weekly send); `next_digest_at` is the claim token: a sender takes a subscriber for a period
only by a conditional UPDATE on its old value, so two workers never send the same digest twice.
"""
from __future__ import annotations

import secrets

from django.contrib.postgres.fields import ArrayField
from django.db import models


def new_confirm_nonce() -> str:
    """The one-time part of a confirmation link: a new one with each confirmation email."""
    return secrets.token_urlsafe(12)


class Subscription(models.Model):
    """A person who gets the weekly digest, by email address (double opt-in)."""

    class Status(models.TextChoices):
        PENDING = "pending", "waiting for confirmation"
        ACTIVE = "active", "active"
        UNSUBSCRIBED = "unsubscribed", "unsubscribed"

    email = models.EmailField(unique=True, help_text="stored lower-cased")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING, db_index=True)
    topics = ArrayField(models.CharField(max_length=40), default=list, blank=True, help_text="empty = all topics")
    min_score = models.FloatField(default=0.0, help_text="only papers scoring at least this (0–10)")
    created_at = models.DateTimeField(auto_now_add=True)
    confirmation_sent_at = models.DateTimeField(null=True, blank=True, help_text="throttles resends to one address")
    confirmed_at = models.DateTimeField(null=True, blank=True)
    confirm_nonce = models.CharField(
        max_length=32, blank=True, default=new_confirm_nonce,
        help_text="in the latest confirmation link only; emptied when that link is used or the address unsubscribes",
    )
    unsubscribed_at = models.DateTimeField(null=True, blank=True)
    next_digest_at = models.DateTimeField(null=True, blank=True, db_index=True, help_text="due when <= now")
    last_digest_at = models.DateTimeField(null=True, blank=True, help_text="when the last digest was delivered")

    class Meta:
        ordering = ["email"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(min_score__gte=0) & models.Q(min_score__lte=10), name="subscription_min_score_0_10"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.email} ({self.status})"


class DigestDelivery(models.Model):
    """One attempt series at one subscriber's digest for one period: sent, empty, or failed."""

    class Status(models.TextChoices):
        SENT = "sent", "sent"
        EMPTY = "empty", "nothing new; not sent"
        FAILED = "failed", "failed; will be retried"
        GAVE_UP = "gave_up", "failed too often; skipped this period"

    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE, related_name="deliveries")
    period_start = models.DateTimeField(help_text="the next_digest_at value that was claimed")
    status = models.CharField(max_length=20, choices=Status.choices)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    paper_ids = models.JSONField(default=list, help_text="arXiv ids in the digest, in order")
    scores_since = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["subscription", "period_start"], name="one_delivery_per_period"),
        ]

    def __str__(self) -> str:
        return f"{self.subscription.email} {self.period_start:%Y-%m-%d}: {self.status}"
