"""`python -m benchmarks.quote_display`: how much of what the product shows as a quote is figure or table soup?

Run by hand (tens of minutes on a loaded 2-core machine: the corpus PDFs are parsed, extracted with the rule
extractors and indexed), never in tests. It builds a throw-away database, ingests ../shared/corpus/pdfs, and
collects every text shown as a quote on the three surfaces that show them: search results (one query per
technique title and per parameter of the vocabulary, top 10), technique evidence (`technique_facts`, every
linked fact) and advisor evidence (`evidence_for` per parameter, top 5). Each surface is read twice from the
same database: as stored ("before": the display step of ontology.quotes switched off) and as shown ("after").
Both are measured by `is_soup` (the text as a whole is soup) and `has_soup` (it holds a run of soup). Items
left out for having no readable form are counted from ontology.quotes' log. Set PDF_PARSE_TIMEOUT_S on a
loaded machine. `--dump FILE` writes the texts as JSON.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path

from benchmarks.database import throwaway_database
from infrawiki.env import shared_dir

ROOT = Path(__file__).resolve().parent.parent
SURFACES = ("search", "technique_evidence", "advisor_evidence")


class _DropCounter(logging.Handler):
    """Counts the quotes ontology.quotes leaves out (its "left out N of M" log lines)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.dropped = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        match = re.match(r"left out (\d+) of", message)
        self.dropped += int(match.group(1)) if match else "left out: no readable text" in message


def ingest(pdfs: list[Path]) -> None:
    """Ingest and extract `pdfs` (rule extractors only)."""
    from papers.services import ingest_pdf
    from papers.services.extraction import extract_paper

    for path in pdfs:
        paper = ingest_pdf(path, arxiv_id=path.stem)
        extract_paper(paper.pk, use_llm=False)
        print(f"ingested {path.name}", file=sys.stderr)


def collect() -> dict[str, list[str]]:
    """The texts every surface shows for the stored corpus."""
    from ontology.selectors import evidence_for, hybrid_search, technique_facts
    from ontology.techniques import techniques
    from ontology.vocabulary import parameter_specs

    queries = [spec.title for spec in techniques().values()] + [name.replace("_", " ") for name in parameter_specs()]
    shown: dict[str, list[str]] = {surface: [] for surface in SURFACES}
    for query in queries:
        shown["search"] += [r["text"] for r in hybrid_search(query, limit=10)]
    shown["technique_evidence"] = [row["quote"] for row in technique_facts()]
    for name in parameter_specs():
        shown["advisor_evidence"] += [e["quote"] for e in evidence_for(name.replace("_", " "), parameters=[name])]
    return shown


def collect_stored() -> dict[str, list[str]]:
    """The same surfaces with the display step switched off: what they showed before it."""
    from unittest import mock

    with mock.patch("ontology.selectors.with_display_quotes", lambda items, where, key="quote": items), \
            mock.patch("ontology.selectors._readable_results", lambda results: results):
        return collect()


def report(shown: dict[str, list[str]], label: str) -> None:
    from ontology.extraction.text import is_soup
    from ontology.quotes import has_soup

    for surface in SURFACES:
        texts = shown.get(surface, [])
        soup = sum(is_soup(t) for t in texts)
        holding = sum(has_soup(t) for t in texts)
        print(f"{label:7s} {surface:19s} shown {len(texts):5d}  soup {soup:4d} ({soup / max(len(texts), 1):.1%})"
              f"  holding soup {holding:4d} ({holding / max(len(texts), 1):.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="write the shown texts here (JSON)")
    parser.add_argument("--database", default="bench_quote_display", help="name of the throw-away database")
    args = parser.parse_args()
    shared = shared_dir() / "corpus" / "pdfs"
    counter = _DropCounter()
    for name in ("ontology.quotes", "ontology.selectors"):
        logging.getLogger(name).addHandler(counter)
        logging.getLogger(name).setLevel(logging.INFO)
    with throwaway_database(args.database, reuse=False, keep=False):
        ingest(sorted(shared.glob("*.pdf")))
        before = collect_stored()
        after = collect()
    if args.dump:
        args.dump.write_text(json.dumps({"before": before, "after": after}))
    report(before, "before")
    report(after, "after")
    print(f"left out for having no readable form: {counter.dropped}")


if __name__ == "__main__":
    main()
