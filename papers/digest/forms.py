"""Forms of the digest pages: subscribe (address + preferences) and settings (preferences only)."""
from __future__ import annotations

from django import forms

from papers.scoring.topics import topic_choices


class PreferencesForm(forms.Form):
    topics = forms.MultipleChoiceField(
        choices=topic_choices, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Leave all unticked to get every topic.",
    )
    min_score = forms.FloatField(
        label="Minimum score (0–10)", min_value=0, max_value=10, initial=0,
        help_text="Only papers scoring at least this; below 6 a paper is marked 'to verify'.",
    )


class SubscribeForm(PreferencesForm):
    email = forms.EmailField(label="Email address", max_length=254)

    field_order = ["email", "topics", "min_score"]
