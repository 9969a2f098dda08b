"""Keeps the search table in step with facts, sections and papers (embedding + full-text vector).

Called by ontology.services after facts change, and by `index_paper` after a paper is parsed
or extracted. One SearchDocument per fact, per section, per paper (title + abstract), per page passage
and per page (the whole page text, keyword-ranked only, so it carries no embedding); embeddings are
computed in batches, full-text vectors by PostgreSQL (english configuration). The term statistics
BM25 reads (ontology_searchterm, ontology_searchstats) follow by trigger.
"""
from __future__ import annotations

from django.db import connection, transaction

from ontology.embeddings import embed
from ontology.extraction.text import is_soup, sentences
from ontology.models import HIDDEN_STATUSES, Fact, SearchDocument
from ontology.vocabulary import spec_for

SECTION_CHARS = 2000  # the model reads 256 word pieces; the start of a section carries its topic
# A passage is PASSAGE_SENTENCES sentences of one page; the next one starts PASSAGE_STRIDE sentences
# later, so neighbours share a sentence and an answer split across two windows is whole in one.
PASSAGE_SENTENCES = 4
PASSAGE_STRIDE = 3
PASSAGE_CHARS = 900  # about the 256 word pieces the embedding model reads


def fact_text(fact: Fact) -> str:
    """What a fact's search document says: subject, the parameter in words (and the ontology's other
    words for it, so "KV cache blocks" finds block_size), value, effect, quote."""
    value = f" = {fact.value} {fact.unit}".rstrip() if fact.value else ""
    spec = spec_for(fact.parameter)
    name = fact.parameter.replace("_", " ")
    words = [p for p in (spec.phrases if spec else ()) if not p.startswith("re:") and p != name][:3]
    also = f" ({', '.join(words)})" if words else ""
    effect = f". {fact.effect}" if fact.effect and fact.effect != fact.quote else ""
    kind = fact.get_kind_display()
    return f"{fact.subject} {kind}: {name}{also}{value}{effect}. \"{fact.quote}\""


def paper_text(title: str, abstract: str) -> str:
    """What a paper's own search document says."""
    return f"{title}. {abstract}".strip()


def section_text(title: str, text: str) -> str:
    """What a section's search document says: its title and the start of its text (none from a pack)."""
    return f"{title}. {text[:SECTION_CHARS]}".strip()


def _refresh_fts(ids: list[int]) -> None:
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE ontology_searchdocument SET search_vector = to_tsvector('english', text) WHERE id = ANY(%s)",
            [ids],
        )


@transaction.atomic
def index_facts(facts: list[Fact]) -> int:
    """(Re)build the search documents of these facts; rejected and superseded facts leave the index."""
    if not facts:
        return 0
    SearchDocument.objects.filter(fact__in=[f for f in facts if f.status in HIDDEN_STATUSES]).delete()
    live = [f for f in facts if f.status not in HIDDEN_STATUSES]
    SearchDocument.objects.filter(fact__in=live).delete()
    texts = [fact_text(f) for f in live]
    docs = SearchDocument.objects.bulk_create([
        SearchDocument(doc_type="fact", paper_id=f.paper_id, fact=f, page=f.page, text=text, embedding=vector)
        for f, text, vector in zip(live, texts, embed(texts), strict=True)
    ])
    _refresh_fts([d.pk for d in docs])
    return len(docs)


def page_passages(page_text: str) -> list[str]:
    """Overlapping windows of a few sentences of one page; figure and table text is left out."""
    units = [u.original.strip() for u in sentences([page_text]) if not is_soup(u.original)]
    passages = []
    for start in range(0, max(len(units) - PASSAGE_SENTENCES + PASSAGE_STRIDE, 1), PASSAGE_STRIDE):
        window = " ".join(units[start : start + PASSAGE_SENTENCES])[:PASSAGE_CHARS]
        if len(window) >= 80:
            passages.append(window)
    return passages


def _short_title(paper) -> str:
    head, sep, _ = (paper.title or "").partition(":")
    return head.strip() if sep and len(head) <= 40 else (paper.title or "")[:80]


def index_paper(paper) -> int:
    """(Re)build the paper's own document, one per section, its page passages and one keyword-only
    document per page (from the papers app's stored page texts, `paper.pages`). Embeddings are
    computed before the transaction that swaps the documents."""
    items: list[tuple[str, int | None, object, str]] = [("paper", 1, None, paper_text(paper.title, paper.abstract))]
    for section in paper.sections.all():
        items.append(("section", section.page_start, section, section_text(section.title, section.text)))
    title = _short_title(paper)
    pages = list(paper.pages.all())
    for page in pages:
        items += [("passage", page.number, None, f"{title}: {passage}") for passage in page_passages(page.text)]
    items = [item for item in items if len(item[3]) > 3]
    vectors = embed([text for *_, text in items])
    documents = [SearchDocument(doc_type=kind, paper=paper, section=section, page=page, text=text, embedding=vector)
                 for (kind, page, section, text), vector in zip(items, vectors, strict=True)]
    documents += [SearchDocument(doc_type="page", paper=paper, page=page.number, text=f"{title}: {page.text}")
                  for page in pages if page.text.strip()]
    with transaction.atomic():
        SearchDocument.objects.filter(paper=paper, doc_type__in=["paper", "section", "passage", "page"]).delete()
        docs = SearchDocument.objects.bulk_create(documents)
        _refresh_fts([d.pk for d in docs])
    return len(docs)
