"""JSON shapes of facts, revisions, entities, parameters and search results for the REST API.

Used by ontology/api.py. `FactEditSerializer` lists the only fields an
editor may change; everything else about a fact is the extractor's record.
"""
from __future__ import annotations

from rest_framework import serializers

from ontology.models import Entity, Fact, FactKind, FactRevision
from ontology.selectors import DOC_TYPES, shown_quote

VERSION_HELP = ("the fact's version you read (its ETag); a stale one is a 409 with the current fact. "
                "The If-Match header does the same and answers 412.")


class FactSerializer(serializers.ModelSerializer):
    paper = serializers.SlugRelatedField(slug_field="arxiv_id", read_only=True)
    entity = serializers.SlugRelatedField(slug_field="key", read_only=True, allow_null=True)
    shown_quote = serializers.SerializerMethodField(
        help_text="the quote as pages show it: `quote` itself when it reads as prose; for table or figure text its "
                  "readable part, or null (`quote` stays the verbatim span of the page)")

    class Meta:
        model = Fact
        fields = ["id", "paper", "kind", "subject", "entity", "parameter", "value", "value_num", "value_min",
                  "value_max", "unit", "condition", "effect", "page", "quote", "shown_quote", "confidence", "extractor",
                  "status", "version", "updated_at"]

    def get_shown_quote(self, fact: Fact) -> str | None:
        return shown_quote(fact.quote)


class RevisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = FactRevision
        fields = ["action", "actor", "before", "after", "note", "created_at"]


class FactDetailSerializer(FactSerializer):
    revisions = RevisionSerializer(source="history", many=True, read_only=True)

    class Meta(FactSerializer.Meta):
        fields = [*FactSerializer.Meta.fields, "revisions"]


class FactEditSerializer(serializers.Serializer):
    """An editor's correction: any subset of these fields (only those sent change), a note for the history,
    and optionally the version it was made against."""

    subject = serializers.CharField(max_length=200, required=False)
    parameter = serializers.RegexField(r"^[a-z][a-z0-9_]*$", max_length=120, required=False,
                                       help_text="canonical snake_case name")
    value = serializers.CharField(max_length=200, required=False, allow_blank=True)
    unit = serializers.CharField(max_length=30, required=False, allow_blank=True)
    condition = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    effect = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    page = serializers.IntegerField(required=False, min_value=1, max_value=10000, allow_null=True)
    note = serializers.CharField(required=False, allow_blank=True, max_length=500)
    version = serializers.IntegerField(required=False, min_value=1, help_text=VERSION_HELP)

    def validate(self, attrs):
        if not set(attrs) - {"note", "version"}:
            raise serializers.ValidationError("Send at least one field to change.")
        return attrs


class ReviewSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, max_length=500, help_text="kept in the history")
    version = serializers.IntegerField(required=False, min_value=1, help_text=VERSION_HELP)


class FactFilters(serializers.Serializer):
    kind = serializers.ChoiceField(choices=FactKind.choices, required=False)
    parameter = serializers.CharField(required=False, max_length=120)
    subject = serializers.CharField(required=False, max_length=200, help_text="case-insensitive")
    paper = serializers.CharField(required=False, max_length=40, help_text="arXiv id")
    status = serializers.ChoiceField(choices=Fact.Status.choices, required=False)
    entity = serializers.CharField(required=False, max_length=200, help_text="entity key")


class EntitySerializer(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["key", "name", "kind", "aliases", "description"]


class ConflictValueSerializer(serializers.Serializer):
    value = serializers.CharField()
    unit = serializers.CharField(allow_null=True)
    paper = serializers.CharField(help_text="arXiv id")
    page = serializers.IntegerField(allow_null=True)
    fact_id = serializers.IntegerField()
    verified = serializers.BooleanField()


class ConflictSerializer(serializers.Serializer):
    """Papers disagreeing: same subject, parameter and condition, different values."""

    subject = serializers.CharField()
    parameter = serializers.CharField()
    condition = serializers.CharField(allow_null=True)
    values = ConflictValueSerializer(many=True)


class EntityDetailSerializer(serializers.Serializer):
    """An entity's wiki page: its facts from every paper and where the papers disagree."""

    entity = EntitySerializer()
    facts = serializers.SerializerMethodField()
    conflicts = ConflictSerializer(many=True)
    papers = serializers.ListField(child=serializers.CharField(), help_text="arXiv ids")

    def get_facts(self, wiki) -> list[dict]:
        return FactSerializer([f for facts in wiki["facts_by_parameter"].values() for f in facts], many=True).data


class ParameterSerializer(serializers.Serializer):
    parameter = serializers.CharField()
    facts = serializers.IntegerField()
    papers = serializers.IntegerField()


class ParameterDetailSerializer(serializers.Serializer):
    """A parameter's wiki page: every stated value across papers, and the disagreements."""

    parameter = serializers.CharField()
    unit = serializers.SerializerMethodField()
    facts = FactSerializer(many=True)
    conflicts = ConflictSerializer(many=True)

    def get_unit(self, wiki) -> str | None:
        return getattr(wiki["spec"], "unit", None)


class SearchQuerySerializer(serializers.Serializer):
    q = serializers.CharField(max_length=300, help_text="free text")
    type = serializers.MultipleChoiceField(choices=list(DOC_TYPES), required=False)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=50, default=10)


class SearchResultSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=list(DOC_TYPES))
    paper = serializers.CharField(help_text="arXiv id")
    page = serializers.IntegerField(allow_null=True)
    text = serializers.CharField()
    score = serializers.FloatField()
    fact_id = serializers.IntegerField(required=False, allow_null=True)
    section_id = serializers.IntegerField(required=False, allow_null=True)


class SearchResponseSerializer(serializers.Serializer):
    results = SearchResultSerializer(many=True)
