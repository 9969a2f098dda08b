"""Storing a knowledge file: `import_knowledge FILE`, and the starter pack on every `make run`.

Idempotent: a second load of the same file changes nothing. What this instance knows better is
kept — a paper it parsed from its own PDF keeps its outline and score; a fact a person reviewed
here is never overwritten (ontology.services.merge_fact); empty metadata fields are filled in,
filled ones are left alone. Each paper is stored in its own transaction and indexed for search at
once, so one bad line is reported (with its number) and the rest of the file still loads.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from knowledge.records import PaperRecord, read_file
from ontology.services import FactValidationError, index_facts, index_paper, link_facts, merge_fact
from papers.services import fill_paper, link_code_urls, record_event, store_imported_score, store_outline

log = logging.getLogger(__name__)
_FILLABLE = ("title", "abstract", "published", "updated", "primary_category", "categories", "doi", "pdf_url",
             "code_urls", "page_count", "environment")


@dataclass
class ImportReport:
    papers_created: int = 0
    papers_changed: int = 0
    papers_unchanged: int = 0
    facts: dict[str, int] = field(default_factory=lambda: {"created": 0, "reviewed": 0, "kept": 0})
    scores: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"papers: {self.papers_created} created, {self.papers_changed} changed, "
                f"{self.papers_unchanged} unchanged; facts: {self.facts['created']} created, "
                f"{self.facts['reviewed']} took a review, {self.facts['kept']} kept as they were; "
                f"{self.scores} scorecard(s) stored; {len(self.errors)} error(s)")


def import_paper(record: PaperRecord, actor: str, report: ImportReport) -> None:
    """Store one paper record (one transaction; the caller catches and reports its errors)."""
    with transaction.atomic():
        values = {name: getattr(record, name) for name in _FILLABLE}
        values["page_count"] = values["page_count"] or None
        paper, created, filled = fill_paper(record.arxiv_id, version=record.version, values=values,
                                            authors=record.authors)
        changed = created or bool(filled)
        link_code_urls(paper, record.code_urls, "seed")
        read_here = bool(paper.pdf_path)
        if not read_here:
            changed = store_outline(paper, record.sections, record.tables, record.read_from_pdf) or changed
        touched = []
        for number, fact in enumerate(record.facts, start=1):
            try:
                outcome, stored = merge_fact(paper, fact.fact_data(), status=fact.status, key=fact.fingerprint,
                                             revisions=[r.model_dump() for r in fact.revisions], actor=actor,
                                             techniques=fact.techniques)
            except FactValidationError as exc:
                report.errors.append(f"{record.arxiv_id} fact {number}: {exc}")
                continue
            report.facts[outcome] += 1
            if outcome != "kept" and stored is not None:
                touched.append(stored)
        if record.score and not read_here and store_imported_score(paper, record.score.model_dump()):
            report.scores += 1
            changed = True
        if changed or touched:
            index_paper(paper)
            index_facts(touched)
            link_facts(touched)
            record_event(stage="import", paper=paper,
                         message=f"loaded from {actor}: {len(touched)} fact(s) stored or reviewed")
    if created:
        report.papers_created += 1
    elif changed or touched:
        report.papers_changed += 1
    else:
        report.papers_unchanged += 1


def import_knowledge(path: Path, actor: str | None = None) -> ImportReport:
    """Load every paper of the knowledge file at `path`. Raises KnowledgeFileError for a file that
    is not one; a bad paper line is reported in the result and the others still load."""
    header, lines = read_file(path)
    actor = actor or header.origin
    report = ImportReport()
    for number, record in lines:
        if isinstance(record, str):
            report.errors.append(record)
            continue
        try:
            import_paper(record, actor, report)
        except Exception as exc:  # one bad record must not stop the rest of a team's wiki
            log.exception("importing line %s of %s failed", number, path)
            report.errors.append(f"line {number} ({record.arxiv_id}): {exc}")
    return report
