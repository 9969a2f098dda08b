"""`python -m benchmarks.parse` (make bench-parse): parse speed of the corpus PDFs and Atom import speed.

Reports per corpus PDF the median of `--repeat` parses, against an anchor measured in the same
run: PyMuPDF's plain `get_text()` over the same pages (the least any parser must pay), so the
ratio stays comparable on a busy machine. Then the time to import every recorded arXiv answer
into the database (inside a transaction that is rolled back), against lxml parsing the same bytes.
Needs ../shared (or INFRAWIKI_SHARED_DIR); the product itself does not.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pymupdf
from lxml import etree

from inference.timing import timings
from infrawiki.env import shared_dir
from papers.pdf import parse_pdf

ROOT = Path(__file__).resolve().parent.parent
TARGET_S = 1.5


def _median_time(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    return statistics.median(timings(fn, repeat, clock=clock))


def _plain_text(path: Path) -> None:
    with pymupdf.open(path) as doc:
        for page in doc:
            page.get_text()


def bench_pdfs(pdfs: list[Path], repeat: int) -> dict:
    parse_pdf(pdfs[0])  # load fonts and the table layout model once, outside the timings
    rows = []
    for path in pdfs:
        parse_s = _median_time(lambda p=path: parse_pdf(p), repeat)
        # CPU seconds (all threads) say what the parse costs even when other work slows the wall clock
        cpu_s = _median_time(lambda p=path: parse_pdf(p), 1, clock=time.process_time)
        anchor_s = _median_time(lambda p=path: _plain_text(p), repeat)
        rows.append({"pdf": path.name, "parse_s": round(parse_s, 3), "cpu_s": round(cpu_s, 3),
                     "anchor_s": round(anchor_s, 4), "ratio": round(parse_s / anchor_s, 1)})
        print(f"  {path.name:18} parse {parse_s:6.2f} s (cpu {cpu_s:5.2f} s)   plain text {anchor_s:6.3f} s"
              f"   x{parse_s / anchor_s:5.1f}", flush=True)
    median = statistics.median(r["parse_s"] for r in rows)
    return {"pdfs": rows, "median_parse_s": round(median, 3), "median_cpu_s": statistics.median(r["cpu_s"] for r in rows),
            "load_average": os.getloadavg()[0], "target_s": TARGET_S, "meets_target": median <= TARGET_S}


def bench_atom(files: list[Path], repeat: int) -> dict:
    from django.db import transaction

    from papers.services import import_atom_files

    def import_all() -> None:
        with transaction.atomic():
            import_atom_files(files)
            transaction.set_rollback(True)

    def lxml_only() -> None:
        for path in files:
            etree.fromstring(path.read_bytes(), parser=etree.XMLParser(recover=True))

    import_s = _median_time(import_all, repeat)
    anchor_s = _median_time(lxml_only, repeat)
    return {"files": len(files), "import_s": round(import_s, 3), "lxml_s": round(anchor_s, 4),
            "ratio": round(import_s / anchor_s, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-results" / "parse.json")
    parser.add_argument("--skip-atom", action="store_true", help="PDFs only (no database needed)")
    args = parser.parse_args()
    corpus = shared_dir() / "corpus"
    pdfs = sorted((corpus / "pdfs").glob("*.pdf"))
    if not pdfs:
        raise SystemExit(f"no corpus PDFs under {corpus}; set INFRAWIKI_SHARED_DIR")
    print(f"parsing {len(pdfs)} corpus PDFs, median of {args.repeat} runs each", flush=True)
    result = {"parse": bench_pdfs(pdfs, args.repeat)}
    p = result["parse"]
    print(f"median parse time per PDF: {p['median_parse_s']:.2f} s, {p['median_cpu_s']:.2f} CPU s "
          f"(target <= {TARGET_S} s: {'met' if p['meets_target'] else 'NOT met'}; "
          f"load average {p['load_average']:.1f} on {os.cpu_count()} CPUs)")
    if not args.skip_atom:
        atoms = sorted((corpus / "arxiv_atom").rglob("*.json")) + sorted((corpus / "arxiv_atom").rglob("*.xml"))
        atoms = [a for a in atoms if not a.name.endswith(".body.xml")]  # the .json holds the same body
        result["atom"] = bench_atom(atoms, args.repeat)
        a = result["atom"]
        print(f"import of {a['files']} recorded Atom answers: {a['import_s']:.2f} s "
              f"(lxml alone {a['lxml_s']:.3f} s, x{a['ratio']})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"results in {args.out}")


if __name__ == "__main__":
    main()
