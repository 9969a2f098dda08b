"""`python -m benchmarks.search_quality`: does hybrid search find the page that answers a question?

Run by hand or `make bench-search-quality` (minutes: every PDF is parsed and indexed; `--facts` also
extracts facts with the rule extractors, which takes a few times longer), never in tests. It builds a
throw-away database, ingests the shared corpus PDFs and the papers of tests/data/papers of the chosen
split, then asks that split's questions ({"question", "paper", "pages": [answering pages]}):
`--split development` (the default) asks tests/data/search_questions_dev.jsonl with the development
papers ingested and the validation papers left out; `--split validation` asks the held-out
tests/data/search_questions_validation.jsonl (written over the validation papers and never used to
tune search) with the validation papers ingested as well; `--split all` ingests everything and reports
both sets. A question is answered at rank r when the r-th result (hybrid search) or r-th page
(baselines) is on one of its pages. Prints hit@5 and MRR for hybrid search beside two baselines
computed in the same run over the same stored page texts: TF-IDF cosine over whole pages and BM25
(k1=1.5, b=0.75) over whole pages.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

from benchmarks.database import throwaway_database
from infrawiki.env import shared_dir

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = {"development": ROOT / "tests" / "data" / "search_questions_dev.jsonl",
             "validation": ROOT / "tests" / "data" / "search_questions_validation.jsonl"}
PAPERS = ROOT / "tests" / "data" / "papers"


def corpus_pdfs(splits: list[str]) -> list[Path]:
    """Shared corpus PDFs plus the papers of `splits` (of tests/data/papers/splits.json) that are present."""
    shared = shared_dir() / "corpus" / "pdfs"
    chosen = json.loads((PAPERS / "splits.json").read_text())
    local = [PAPERS / "pdfs" / name for split in splits for name in chosen[split]]
    missing = [path.name for path in local if not path.is_file()]
    if missing:
        print(f"development PDFs missing (restore them as tests/data/papers/SOURCES.md says): {missing}",
              file=sys.stderr)
    return sorted(shared.glob("*.pdf")) + [path for path in local if path.is_file()]


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[.-][a-z0-9]+)*", text.lower())


def bm25_ranking(pages: list[tuple[str, int, str]], query: str, k1: float = 1.5, b: float = 0.75) -> list[int]:
    """Indexes of `pages` best first by Okapi BM25."""
    docs = [Counter(tokens(text)) for *_, text in pages]
    lengths = [sum(d.values()) for d in docs]
    average = sum(lengths) / max(len(docs), 1)
    df = Counter(term for d in docs for term in d)
    n = len(docs)

    def score(i: int) -> float:
        total = 0.0
        for term in set(tokens(query)):
            if term in docs[i]:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                tf = docs[i][term]
                total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / average))
        return total

    return sorted(range(n), key=lambda i: -score(i))


def tfidf_ranking(pages: list[tuple[str, int, str]]):
    """A function query -> indexes of `pages` best first by TF-IDF cosine."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(token_pattern=r"[A-Za-z0-9]+(?:[.-][A-Za-z0-9]+)*", sublinear_tf=True)
    matrix = vectorizer.fit_transform([text for *_, text in pages])

    def rank(query: str) -> list[int]:
        scores = (matrix @ vectorizer.transform([query]).T).toarray().ravel()
        return sorted(range(len(pages)), key=lambda i: -scores[i])

    return rank


def first_hit(ranked: list[tuple[str, int]], question: dict) -> int | None:
    """1-based rank of the first (paper, page) that answers the question."""
    for rank, (paper, page) in enumerate(ranked, start=1):
        if paper == question["paper"] and page in question["pages"]:
            return rank
    return None


def scores(ranks: list[int | None]) -> tuple[float, float]:
    if not ranks:
        return 0.0, 0.0
    hit5 = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return hit5, mrr


def read_pdf(path: Path) -> tuple[str, list[str]]:
    """(title: the first lines of page 1, page texts in quote form) as PyMuPDF reads them."""
    import pymupdf

    from ontology.extraction.text import collapse

    with pymupdf.open(str(path)) as document:
        texts = [page.get_text() for page in document]
    lines = [line.strip() for line in texts[0].splitlines() if line.strip()]
    return " ".join(lines[:2])[:200], [collapse(text) for text in texts]


def load_corpus(with_facts: bool, splits: list[str]) -> None:
    """Store and index every corpus PDF not yet in the current database: its page texts as
    papers.PaperPage rows, then `index_paper` (passages and the paper document). The full ingest
    (outline and tables) is left out to keep the run in minutes; with facts, the page texts go through
    the ontology's one entry point (rule extractors, stored facts, the index built once)."""
    from ontology.services import index_paper, ingest_document
    from papers.models import Paper
    from papers.pdf import ParsedPdf

    for path in corpus_pdfs(splits):
        if Paper.objects.filter(arxiv_id=path.stem).exists():
            continue
        title, texts = read_pdf(path)
        paper = Paper.objects.create(arxiv_id=path.stem, title=title)
        paper.pages.bulk_create([paper.pages.model(paper=paper, number=n, text=t) for n, t in enumerate(texts, 1)])
        if with_facts:
            ingest_document(paper, ParsedPdf.from_pages(texts, title=paper.title))
        else:
            index_paper(paper)
        print(f"  indexed {paper.arxiv_id} ({len(texts)} pages)", file=sys.stderr)


def evaluate(questions: list[dict]) -> dict[str, tuple[float, float]]:
    from ontology.selectors import hybrid_search
    from papers.models import PaperPage

    pages = [(p.paper.arxiv_id, p.number, p.text) for p in PaperPage.objects.select_related("paper")]
    tfidf = tfidf_ranking(pages)
    ranks: dict[str, list[int | None]] = {"hybrid search": [], "TF-IDF over pages": [], "BM25 over pages": []}
    for question in questions:
        results = hybrid_search(question["question"], limit=20)
        ranks["hybrid search"].append(first_hit([(r["paper"], r["page"]) for r in results], question))
        for name, order in (("TF-IDF over pages", tfidf(question["question"])),
                            ("BM25 over pages", bm25_ranking(pages, question["question"]))):
            ranks[name].append(first_hit([pages[i][:2] for i in order[:20]], question))
    return {name: scores(values) for name, values in ranks.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["development", "validation", "all"], default="development",
                        help="which papers to ingest and whose questions to ask (all: both sets, reported apart)")
    parser.add_argument("--questions", help="ask this question file instead of the split's own")
    parser.add_argument("--db-name", default="infrawiki_bench_search_quality")
    parser.add_argument("--no-load", action="store_true",
                        help="ingest nothing: ask only the questions about papers already in a --reuse database")
    parser.add_argument("--facts", action="store_true", help="also extract and index facts (slow: rules on every page)")
    parser.add_argument("--reuse", action="store_true", help="keep the database and reuse it (papers already in it are not ingested again)")
    args = parser.parse_args(argv)
    splits = ["development", "validation"] if args.split == "all" else [args.split]
    sets = {"questions": Path(args.questions)} if args.questions else {split: QUESTIONS[split] for split in splits}
    asked = {name: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
             for name, path in sets.items()}
    with throwaway_database(args.db_name, reuse=args.reuse, keep=args.reuse):
        from papers.models import Paper

        if not args.no_load:
            load_corpus(args.facts, splits)
        stored = set(Paper.objects.values_list("arxiv_id", flat=True))
        reports = {}
        for name, questions in asked.items():
            questions = [q for q in questions if q["paper"] in stored]
            reports[name] = (len(questions), evaluate(questions))
    for name, (count, results) in reports.items():
        print(f"{name}: {count} questions over {len(stored)} papers")
        for method, (hit5, mrr) in results.items():
            print(f"  {method:<20} hit@5={hit5:.2f} MRR={mrr:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
