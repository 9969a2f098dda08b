"""The ontology's tables: entities, typed facts with their evidence, the revision log, search documents.

Written only by ontology.services (extraction, human review, indexing); read through ontology.selectors.
A Fact is one statement a paper makes (constraint, parameter or trade-off) with the page and exact
quote that state it. Every change to a fact is a FactRevision row (who, when, before -> after) and
bumps the fact's `version` (the API's ETag), so a person's save that started from an older reading
is refused instead of undoing a later change.
A SearchDocument is one searchable text (a fact, a section, a paper's abstract, a page passage or a
whole page) with its embedding (pgvector, HNSW) and full-text vector, so hybrid search is one query
over one table; SearchTerm and SearchStats hold the term statistics its BM25 keyword ranking reads.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import HnswIndex, VectorField

from ontology.embeddings import EMBEDDING_DIM


class EntityKind(models.TextChoices):
    SYSTEM = "system", "system / engine"
    TECHNIQUE = "technique", "technique"
    HARDWARE = "hardware", "hardware"
    MODEL = "model", "model"
    SOFTWARE = "software", "software"
    METRIC = "metric", "metric"
    WORKLOAD = "workload", "workload"


class FactKind(models.TextChoices):
    CONSTRAINT = "constraint", "constraint"
    PARAMETER = "parameter", "parameter"
    TRADE_OFF = "trade_off", "trade-off"


class Entity(models.Model):
    """A named thing facts are about: vLLM, PagedAttention, A100, Llama-2-13B, CUDA, TTFT, ShareGPT."""

    key = models.CharField(max_length=200, unique=True, help_text="lower-cased name, the identity")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=EntityKind.choices, default=EntityKind.TECHNIQUE)
    aliases = models.JSONField(default=list, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "entities"

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class Fact(models.Model):
    """One typed, page-anchored statement of a paper; see ontology.schema for the templates."""

    class Status(models.TextChoices):
        EXTRACTED = "extracted", "extracted (unreviewed)"
        VERIFIED = "verified", "verified by a person"
        REJECTED = "rejected", "rejected by a person"
        SUPERSEDED = "superseded", "no longer found by re-extraction (kept, not live)"

    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="facts")
    kind = models.CharField(max_length=20, choices=FactKind.choices)
    subject = models.CharField(max_length=200)
    entity = models.ForeignKey(Entity, null=True, blank=True, on_delete=models.SET_NULL, related_name="facts")
    parameter = models.CharField(max_length=120, db_index=True, help_text="canonical snake_case name")
    value = models.CharField(max_length=200, blank=True, help_text="as the paper states it")
    value_num = models.FloatField(null=True, blank=True, help_text="canonical number (in `unit`)")
    value_min = models.FloatField(null=True, blank=True)
    value_max = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=30, blank=True, help_text="canonical unit")
    condition = models.TextField(blank=True)
    effect = models.TextField(blank=True)
    page = models.PositiveIntegerField(null=True, blank=True)
    quote = models.TextField()
    confidence = models.FloatField(default=0.5)
    extractor = models.CharField(max_length=40, help_text="rules, llm, rules+llm, human")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.EXTRACTED, db_index=True)
    fingerprint = models.CharField(max_length=64, help_text="identity for idempotent re-extraction")
    version = models.PositiveIntegerField(
        default=1, help_text="bumped on every write; a writer that names the version it read is refused once it moved")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["paper", "page", "id"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "fingerprint"], name="unique_fact_fingerprint"),
            models.CheckConstraint(
                condition=models.Q(kind__in=["constraint", "parameter", "trade_off"]), name="fact_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1), name="fact_confidence_0_1"
            ),
        ]
        indexes = [models.Index(fields=["subject", "parameter"], name="fact_subject_param")]

    def __str__(self) -> str:
        return f"{self.subject} · {self.parameter} = {self.value or '—'} {self.unit}".strip()


# Facts that are not live evidence: a person rejected them, or a newer extraction no longer finds them.
# Kept (rejected ones so they are never re-created, superseded ones to be listed and reviewed), but left
# out of search, wiki pages, the advisor and scoring.
HIDDEN_STATUSES = (Fact.Status.REJECTED, Fact.Status.SUPERSEDED)


class FactRevision(models.Model):
    """One change to a fact: who made it, when, and the fact's fields before and after."""

    class Action(models.TextChoices):
        CREATE = "create", "created by an extractor"
        UPDATE = "update", "updated by re-extraction"
        VERIFY = "verify", "verified"
        REJECT = "reject", "rejected"
        EDIT = "edit", "edited"
        TECHNIQUES = "techniques", "techniques changed"
        SUPERSEDE = "supersede", "superseded: a new extraction no longer finds it"

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="revisions")
    action = models.CharField(max_length=20, choices=Action.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor = models.CharField(max_length=150, help_text="username, or the extractor's name")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["fact", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.action} of fact {self.fact_id} by {self.actor}"


class Technique(models.Model):
    """A serving technique (chunked prefill, prefix caching, ...): a row per name of ontology/data/techniques.json.

    The file is the one home of names, titles and words; rows mirror it (ontology.services.sync_techniques)
    so facts can be linked to a technique with a foreign key.
    """

    name = models.CharField(max_length=60, unique=True, help_text="snake_case name, as in techniques.json")
    title = models.CharField(max_length=80)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class FactTechnique(models.Model):
    """A fact is about a technique: linked by the extractor (from the vocabulary) or by a person in the wiki."""

    class LinkedBy(models.TextChoices):
        EXTRACTOR = "extractor", "the extractor's vocabulary"
        PERSON = "person", "a person"

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="technique_links")
    technique = models.ForeignKey(Technique, on_delete=models.CASCADE, related_name="fact_links")
    linked_by = models.CharField(max_length=20, choices=LinkedBy.choices, default=LinkedBy.EXTRACTOR)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["technique", "fact"]
        constraints = [models.UniqueConstraint(fields=["fact", "technique"], name="unique_fact_technique")]

    def __str__(self) -> str:
        return f"fact {self.fact_id} -> {self.technique_id} ({self.linked_by})"


class ExtractionRun(models.Model):
    """One extraction of one paper: its outcome and where the time went (LLM share, tokens)."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"
        WAITING = "waiting", "waiting for the LLM server"
        FAILED = "failed", "failed"

    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="extraction_runs")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    facts_created = models.PositiveIntegerField(default=0)
    facts_updated = models.PositiveIntegerField(default=0)
    facts_kept = models.PositiveIntegerField(default=0, help_text="human-reviewed facts left untouched")
    rejected_outputs = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    llm_s = models.FloatField(default=0.0)
    total_s = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"extraction of {self.paper_id}: {self.status}"


class RejectedOutput(models.Model):
    """Model output that failed JSON parsing or schema validation: logged here, never stored as a fact."""

    paper = models.ForeignKey("papers.Paper", null=True, blank=True, on_delete=models.CASCADE)
    extractor = models.CharField(max_length=40)
    error = models.TextField()
    raw = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"rejected {self.extractor} output: {self.error[:60]}"


class SearchDocument(models.Model):
    """One searchable text with its embedding and full-text vector (a fact, a section, a paper, or a
    passage: a few sentences of one page), or a whole page's text for keyword ranking of pages (no
    embedding; never a search result itself: it ranks the results on its page)."""

    class DocType(models.TextChoices):
        FACT = "fact", "fact"
        SECTION = "section", "section"
        PAPER = "paper", "paper"
        PASSAGE = "passage", "passage"
        PAGE = "page", "page"

    doc_type = models.CharField(max_length=10, choices=DocType.choices)
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="search_documents")
    fact = models.OneToOneField(Fact, null=True, blank=True, on_delete=models.CASCADE, related_name="document")
    section = models.OneToOneField(
        "papers.Section", null=True, blank=True, on_delete=models.CASCADE, related_name="search_document"
    )
    page = models.PositiveIntegerField(null=True, blank=True)
    text = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True)
    search_vector = SearchVectorField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["paper"], condition=models.Q(doc_type="paper"), name="one_paper_document_per_paper"
            ),
        ]
        indexes = [
            HnswIndex(
                name="searchdoc_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="searchdoc_fts_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.doc_type} p.{self.page}: {self.text[:60]}"


class SearchTerm(models.Model):
    """Document frequency of one full-text lexeme: in how many search documents it occurs (the IDF of
    BM25 keyword ranking). Kept in step with ontology_searchdocument.search_vector by database
    triggers (migration 0005), so every insert, update and delete (cascades included) counts."""

    lexeme = models.TextField(primary_key=True)
    df = models.IntegerField()

    def __str__(self) -> str:
        return f"{self.lexeme}: {self.df}"


class SearchStats(models.Model):
    """Per document type: how many search documents have a full-text vector and their summed lengths
    (distinct lexemes), so BM25 normalises a document's length by the average of its type. Kept in
    step by the same triggers as SearchTerm."""

    doc_type = models.CharField(max_length=10, primary_key=True)
    docs = models.BigIntegerField()
    lexemes = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.doc_type}: {self.docs} documents"
