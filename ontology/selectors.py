"""Reads of the ontology for the UI, the API, the advisor and the scorer (no writes here).

The reads other apps rely on: `hybrid_search`, `evidence_for`, `facts_for_paper`, `parameter_facts`.
Wiki pages: `entity_wiki` and `parameter_wiki` gather every value across papers and flag
conflicts (same subject, parameter and condition, different values); `fact_history` lists a fact's
revisions. Rejected and superseded facts (HIDDEN_STATUSES) are left out of every read of live
evidence; they are listed by status (`fact_rows`, `review_queue`, `superseded_facts`).
The page and API reads come last.
"""
from __future__ import annotations

import logging
import re
from collections import defaultdict
from typing import Any

from django.db import connection
from django.db.models import Count, Prefetch, Q, QuerySet

from ontology.embedding_cache import cache_key as embedding_key
from ontology.embeddings import EMBEDDING_DIM, embed, embed_one
from ontology.embeddings import PRECISIONS as EMBEDDING_PRECISIONS
from ontology.embeddings import local_precision as local_embedding_precision
from ontology.embeddings import model_identity as embedding_model_identity
from ontology.extraction.text import collapse, is_soup
from ontology.gpus import GpuVocabulary
from ontology.gpus import vocabulary as gpu_vocabulary
from ontology.models import (
    HIDDEN_STATUSES,
    Entity,
    ExtractionRun,
    Fact,
    FactKind,
    FactRevision,
    FactTechnique,
)
from ontology.query_terms import expand_query
from ontology.quotes import QuotedPage, display_quote, has_soup, readable_text, with_display_quotes
from ontology.schema import MAX_QUOTE
from ontology.search_index import fact_text, paper_text, section_text
from ontology.techniques import (
    EVALUATES_MIN_FACTS,
    TechniqueSpec,
    names_technique,
    paper_role,
    techniques,
    techniques_in_text,
)
from ontology.units import format_number
from ontology.vocabulary import canonical_parameter, parameters_in_question, spec_for

__all__ = [  # the ontology's knowledge other apps read, besides the functions defined here
    "EMBEDDING_DIM", "EMBEDDING_PRECISIONS", "EVALUATES_MIN_FACTS", "MAX_QUOTE", "GpuVocabulary", "QuotedPage", "TechniqueSpec", "collapse",
    "embed", "embedding_key", "embedding_model_identity", "gpu_vocabulary", "local_embedding_precision", "is_soup", "techniques",
    "techniques_in_text",
]
log = logging.getLogger(__name__)

DOC_TYPES = ("fact", "passage", "section", "paper")
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al.): damps the weight of the very top ranks
# Okapi BM25 constants (Robertson et al.): term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
# Bounds that keep a query fast at 100k+ facts: full-text scores only the documents holding the
# query's rarest words, adding words rarest first while their summed document frequencies stay within
# FTS_POOL (a word in thousands of documents adds little to BM25 and is left to the documents the
# rarer words found), and never more than FTS_POOL documents (when even the rarest word is that
# common, an arbitrary FTS_POOL of them); the ontology channel compares the ONTO_POOL most trusted facts.
FTS_POOL = 1000
ONTO_POOL = 500
PAGE_POOL = 20  # pages ranked by BM25 over their whole text; the results on them share their rank
PASSAGES_PER_PAGE = 1  # a page's passages overlap; its best one stands for the page among the results
# Weights of the four rankings in the fused score: a page's rank counts double, as one page holds the
# whole answer more often than any one passage of it (measured on the development questions,
# benchmarks/search_quality.py).
CHANNEL_WEIGHTS = {"vec": 1.0, "fts": 1.0, "onto": 1.0, "page": 2.0}

_HYBRID_SQL = """
WITH q_lex AS (
    SELECT t.lexeme, t.df, ln(1 + (n.docs - t.df + 0.5) / (t.df + 0.5)) AS idf
    FROM (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme) q
    JOIN ontology_searchterm t ON t.lexeme = q.lexeme
    CROSS JOIN (SELECT sum(docs)::float AS docs FROM ontology_searchstats) n),
pool AS (
    SELECT string_agg('''' || replace(lexeme, '''', '''''') || '''', ' | ')::tsquery AS query
    FROM (SELECT lexeme, sum(df) OVER (ORDER BY df, lexeme) AS reach, row_number() OVER (ORDER BY df, lexeme) AS nth
          FROM q_lex WHERE strpos(lexeme, chr(92)) = 0) x
    WHERE reach <= %(fts_pool)s OR nth = 1),
matched AS (
    SELECT d.id, d.doc_type, d.paper_id, d.page, d.search_vector
    FROM pool JOIN ontology_searchdocument d ON d.search_vector @@ pool.query
    WHERE d.doc_type = ANY(%(types)s) OR d.doc_type = 'page'
    LIMIT %(fts_pool)s),
scored AS (
    SELECT d.id, d.doc_type, d.paper_id, d.page,
           sum(q.idf * u.tf * (%(k1)s + 1) / (u.tf + %(k1)s * (1 - %(b)s + %(b)s * length(d.search_vector)
                                                                  / (st.lexemes::float / st.docs)))) AS score
    FROM matched d
    JOIN ontology_searchstats st ON st.doc_type = d.doc_type
    CROSS JOIN (SELECT array_agg(lexeme) AS lexemes FROM q_lex) ql
    CROSS JOIN LATERAL (SELECT lexeme, array_length(positions, 1) AS tf
                        FROM unnest(ts_filter(setweight(d.search_vector, 'A', ql.lexemes), '{a}'))) u
    JOIN q_lex q ON q.lexeme = u.lexeme
    GROUP BY d.id, d.doc_type, d.paper_id, d.page),
fts AS (
    SELECT id, row_number() OVER (ORDER BY score DESC, id) AS r
    FROM (SELECT id, score FROM scored WHERE doc_type <> 'page' ORDER BY score DESC, id LIMIT %(k)s) f),
pages AS (
    SELECT paper_id, page, row_number() OVER (ORDER BY score DESC, id) AS r
    FROM (SELECT id, paper_id, page, score FROM scored WHERE doc_type = 'page'
          ORDER BY score DESC, id LIMIT %(page_pool)s) p),
page_best AS (
    SELECT DISTINCT ON (s.paper_id, s.page) s.id FROM scored s
    JOIN pages ON pages.paper_id = s.paper_id AND pages.page = s.page
    WHERE s.doc_type <> 'page' ORDER BY s.paper_id, s.page, s.score DESC, s.id),
vec AS (
    SELECT id, row_number() OVER (ORDER BY dist) AS r FROM (
        SELECT id, embedding <=> %(q)s::vector AS dist
        FROM ontology_searchdocument WHERE doc_type = ANY(%(types)s)
        ORDER BY embedding <=> %(q)s::vector LIMIT %(k)s) v),
onto AS (
    SELECT id, row_number() OVER (ORDER BY dist) AS r FROM (
        SELECT d.id, d.embedding <=> %(q)s::vector AS dist
        FROM (SELECT id FROM ontology_fact WHERE parameter = ANY(%(params)s) AND status <> ALL(%(hidden)s)
              ORDER BY status = 'verified' DESC, confidence DESC, id LIMIT %(onto_pool)s) f
        JOIN ontology_searchdocument d ON d.fact_id = f.id
        WHERE d.doc_type = ANY(%(types)s)
        ORDER BY dist LIMIT %(k)s) o),
candidates AS (SELECT id FROM vec UNION SELECT id FROM fts UNION SELECT id FROM onto UNION SELECT id FROM page_best),
scored_candidates AS (
    SELECT c.id, d.doc_type, d.paper_id, d.page,
           COALESCE(%(w_vec)s / (%(rrf)s + vec.r), 0) + COALESCE(%(w_fts)s / (%(rrf)s + fts.r), 0)
           + COALESCE(%(w_onto)s / (%(rrf)s + onto.r), 0) + COALESCE(%(w_page)s / (%(rrf)s + pages.r), 0) AS score
    FROM candidates c JOIN ontology_searchdocument d ON d.id = c.id
    LEFT JOIN vec ON vec.id = c.id LEFT JOIN fts ON fts.id = c.id LEFT JOIN onto ON onto.id = c.id
    LEFT JOIN pages ON pages.paper_id = d.paper_id AND pages.page = d.page),
fused AS (
    SELECT id, score FROM (
        SELECT id, doc_type, score, row_number() OVER (PARTITION BY paper_id, page, doc_type
                                                       ORDER BY score DESC, id) AS nth
        FROM scored_candidates) s
    WHERE doc_type <> 'passage' OR nth <= %(passages_per_page)s
    ORDER BY score DESC, id LIMIT %(limit)s)
SELECT d.doc_type, p.arxiv_id, d.page, d.text, fused.score, d.fact_id, d.section_id
FROM fused JOIN ontology_searchdocument d ON d.id = fused.id JOIN papers_paper p ON p.id = d.paper_id
ORDER BY fused.score DESC, fused.id
"""


def live_facts() -> QuerySet[Fact]:
    """Facts that are live evidence (neither rejected nor superseded), with their paper."""
    return Fact.objects.exclude(status__in=HIDDEN_STATUSES).select_related("paper")


def hybrid_params(query: str, limit: int, types: tuple[str, ...], vector) -> dict[str, Any]:
    """The parameters of _HYBRID_SQL for one query (its embedding computed by the caller)."""
    return {"q": "[" + ",".join(f"{x:.6f}" for x in vector) + "]", "types": list(types), "text": expand_query(query),
            "k": max(limit * 4, 40), "limit": limit, "rrf": RRF_K, "params": parameters_in_question(query),
            "hidden": [status.value for status in HIDDEN_STATUSES], "fts_pool": FTS_POOL, "onto_pool": ONTO_POOL, "page_pool": PAGE_POOL, "passages_per_page": PASSAGES_PER_PAGE, "k1": BM25_K1, "b": BM25_B,
            **{f"w_{name}": weight for name, weight in CHANNEL_WEIGHTS.items()}}


def hybrid_search(query: str, limit: int = 10, types: tuple[str, ...] = DOC_TYPES) -> list[dict[str, Any]]:
    """Best-first results fusing four rankings by reciprocal rank: vector similarity (pgvector HNSW),
    BM25 over the documents' full-text vectors (any query word, IDF from ontology_searchterm), facts
    about the parameters the question names (ontology.vocabulary.parameters_in_question, so "how large
    should KV cache blocks be" finds block_size), and BM25 over whole pages: every result on one of the
    best pages shares that page's rank, and the best-matching document of each such page is a candidate.

    Each result: type, paper (arXiv id), page, text, score, and fact_id / section_id when it is one.
    """
    query = (query or "").strip()
    types = tuple(t for t in types if t in DOC_TYPES)
    if not query or not types or limit <= 0:
        return []
    params = hybrid_params(query, limit, types, embed_one(query))
    with connection.cursor() as cursor:
        cursor.execute(_HYBRID_SQL, params)
        ranked = cursor.fetchall()
    results = []
    for doc_type, arxiv_id, page, text, score, fact_id, section_id in ranked:
        result = {"type": doc_type, "paper": arxiv_id, "page": page, "text": text, "score": round(float(score), 6)}
        if fact_id:
            result["fact_id"] = fact_id
        if section_id:
            result["section_id"] = section_id
        results.append(result)
    return _readable_results(results)


def _readable_results(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Search results as they are shown (ontology.quotes): a fact's quote in its display form, a passage or
    section without its figure and table text; a result with nothing readable left is left out."""
    soup_facts = [r["fact_id"] for r in results if r.get("fact_id") and has_soup(r["text"])]
    facts = Fact.objects.in_bulk(soup_facts) if soup_facts else {}
    shown = with_display_quotes([{"fact": f, "quote": f.quote, "value": f.value} for f in facts.values()],
                                where=lambda item: (item["fact"].paper_id, item["fact"].page))
    quotes = {item["fact"].pk: item["quote"] for item in shown}
    out = []
    for result in results:
        fact = facts.get(result.get("fact_id"))
        text = result["text"]
        if fact is not None:
            text = text.replace(f'"{fact.quote}"', f'"{quotes[fact.pk]}"') if fact.pk in quotes else None
        text = readable_text(text) if text else None
        if text is None:
            log.info("search result %s p.%s left out: no readable text", result["paper"], result["page"])
            continue
        out.append({**result, "text": text})
    return out


def _evidence(fact: Fact) -> dict[str, Any]:
    return {
        "source": f"arXiv:{fact.paper.arxiv_id} p.{fact.page}",
        "quote": fact.quote,
        "verified": fact.status == Fact.Status.VERIFIED,
        "fact_id": fact.pk, "kind": fact.kind, "subject": fact.subject, "parameter": fact.parameter,
        "value": fact.value or None, "unit": fact.unit or None,
    }


def shown_quote(quote: str) -> str | None:
    """A quote as a page shows it without reading its paper's tables (ontology.quotes.display_quote): itself
    when readable, else its readable part, else None. Lists of facts use this; evidence reads the tables."""
    return display_quote(quote)


def text_embeddings(texts: list[str]):
    """Vectors for `texts` from the same model as the search index, for other apps' similarity
    (the digest's "more like this"); rows are unit length, so a dot product is the cosine."""
    return embed(texts)


def evidence_for(query: str, subjects: list[str] | None = None, parameters: list[str] | None = None,
                 limit: int = 5) -> list[dict[str, Any]]:
    """Quotes that back an answer (for the advisor): source "arXiv:ID p.N", quote, verified.

    With subjects/parameters, only facts about them are considered (parameters by canonical name,
    subjects case-insensitively); they are ordered by similarity to the query, verified first.
    """
    facts = live_facts()
    if parameters:
        facts = facts.filter(parameter__in=[canonical_parameter(p) for p in parameters])
    if subjects:
        match = Q()
        for subject in subjects:
            match |= Q(subject__iexact=subject) | Q(entity__aliases__icontains=subject)
        facts = facts.filter(match)
    if not subjects and not parameters:
        hits = hybrid_search(query, limit=limit * 3, types=("fact",))
        by_id = live_facts().in_bulk([h["fact_id"] for h in hits])
        ordered = [by_id[h["fact_id"]] for h in hits if h["fact_id"] in by_id]
    else:
        vector = embed_one(query) if query else None
        from pgvector.django import CosineDistance

        candidates = facts.filter(document__isnull=False)
        if vector is not None:
            candidates = candidates.annotate(distance=CosineDistance("document__embedding", vector)).order_by("distance")
        ordered = list(candidates[: limit * 3])
    ordered.sort(key=lambda f: f.status != Fact.Status.VERIFIED)
    where = {fact.pk: (fact.paper_id, fact.page) for fact in ordered}
    return with_display_quotes([_evidence(fact) for fact in ordered], where=lambda e: where[e["fact_id"]])[:limit]


def facts_for_paper(paper_id: int) -> QuerySet[Fact]:
    """Every live fact of one paper, by page."""
    return live_facts().filter(paper_id=paper_id).order_by("page", "kind", "parameter")


def reviewed_facts(paper_id: int) -> QuerySet[Fact]:
    """Facts of one paper a person verified, rejected or edited: the work removing the paper would lose."""
    reviewed = Q(status__in=[Fact.Status.VERIFIED, Fact.Status.REJECTED]) | Q(revisions__user__isnull=False)
    return Fact.objects.filter(paper_id=paper_id).filter(reviewed).distinct()


def superseded_facts(paper_id: int) -> QuerySet[Fact]:
    """One paper's facts that its latest extraction no longer finds (kept for review, not live), by page."""
    return (Fact.objects.filter(paper_id=paper_id, status=Fact.Status.SUPERSEDED).select_related("paper", "entity")
            .order_by("page", "kind", "parameter"))


def parameter_facts(paper_id: int) -> QuerySet[Fact]:
    """The knobs (kind=parameter) one paper sets, by page."""
    return facts_for_paper(paper_id).filter(kind="parameter")


def _condition_key(text: str) -> str:
    return re.sub(r"\W+", " ", (text or "").lower()).strip()


def _stated_value_key(fact: Fact) -> str:
    return format_number(fact.value_num) if fact.value_num is not None else _condition_key(fact.value)


def conflicts(facts: list[Fact]) -> list[dict[str, Any]]:
    """Groups of facts with the same subject, parameter and condition but different values."""
    groups: dict[tuple, list[Fact]] = defaultdict(list)
    for fact in facts:
        if fact.kind != "trade_off" and fact.value:
            groups[(fact.subject.lower(), fact.parameter, _condition_key(fact.condition))].append(fact)
    found = []
    for (_, parameter, _), members in sorted(groups.items()):
        if len({_stated_value_key(f) for f in members}) > 1:
            found.append({
                "subject": members[0].subject, "parameter": parameter, "condition": members[0].condition or None,
                "values": [{"value": f.value, "unit": f.unit or None, "paper": f.paper.arxiv_id, "page": f.page,
                            "fact_id": f.pk, "verified": f.status == Fact.Status.VERIFIED} for f in members],
            })
    return found


def _by_parameter(facts: list[Fact]) -> dict[str, list[Fact]]:
    grouped: dict[str, list[Fact]] = defaultdict(list)
    for fact in facts:
        grouped[fact.parameter].append(fact)
    return dict(sorted(grouped.items()))


def entity_wiki(name: str) -> dict[str, Any] | None:
    """An entity's wiki page: its facts from every paper, by parameter, with conflicts flagged."""
    entity = Entity.objects.filter(key=name.strip().lower()).first()
    if entity is None:
        return None
    facts = list(live_facts().filter(entity=entity).order_by("parameter", "paper__arxiv_id", "page"))
    return {"entity": entity, "facts_by_parameter": _by_parameter(facts), "conflicts": conflicts(facts),
            "papers": sorted({f.paper.arxiv_id for f in facts})}


def parameter_wiki(parameter: str) -> dict[str, Any]:
    """A parameter's wiki page: its template and every stated value across papers, conflicts flagged."""
    name = canonical_parameter(parameter)
    facts = list(live_facts().filter(parameter=name).order_by("subject", "paper__arxiv_id", "page"))
    return {"parameter": name, "spec": spec_for(name), "facts": facts, "conflicts": conflicts(facts),
            "trade_offs": [f for f in facts if f.kind == "trade_off"]}


def fact_history(fact_id: int) -> QuerySet[FactRevision]:
    """Every revision of a fact, oldest first (who, when, before -> after)."""
    return FactRevision.objects.filter(fact_id=fact_id).select_related("user").order_by("created_at", "id")


_LINK_FIELDS = ("technique__name", "fact_id", "fact__paper__arxiv_id", "fact__paper_id", "fact__page", "fact__quote",
                "fact__kind", "fact__subject", "fact__parameter", "fact__value", "fact__value_num", "fact__unit",
                "fact__condition", "fact__effect", "fact__status", "linked_by", "fact__paper__environment")


def _technique_rows(links: QuerySet[FactTechnique], *extra: str, limit: int | None = None) -> list[dict[str, Any]]:
    """Technique rows (the first `limit`) read as plain values: the advisor reads a few hundred per request,
    and model instances cost more than the query; `extra` names annotations to carry along."""
    rows = []
    for v in links.values(*_LINK_FIELDS, *extra)[:limit]:
        name, quote = v["technique__name"], v["fact__quote"]
        rows.append({
            "technique": name, "fact_id": v["fact_id"], "paper": v["fact__paper__arxiv_id"],
            "paper_id": v["fact__paper_id"], "page": v["fact__page"],
            "quote": quote, "kind": v["fact__kind"], "subject": v["fact__subject"], "parameter": v["fact__parameter"],
            "value": v["fact__value"] or None, "value_num": v["fact__value_num"], "unit": v["fact__unit"] or None,
            "condition": v["fact__condition"] or None, "effect": v["fact__effect"] or None,
            "verified": v["fact__status"] == Fact.Status.VERIFIED, "linked_by": v["linked_by"],
            "names_technique": names_technique(name, quote),
            "environment": v["fact__paper__environment"] or {},
            **{key: v[key] for key in extra},
        })
    return rows


def technique_facts(names: list[str] | None = None) -> list[dict[str, Any]]:
    """Every live fact linked to one of `names` (None: all techniques), as dicts with the paper's
    reported environment; `names_technique` says the quote itself uses the technique's words.
    One query. Read by the advisor's technique evidence and by diagnose."""
    links = FactTechnique.objects.exclude(fact__status__in=HIDDEN_STATUSES)
    if names is not None:
        links = links.filter(technique__name__in=names)
    return _shown(_technique_rows(links.order_by("technique__name", "fact__paper__arxiv_id", "fact__page", "fact_id")))


def _shown(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Technique rows with their quotes in display form (ontology.quotes); `names_technique` was read from
    the stored quote."""
    return with_display_quotes(rows, where=lambda row: (row["paper_id"], row["page"]))


def technique_facts_near(vector, name: str, limit: int = 30) -> list[dict[str, Any]]:
    """The live facts linked to technique `name` nearest to a query embedding (`distance`: cosine), nearest first."""
    from pgvector.django import CosineDistance

    links = (FactTechnique.objects.exclude(fact__status__in=HIDDEN_STATUSES)
             .filter(technique__name=name, fact__document__isnull=False)
             .annotate(distance=CosineDistance("fact__document__embedding", vector)).order_by("distance", "fact_id"))
    return _shown([{**row, "distance": float(row["distance"])} for row in _technique_rows(links, "distance", limit=limit)])


def techniques_of_facts(fact_ids: list[int]) -> dict[int, list[str]]:
    """Technique names per fact id (facts without a link are left out). One query."""
    out: dict[int, list[str]] = defaultdict(list)
    for fact_id, name in (FactTechnique.objects.filter(fact_id__in=fact_ids)
                          .values_list("fact_id", "technique__name").order_by("fact_id", "technique__name")):
        out[fact_id].append(name)
    return dict(out)


def paper_techniques(paper_id: int) -> list[str]:
    """Techniques a paper discusses by name in at least two of its facts (a passing mention is not enough)."""
    counts: dict[str, int] = defaultdict(int)
    for link in (FactTechnique.objects.filter(fact__paper_id=paper_id).exclude(fact__status__in=HIDDEN_STATUSES)
                 .select_related("fact", "technique")):
        counts[link.technique.name] += names_technique(link.technique.name, link.fact.quote)
    return [name for name in techniques() if counts.get(name, 0) >= EVALUATES_MIN_FACTS]


def paper_model_sizes(paper_id: int) -> list[float]:
    """The model sizes (billions of parameters) a paper's facts state."""
    return sorted({v for v in live_facts().filter(paper_id=paper_id, parameter="model_size_b")
                   .values_list("value_num", flat=True) if v})


def _reported_trade_offs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trade-off facts among `rows` with a readable effect, one per distinct effect."""
    seen: set[str] = set()
    out = []
    for row in rows:
        effect = (row["effect"] or "").strip()
        if row["kind"] == FactKind.TRADE_OFF and effect and not is_soup(effect) and effect.lower() not in seen:
            seen.add(effect.lower())
            out.append(row)
    return out


def technique_wiki(name: str) -> dict[str, Any] | None:
    """A technique's wiki page: its description, and the papers about it (those that introduce it,
    then those that evaluate it, then passing mentions), each with its facts and the trade-offs it
    reports (effect, and the condition under which it holds)."""
    spec = techniques().get(name)
    if spec is None:
        return None
    rows = technique_facts([name])
    by_paper: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_paper[row["paper"]].append(row)
    papers = [{"paper": paper, "role": paper_role([r["quote"] for r in facts if r["names_technique"]]),
               "facts": facts, "trade_offs": _reported_trade_offs(facts)} for paper, facts in by_paper.items()]
    order = {"introduces": 0, "evaluates": 1, "mentions": 2}
    papers.sort(key=lambda p: (order[p["role"]], -len(p["facts"]), p["paper"]))
    return {"spec": spec, "papers": papers, "facts": len(rows)}


def technique_index() -> list[dict[str, Any]]:
    """Every technique of the vocabulary with how many live facts and papers are linked to it."""
    counts = {row["technique__name"]: row for row in
              FactTechnique.objects.exclude(fact__status__in=HIDDEN_STATUSES).values("technique__name")
              .annotate(facts=Count("fact", distinct=True), papers=Count("fact__paper", distinct=True))}
    return [{"name": name, "title": spec.title, "facts": counts.get(name, {}).get("facts", 0),
             "papers": counts.get(name, {}).get("papers", 0)} for name, spec in techniques().items()]


# ---------------------------------------------------------------------------------------------
# Reads for the browser pages and the REST API. Each list is one query (plus
# at most one prefetch), so list pages and endpoints keep a fixed query count.
# ---------------------------------------------------------------------------------------------


def fact_rows(*, kind: str | None = None, parameter: str | None = None, subject: str | None = None,
              paper: str | None = None, status: str | None = None, entity: str | None = None) -> QuerySet[Fact]:
    """Facts filtered as the API and pages ask (paper = arXiv id, subject case-insensitive)."""
    lookups = {"kind": kind, "parameter": parameter, "subject__iexact": subject, "paper__arxiv_id": paper,
               "status": status, "entity__key": entity}
    facts = Fact.objects.select_related("paper", "entity").filter(**{k: v for k, v in lookups.items() if v})
    return facts.order_by("paper__arxiv_id", "page", "id")


def review_queue(status: str = "extracted") -> QuerySet[Fact]:
    """Facts with `status`, least confident first: the ones most worth a person's look."""
    return Fact.objects.filter(status=status).select_related("paper", "entity").order_by("confidence", "id")


def _changed(revision: FactRevision) -> list[tuple[str, Any, Any]]:
    before, after = revision.before or {}, revision.after or {}
    return [(k, before.get(k), after.get(k)) for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]


def fact_with_history(fact_id: int) -> Fact | None:
    """One fact with `history`: its revisions, oldest first, each with `changed` = [(field, before, after)]."""
    fact = Fact.objects.select_related("paper", "entity").filter(id=fact_id).first()
    if fact is None:
        return None
    fact.history = list(fact_history(fact_id))
    for revision in fact.history:
        revision.changed = _changed(revision)
    return fact


def running_extractions(limit: int = 10) -> list[ExtractionRun]:
    """Extraction jobs still running, oldest first (the dashboard shows their progress)."""
    return list(ExtractionRun.objects.filter(status=ExtractionRun.Status.RUNNING).select_related("paper")
                .order_by("started_at")[:limit])


def parameter_index() -> list[dict[str, Any]]:
    """Every parameter with a non-rejected fact: {parameter, facts, papers}, by name."""
    return list(Fact.objects.exclude(status__in=HIDDEN_STATUSES).values("parameter")
                .annotate(facts=Count("id"), papers=Count("paper", distinct=True)).order_by("parameter"))


def entity_rows() -> QuerySet[Entity]:
    """All entities by name."""
    return Entity.objects.order_by("name", "key")


def facts_for_export(paper_ids: list[int]) -> dict[int, list[Fact]]:
    """Every fact of these papers but superseded ones (rejected too: the receiving instance must not
    re-create them), by paper id, by page, each with its revisions (and their users) and
    `person_techniques`: the technique names a person linked it to. For knowledge exports."""
    facts = (Fact.objects.filter(paper_id__in=paper_ids).exclude(status=Fact.Status.SUPERSEDED)
             .order_by("page", "id").prefetch_related(
                 Prefetch("revisions", queryset=FactRevision.objects.select_related("user").order_by("created_at", "id")),
                 Prefetch("technique_links", queryset=FactTechnique.objects.select_related("technique"))))
    by_paper: dict[int, list[Fact]] = defaultdict(list)
    for fact in facts:
        fact.person_techniques = sorted(link.technique.name for link in fact.technique_links.all()
                                        if link.linked_by == FactTechnique.LinkedBy.PERSON)
        by_paper[fact.paper_id].append(fact)
    return by_paper


def revision_actions() -> list[str]:
    """The actions a fact revision may record (create, update, verify, ...)."""
    return list(FactRevision.Action.values)


def indexed_texts(title: str, abstract: str, section_titles: list[str], facts: list[dict]) -> list[str]:
    """The texts indexing a paper stores for it (its own entry, its sections without text, its facts,
    given as fact dicts): what a knowledge pack's shipped vectors must cover."""
    texts = [paper_text(title, abstract)] + [section_text(name, "") for name in section_titles]
    texts += [fact_text(Fact(kind=f["kind"], subject=f["subject"], parameter=f["parameter"], value=f["value"] or "",
                             unit=f["unit"] or "", effect=f["effect"] or "", quote=f["quote"])) for f in facts]
    return [text for text in texts if len(text) > 3]
