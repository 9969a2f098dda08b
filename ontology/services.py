"""Writes to the ontology: storing extractions, human review (verify, reject, edit), indexing.

The one entry point for a parsed document of a stored paper is `ingest_document` (extract, validate,
ground, store, index, record the run); `index_paper` indexes a paper whose facts are not extracted
(yet). Called by the papers app's services, the API/UI views and management commands. Rules kept here:
- every change to a fact is a FactRevision row (who, when, before -> after);
- re-extraction never overwrites, deletes or duplicates a fact a person has reviewed
  (verified, rejected or edited): such facts are matched by fingerprint and by content and kept;
- every fact is validated against its template (ontology.schema) before it is saved.
"""
from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ontology.embeddings import embedding_cache
from ontology.extraction.grounding import merge_key
from ontology.extraction.llm import LlmUnavailable, default_llm_extractor
from ontology.extraction.pipeline import ExtractionResult, FactExtractor, export_facts, extract_document
from ontology.extraction.text import Document
from ontology.models import (
    HIDDEN_STATUSES,
    Entity,
    ExtractionRun,
    Fact,
    FactRevision,
    FactTechnique,
    RejectedOutput,
    Technique,
)
from ontology.quotes import use_page_reader
from ontology.schema import FactValidationError, validate_fact
from ontology.search_index import index_facts, index_paper
from ontology.techniques import techniques, techniques_for_fact

__all__ = [  # what other apps use, besides the functions defined here
    "Document", "ExtractionResult", "FactValidationError", "LlmUnavailable", "FactExtractor",
    "default_llm_extractor", "export_facts", "extract_document", "index_facts", "index_paper", "use_page_reader",
]
log = logging.getLogger(__name__)
SNAPSHOT_FIELDS = ("kind", "subject", "parameter", "value", "unit", "condition", "effect", "page", "quote",
                   "confidence", "extractor", "status")
REVIEWED = (Fact.Status.VERIFIED, Fact.Status.REJECTED)


def snapshot(fact: Fact) -> dict[str, Any]:
    """The fields a revision records."""
    return {name: getattr(fact, name) for name in SNAPSHOT_FIELDS}


def fingerprint(data: dict[str, Any]) -> str:
    """Stable identity of a fact across re-extractions: kind, parameter, value and page."""
    return hashlib.sha256(repr(merge_key(data)).encode()).hexdigest()


def entity_for(name: str, kind: str = "system") -> Entity:
    """The entity named `name` (case-insensitive), created on first use."""
    entity, _ = Entity.objects.get_or_create(key=name.strip().lower(), defaults={"name": name.strip(), "kind": kind})
    return entity


def model_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Validated, canonical column values for a fact dict (raises FactValidationError)."""
    model = validate_fact(data)
    parsed = model.parsed()
    return {
        "kind": model.kind, "subject": model.subject, "parameter": model.parameter,
        "value": model.value or "", "unit": parsed.unit or model.unit or "",
        "value_num": parsed.num, "value_min": parsed.low if parsed.low is not None else (min(parsed.items) if parsed.items else None),
        "value_max": parsed.high if parsed.high is not None else (max(parsed.items) if parsed.items else None),
        "condition": model.condition or "", "effect": model.effect or "", "page": model.page,
        "quote": model.quote, "confidence": model.confidence, "extractor": model.extractor,
    }


def _reviewed(fact: Fact) -> bool:
    return fact.status in REVIEWED or any(revision.user_id for revision in fact.revisions.all())


def _reviewed_facts(paper) -> QuerySet[Fact]:
    """The paper's facts a person has touched (the database-side test of `_reviewed`)."""
    return (Fact.objects.filter(paper=paper)
            .filter(Q(status__in=REVIEWED) | Q(revisions__user__isnull=False)).distinct())


def _lock_paper(paper) -> None:
    """Make the writers of one paper's set of facts (re-extraction, knowledge import) take turns.

    FOR NO KEY UPDATE, the lock knowledge.load takes too: it still lets other transactions insert
    rows that point at the paper (a person's edit re-indexing its fact), so it cannot deadlock them.
    """
    list(type(paper).objects.select_for_update(no_key=True).filter(pk=paper.pk).values_list("pk", flat=True))


@transaction.atomic
def store_facts(paper, facts: list[dict[str, Any]], actor: str = "extractor") -> dict[str, int]:
    """Save one extraction of `paper`: create new facts, refresh unreviewed ones, keep reviewed ones.

    The paper's facts are read under row locks, so a verify or edit committed while this ran is
    seen (its fact counts as reviewed) and one still running waits for this to finish first.
    Unreviewed facts that this extraction no longer finds are marked superseded, never deleted (they
    stay listed for review, out of search and the advisor; one found again is live again); reviewed
    facts are never touched. Returns counts: created, updated, kept, superseded.
    """
    _lock_paper(paper)
    existing = {fact.fingerprint: fact for fact in
                Fact.objects.select_for_update().filter(paper=paper).order_by("pk").prefetch_related("revisions")}
    reviewed_keys = {merge_key(snapshot(f)) for f in existing.values() if _reviewed(f)}
    counts = {"created": 0, "updated": 0, "kept": 0, "superseded": 0}
    seen: set[str] = set()
    touched: list[Fact] = []
    for data in facts:
        fields = model_fields(data)
        key = fingerprint(data)
        seen.add(key)
        fact = existing.get(key)
        if fact is not None and _reviewed(fact) or fact is None and merge_key(data) in reviewed_keys:
            counts["kept"] += 1
            continue
        fields["entity"] = entity_for(fields["subject"])
        if fact is None:
            fact = Fact.objects.create(paper=paper, fingerprint=key, **fields)
            existing[key] = fact
            FactRevision.objects.create(fact=fact, action=FactRevision.Action.CREATE, actor=actor, after=snapshot(fact))
            counts["created"] += 1
            touched.append(fact)
            continue
        before = snapshot(fact)
        for name, value in fields.items():
            setattr(fact, name, value)
        fact.status = Fact.Status.EXTRACTED  # a superseded fact this reading finds again is live again
        if snapshot(fact) != before:
            _write(fact)
            FactRevision.objects.create(fact=fact, action=FactRevision.Action.UPDATE, actor=actor,
                                        before=before, after=snapshot(fact))
            counts["updated"] += 1
            touched.append(fact)
    for key, fact in existing.items():
        if key not in seen and fact.status == Fact.Status.EXTRACTED and not _reviewed(fact):
            before = snapshot(fact)
            fact.status = Fact.Status.SUPERSEDED
            _write(fact, ["status"])
            FactRevision.objects.create(fact=fact, action=FactRevision.Action.SUPERSEDE, actor=actor,
                                        before=before, after=snapshot(fact))
            counts["superseded"] += 1
            touched.append(fact)
    index_facts(touched)
    link_facts(touched)
    return counts


def _copy_revisions(fact: Fact, revisions: list[dict[str, Any]]) -> int:
    """Add the revisions of a knowledge file that `fact` lacks (same action, actor and time = same)."""
    from django.contrib.auth import get_user_model

    have = {(r.action, r.actor, r.created_at) for r in fact.revisions.all()}
    users = {u.get_username(): u for u in get_user_model().objects.filter(
        username__in=[r["user"] for r in revisions if r.get("user")])}
    added = 0
    for revision in revisions:
        if (revision["action"], revision["actor"], revision["created_at"]) in have:
            continue
        row = FactRevision.objects.create(
            fact=fact, action=revision["action"], actor=revision["actor"], user=users.get(revision.get("user") or ""),
            before=revision.get("before"), after=revision.get("after"), note=revision.get("note", ""))
        FactRevision.objects.filter(pk=row.pk).update(created_at=revision["created_at"])  # keep the original time
        added += 1
    return added


def _link_by_person(fact: Fact, names: list[str]) -> None:
    """The technique links a person chose on another instance (names outside the vocabulary are dropped)."""
    if not names:
        return
    rows = sync_techniques()
    FactTechnique.objects.bulk_create([FactTechnique(fact=fact, technique=rows[name], linked_by=FactTechnique.LinkedBy.PERSON)
                                       for name in names if name in rows], ignore_conflicts=True)


@transaction.atomic
def merge_fact(paper, data: dict[str, Any], *, status: str, revisions: list[dict[str, Any]], actor: str,
               key: str | None = None, techniques: list[str] = ()) -> tuple[str, Fact | None]:
    """Store one fact read from a knowledge file (the starter pack, another instance's export).

    Returns (outcome, fact): "created"; "reviewed" when an unreviewed fact here takes the file's
    review; "kept" when the fact here is reviewed, or is the same machine fact (never overwritten
    by a file's machine fact). The fact here is read under its row lock, so a review committed
    meanwhile is seen and kept. The caller holds the paper's lock (knowledge.load). `key` is the file's fingerprint (an edited fact keeps the one of the
    extraction it came from, so re-extraction still recognises it). The caller links the returned
    facts to techniques (link_facts), once for a whole paper. Raises FactValidationError.
    """
    fields = model_fields(data)
    key = key or fingerprint(data)
    incoming_reviewed = status in REVIEWED or any(r.get("user") for r in revisions)
    # of=self and by pk: the default ordering joins the paper, and FOR UPDATE would lock its row too
    fact = (Fact.objects.select_for_update(of=("self",)).filter(paper=paper, fingerprint=key).order_by("pk")
            .prefetch_related("revisions").first())
    if fact is None:
        if any(merge_key(snapshot(f)) == merge_key(data) for f in _reviewed_facts(paper)):
            return "kept", None
        fields["entity"] = entity_for(fields["subject"])
        fact = Fact.objects.create(paper=paper, fingerprint=key, status=status, **fields)
        if not _copy_revisions(fact, revisions):
            FactRevision.objects.create(fact=fact, action=FactRevision.Action.CREATE, actor=actor, after=snapshot(fact))
        _link_by_person(fact, list(techniques))
        return "created", fact
    if _reviewed(fact) or not incoming_reviewed:
        return "kept", fact
    for name, value in fields.items():
        setattr(fact, name, value)
    fact.entity = entity_for(fact.subject)
    fact.status = status
    _write(fact)
    _copy_revisions(fact, revisions)
    _link_by_person(fact, list(techniques))
    return "reviewed", fact


class StaleFact(Exception):
    """A person's write named the version of the fact it started from, and the fact has moved on since.

    `current` is the fact as it is now (read under the row lock), for the caller to show.
    """

    def __init__(self, current: Fact, expected: int):
        self.current, self.expected = current, expected
        super().__init__(f"fact {current.pk} is at version {current.version}, not {expected}")


def locked_fact(fact_id: int, expected_version: int | None = None) -> Fact:
    """The fact row, locked until the end of the caller's transaction (SELECT ... FOR UPDATE).

    Every write reads the fact this way, so what a revision records as "before" is what was there,
    and two writers of one fact take turns instead of each saving its own stale copy. Raises
    StaleFact when `expected_version` is given and is not the row's version; Fact.DoesNotExist
    when there is no such fact.
    """
    _share_paper_of(fact_id)
    fact = Fact.objects.select_for_update().get(pk=fact_id)
    if expected_version is not None and fact.version != expected_version:
        raise StaleFact(fact, expected_version)
    return fact


def _share_paper_of(fact_id: int) -> None:
    """Hold the fact's paper FOR KEY SHARE before locking the fact.

    A person's write re-indexes the fact, and inserting its search document takes this lock on the
    paper anyway, but late: after the search statistics' advisory lock. An import that updates the
    paper row itself (a new version) holds the paper and then waits for that advisory lock, so
    taking the paper lock late could deadlock with it; taken first, the write simply waits its turn.
    """
    paper = Fact._meta.get_field("paper").related_model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT p.id FROM {paper} p JOIN {Fact._meta.db_table} f ON f.paper_id = p.id "
                       "WHERE f.id = %s FOR KEY SHARE OF p", [fact_id])


def _write(fact: Fact, fields: list[str] | None = None) -> None:
    """Save a locked fact, one version further (all columns when `fields` is None)."""
    fact.version += 1
    fact.save(update_fields=None if fields is None else [*fields, "version", "updated_at"])


def _review(fact: Fact, user, action: str, status: str, note: str, expected_version: int | None) -> Fact:
    fact = locked_fact(fact.pk, expected_version)
    before = snapshot(fact)
    fact.status = status
    _write(fact, ["status"])
    FactRevision.objects.create(fact=fact, action=action, user=user, actor=_actor(user), before=before,
                                after=snapshot(fact), note=note)
    if before["status"] == Fact.Status.SUPERSEDED or status in HIDDEN_STATUSES:
        index_facts([fact])  # a superseded fact a person verifies is evidence again; a rejected one leaves
    return fact


def _actor(user) -> str:
    return getattr(user, "get_username", lambda: "")() or "anonymous"


@transaction.atomic
def verify_fact(fact: Fact, user, note: str = "", expected_version: int | None = None) -> Fact:
    """A person confirms the fact matches its quote; re-extraction will leave it alone.

    Returns the fact as stored. With `expected_version` (the version the person saw), raises
    StaleFact instead when someone changed the fact since.
    """
    return _review(fact, user, FactRevision.Action.VERIFY, Fact.Status.VERIFIED, note, expected_version)


@transaction.atomic
def reject_fact(fact: Fact, user, note: str = "", expected_version: int | None = None) -> Fact:
    """A person says the fact is wrong; it stays (hidden from wiki and search) so it is never re-created.

    Returns the fact as stored; StaleFact as for verify_fact.
    """
    return _review(fact, user, FactRevision.Action.REJECT, Fact.Status.REJECTED, note, expected_version)


@transaction.atomic
def edit_fact(fact: Fact, user, changes: dict[str, Any], note: str = "",
              expected_version: int | None = None) -> Fact:
    """Apply a person's corrections: only the fields in `changes`, over the fact as it is now.

    The whole result is validated against its template; FactValidationError (naming the field)
    changes nothing. With `expected_version`, StaleFact when someone changed the fact since the
    person read it. The edited fact counts as verified: a person has checked it against the paper.
    Returns the fact as stored.
    """
    unknown = set(changes) - (set(SNAPSHOT_FIELDS) - {"extractor", "status"})
    if unknown:
        raise FactValidationError([(name, "cannot be edited") for name in sorted(unknown)])
    fact = locked_fact(fact.pk, expected_version)
    before = snapshot(fact)
    data = {name: before[name] for name in SNAPSHOT_FIELDS if name != "status"}
    data.update(changes)
    data["extractor"] = fact.extractor
    fields = model_fields({k: (v if v != "" else None) for k, v in data.items()})
    for name, value in fields.items():
        setattr(fact, name, value)
    fact.entity = entity_for(fact.subject)
    fact.status = Fact.Status.VERIFIED
    _write(fact)
    FactRevision.objects.create(fact=fact, action=FactRevision.Action.EDIT, user=user, actor=_actor(user),
                                before=before, after=snapshot(fact), note=note)
    index_facts([fact])
    return fact


def sync_techniques() -> dict[str, Technique]:
    """Technique rows matching ontology/data/techniques.json (created or retitled as the file says), by name."""
    rows = Technique.objects.in_bulk(field_name="name")
    for name, spec in techniques().items():
        row = rows.get(name)
        if row is None:
            rows[name] = Technique.objects.create(name=name, title=spec.title, description=spec.description)
        elif (row.title, row.description) != (spec.title, spec.description):
            row.title, row.description = spec.title, spec.description
            row.save(update_fields=["title", "description"])
    return rows


@transaction.atomic
def link_facts(facts: list[Fact]) -> int:
    """Link each fact to the techniques the vocabulary finds in it (ontology.techniques.techniques_for_fact).

    The extractor's links are recomputed; a person's links are kept, and so are the links of a fact
    a person has changed its techniques on (that revision is the last word). Returns links created.
    """
    if not facts:
        return 0
    rows = sync_techniques()
    ids = [f.pk for f in facts]
    decided = set(FactRevision.objects.filter(fact_id__in=ids, action=FactRevision.Action.TECHNIQUES)
                  .values_list("fact_id", flat=True))
    machine = [pk for pk in ids if pk not in decided]
    FactTechnique.objects.filter(fact_id__in=machine, linked_by=FactTechnique.LinkedBy.EXTRACTOR).delete()
    kept = set(FactTechnique.objects.filter(fact_id__in=machine).values_list("fact_id", "technique_id"))
    links = [FactTechnique(fact=fact, technique=rows[name])
             for fact in facts if fact.pk not in decided
             for name in techniques_for_fact(snapshot(fact)) if (fact.pk, rows[name].pk) not in kept]
    FactTechnique.objects.bulk_create(links, ignore_conflicts=True)
    return len(links)


def fact_technique_names(fact: Fact) -> list[str]:
    """The names of the techniques a fact is linked to, sorted."""
    return sorted(fact.technique_links.values_list("technique__name", flat=True))


@transaction.atomic
def set_fact_techniques(fact: Fact, user, names: list[str], note: str = "") -> Fact:
    """A person says which techniques a fact is about; recorded as a revision (before -> after).

    Raises FactValidationError naming any name outside the vocabulary. Afterwards the extractor
    leaves this fact's links alone.
    """
    unknown = sorted(set(names) - set(techniques()))
    if unknown:
        raise FactValidationError([("techniques", f"unknown technique {name!r}") for name in unknown])
    rows = sync_techniques()
    fact = locked_fact(fact.pk)
    _write(fact, [])  # the links are part of what a person decided about this fact
    before = fact_technique_names(fact)
    fact.technique_links.all().delete()
    FactTechnique.objects.bulk_create([FactTechnique(fact=fact, technique=rows[name],
                                                     linked_by=FactTechnique.LinkedBy.PERSON)
                                       for name in sorted(set(names))])
    FactRevision.objects.create(fact=fact, action=FactRevision.Action.TECHNIQUES, user=user, actor=_actor(user),
                                before={"techniques": before}, after={"techniques": sorted(set(names))}, note=note)
    return fact


def record_rejected_outputs(paper, rejected: list[tuple[str, str]], extractor: str = "extract") -> int:
    """Log model output that failed parsing or validation (never stored as facts)."""
    RejectedOutput.objects.bulk_create(
        [RejectedOutput(paper=paper, extractor=extractor, raw=raw[:20000], error=error[:2000]) for raw, error in rejected]
    )
    return len(rejected)


def start_run(paper) -> ExtractionRun:
    """Open the record of one extraction attempt."""
    return ExtractionRun.objects.create(paper=paper)


def finish_run(run: ExtractionRun, status: str, started: float, stats: dict | None = None,
               counts: dict | None = None, error: str = "", rejected: int = 0) -> ExtractionRun:
    """Close the record with its outcome, timings and token counts."""
    stats, counts = stats or {}, counts or {}
    run.status = status
    run.facts_created, run.facts_updated, run.facts_kept = (counts.get("created", 0), counts.get("updated", 0),
                                                            counts.get("kept", 0))
    run.rejected_outputs = rejected
    run.prompt_tokens = stats.get("prompt_tokens", 0)
    run.completion_tokens = stats.get("completion_tokens", 0)
    run.llm_s = stats.get("llm_s", 0.0)
    run.total_s = round(time.perf_counter() - started, 3)
    run.error = error[:5000]
    run.finished_at = timezone.now()
    run.save()
    return run


def ingest_document(paper, document: Document | Callable[[], Document], *, llm: FactExtractor | None = None,
                    use_llm: bool = False, index: bool = True) -> ExtractionRun:
    """The ontology's one write entry point for a parsed document of a stored paper: extract its facts
    (rules, plus `llm`, or the default LLM extractor when `use_llm`), validate and ground them, store
    them (store_facts: reviewed facts kept, each stored fact indexed), build the paper's own search
    entries (unless `index` is False: its parse indexed them already) and record the run.

    `document` may be a function that reads it (the papers app's stored pages), so a read that fails
    is recorded as a failed run too. LlmUnavailable leaves the run `waiting` and indexes nothing, so
    the caller may try again with rules only; any other error leaves it `failed`. Both propagate.
    """
    started = time.perf_counter()
    run = start_run(paper)
    try:
        parsed = document() if callable(document) else document
        if use_llm and llm is None:
            llm = default_llm_extractor()
        result = extract_document(parsed, llm=llm)
    except LlmUnavailable as exc:
        finish_run(run, ExtractionRun.Status.WAITING, started, error=str(exc))
        raise
    except Exception as exc:
        finish_run(run, ExtractionRun.Status.FAILED, started, error=str(exc))
        raise
    counts = store_facts(paper, result.facts)
    rejected = record_rejected_outputs(paper, result.rejected)
    index_facts(list(Fact.objects.filter(paper=paper, document__isnull=True).exclude(status__in=HIDDEN_STATUSES)))
    if index:
        index_paper(paper)
    return finish_run(run, ExtractionRun.Status.DONE, started, stats=result.stats, counts=counts, rejected=rejected)


def offer_embeddings(model: str, dim: int, keys: list[bytes], vectors) -> int:
    """Add vectors computed elsewhere (a knowledge pack's) to the embedding cache when they are this
    install's model's; returns how many were added (0: no cache, or another model or width)."""
    store = embedding_cache()
    if store is None or model != store.model_id or dim != store.dim:
        return 0
    return store.put_keyed(keys, vectors)
