"""`python -m benchmarks.extraction` (make bench-extraction): InfraWiki's own LLM workload, end to end.

The real extraction (rules, then the LLM on each paper's best passages, through the built-in
OpenAI-compatible server on loopback) over the corpus PDFs, on the extraction model of `make run`
(Qwen2.5-Coder-1.5B) unless `--model` says otherwise, up to three times on one loaded model:

- **batched**: a paper's LLM calls sent at once (`LlmExtractor(max_concurrency=N)`), prefix cache on;
- **no prefix cache**: the same, with the server's prefix caching switched off;
- **one at a time**: prefix cache on, `max_concurrency=1`.

Each run starts from a cold prefix cache, after one untimed rules-only extraction (the first call loads
the vocabulary and embedding model once). Reported per run: papers/hour of extraction (PDF parsing is
done once beforehand and reported apart), the LLM's share of that time, LLM completion tokens/s over
the time spent in LLM calls,
the prefix-cache hit rate (prompt tokens served from the cache / prompt tokens looked up), and whether
the facts equal the batched run's. Every prompt starts with the same system message (instructions and
few-shot), which is what the prefix cache is for. The machine's load average is reported beside the
figures, since they depend on it. Needs ../shared's PDFs (or `--pdfs`); not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import inference  # noqa: F401 - first, so torch's allocator takes huge pages (inference/README.md)
from inference.config import Config
from inference.engine import LLMEngine
from inference.loader.default_model import EXTRACTION_MODEL
from inference.server import InferenceServer
from infrawiki.env import shared_dir
from ontology.extraction.llm import LlmClient, LlmExtractor, answer_schema
from ontology.extraction.pipeline import extract_document
from papers.pdf import ParsedPdf, PdfError, parse_pdf

RUNS = (("batched", True, None), ("no_prefix_cache", False, None), ("one_at_a_time", True, 1))


def load_documents(folder: Path, max_papers: int) -> tuple[list[tuple[str, ParsedPdf]], float, list[str]]:
    """(name, document) for the first `max_papers` PDFs that parse, the seconds parsing took, and what failed."""
    docs: list[tuple[str, ParsedPdf]] = []
    failed: list[str] = []
    started = time.perf_counter()
    for path in sorted(folder.glob("*.pdf")):
        if len(docs) >= max_papers:
            break
        try:
            docs.append((path.name, parse_pdf(path)))
        except PdfError as exc:
            failed.append(f"{path.name}: {exc}")
    return docs, time.perf_counter() - started, failed


def run(engine: LLMEngine, client: LlmClient, docs: list[tuple[str, ParsedPdf]], prefix_caching: bool,
        concurrency: int, max_passages: int) -> dict[str, Any]:
    """One pass over the documents; figures plus the facts (to compare runs)."""
    assert engine.set_prefix_caching(prefix_caching), "the engine must be idle between runs"
    bm = engine.block_manager
    hits, queries = bm.prefix_hits, bm.prefix_queries
    client.usage = {key: 0 for key in client.usage}
    extractor = LlmExtractor(client, max_passages=max_passages, max_concurrency=concurrency)
    facts, llm_s, started = {}, 0.0, time.perf_counter()
    for name, doc in docs:
        result = extract_document(doc, llm=extractor)
        llm_s += result.stats["llm_s"]
        facts[name] = sorted(json.dumps(f, sort_keys=True, default=str) for f in result.facts)
    seconds = time.perf_counter() - started
    usage = dict(client.usage)
    looked_up = bm.prefix_queries - queries
    return {"papers": len(docs), "seconds": round(seconds, 2), "papers_per_hour": round(3600 * len(docs) / seconds, 1),
            "llm_s": round(llm_s, 2), "llm_share": round(llm_s / seconds, 3), "llm_requests": usage["llm_requests"],
            "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"],
            "llm_tokens_per_s": round(usage["completion_tokens"] / llm_s, 1) if llm_s else 0.0,
            "prefix_cache_hit_rate": round((bm.prefix_hits - hits) / looked_up, 3) if looked_up else 0.0,
            "prefix_caching": prefix_caching, "max_concurrency": concurrency, "facts": facts}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.extraction", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pdfs", type=Path, default=None, help="folder of PDFs (default: ../shared/corpus/pdfs)")
    p.add_argument("--max-papers", type=int, default=3)
    p.add_argument("--model", default=EXTRACTION_MODEL.name,
                   help=f"GGUF, HF folder or packaged model name (default: {EXTRACTION_MODEL.name})")
    p.add_argument("--max-passages", type=int, default=8, help="passages per paper sent to the LLM")
    p.add_argument("--runs", default=",".join(label for label, _, _ in RUNS),
                   help="which runs, comma-separated (batched first when comparing)")
    p.add_argument("--dtype", default="auto")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args = p.parse_args(argv)
    folder = args.pdfs or shared_dir() / "corpus" / "pdfs"
    if not folder.is_dir():
        print(f"error: no PDF folder at {folder}; pass --pdfs FOLDER", file=sys.stderr)
        return 2
    def say(*parts: object) -> None:
        if not args.json:
            print(*parts, flush=True)

    docs, parse_s, failed = load_documents(folder, args.max_papers)
    if not docs:
        print(f"error: no PDF in {folder} parsed ({'; '.join(failed) or 'none found'})", file=sys.stderr)
        return 2
    say(f"{len(docs)} papers parsed in {parse_s:.1f} s from {folder}" + (f"; failed: {failed}" if failed else ""))
    runs = [run_spec for run_spec in RUNS if run_spec[0] in args.runs.split(",")]
    engine = LLMEngine(Config(model=args.model, dtype=args.dtype, max_num_seqs=max(8, args.max_passages),
                              max_num_batched_tokens=512, kv_cache_memory_gib=0.5, max_model_len=4096))
    server = InferenceServer(("127.0.0.1", 0), engine, "bench")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = LlmClient(f"http://127.0.0.1:{server.server_address[1]}/v1", "bench")
        client.chat("warm-up", answer_schema(), max_tokens=4)  # compiles the grammar and the decode loop
        extract_document(docs[0][1])  # the rules' first call loads what they load once (vocabulary, embeddings)
        results: dict[str, Any] = {"model": engine.loaded.name, "parse_s": round(parse_s, 2),
                                   "papers": [name for name, _ in docs], "max_passages": args.max_passages,
                                   "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
                                   "cpus": os.cpu_count()}
        for label, caching, concurrency in runs:
            figures = run(engine, client, docs, caching, concurrency or args.max_passages, args.max_passages)
            results[label] = figures
            say(f"  {label:16s} {figures['papers_per_hour']:8.1f} papers/h  LLM {100 * figures['llm_share']:4.1f} % of the time"
                f"  {figures['llm_tokens_per_s']:6.1f} LLM tok/s"
                f"  prefix-cache hits {100 * figures['prefix_cache_hit_rate']:5.1f} %  ({figures['seconds']:.1f} s, "
                f"{figures['llm_requests']} LLM calls, {figures['prompt_tokens']} prompt + "
                f"{figures['completion_tokens']} completion tokens)")
    finally:
        server.shutdown()
        server.server_close()
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    compared = [label for label, _, _ in runs if label != "batched"]
    base_facts = results["batched"].pop("facts") if "batched" in results else None
    for label in compared:
        facts = results[label].pop("facts")
        if base_facts is not None:
            results[label]["same_facts_as_batched"] = facts == base_facts
            results[f"batched_vs_{label}"] = round(results["batched"]["papers_per_hour"] / results[label]["papers_per_hour"], 2)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        say(f"load average (1, 5, 15 min) on {results['cpus']} CPUs: before {results['load_average_1_5_15']}, "
            f"after {results['load_average_after']}")
        for label in compared:
            if base_facts is not None:
                say(f"batched extraction is {results[f'batched_vs_{label}']:.2f}x the {label} run; facts equal: "
                    f"{results[label]['same_facts_as_batched']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
