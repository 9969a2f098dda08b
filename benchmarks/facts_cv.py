"""`python -m benchmarks.facts_cv`: leave-one-paper-out recall of the fact extractor on the development gold.

Why: the parameter vocabulary (ontology/data/parameters.json, synonyms.json) grew while reading the
development papers, so recall measured on them overstates what an unseen paper gets (0.8 on the
development papers against 0.24 on the validation split). This estimates the unseen figure from the
development gold alone: each development paper is scored by ../shared/eval/facts_eval.py with the
vocabulary that exists only because of that paper taken out.

The vocabulary records no origin, so "only because of that paper" is approximated by the gold: a
catalogue entry (with its phrases and synonyms) or a single synonym is removed for paper P when its
name, read through the scorer's synonym list, is a gold parameter of P and of no other development
paper. Rules that hard-code such a name are not removed, so the figure is an upper bound of the
leave-one-out one; `--strict` also drops, through a wrapper around `extract_pdf`, every extracted fact
carrying a removed name (a lower bound: a coined name may legitimately equal it).

Reads only development gold (the validation split is never an input). Rules only: the LLM is turned
off through a dead INFRAWIKI_LLM_URL. One extraction per paper, as the scorer runs it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("INFRAWIKI_SHARED_DIR", ROOT.parent / "shared"))
SCORER = SHARED / "eval" / "facts_eval.py"
# (gold file, PDF folder) pairs of the development split only.
DEV_SETS = (
    (ROOT / "tests/data/papers/gold_facts_dev_new.jsonl", ROOT / "tests/data/papers/pdfs"),
    (SHARED / "eval/gold_facts_dev.jsonl", SHARED / "corpus/pdfs"),
)
_LINE = re.compile(r"^(?P<paper>\S+): recall=(?P<hit>\d+)/(?P<n>\d+) grounded=(?P<g>\d+)/(?P<f>\d+)$")


def _key(name: str) -> str:
    return re.sub(r"[-\s_]+", "_", str(name or "").strip().lower()).strip("_")


def scorer_groups() -> dict[str, str]:
    """The scorer's synonym table: a normalised name -> its group (the scorer's canonical name)."""
    table: dict[str, str] = {}
    path = SHARED / "eval" / "synonyms.json"
    for canon, alts in json.loads(path.read_text()).items():
        for alt in [canon, *alts]:
            table[_key(alt)] = _key(canon)
    return table


def exclusive_groups(gold: dict[str, list[dict]], groups: dict[str, str]) -> dict[str, set[str]]:
    """For each paper, the name groups that no other development paper's gold uses."""
    used = {paper: {groups.get(_key(g["parameter"]), _key(g["parameter"])) for g in facts} for paper, facts in gold.items()}
    return {paper: names - set().union(*(other for p, other in used.items() if p != paper)) for paper, names in used.items()}


def vocabulary_without(names: set[str], groups: dict[str, str], data_dir: Path, out: Path) -> set[str]:
    """Write parameters.json/synonyms.json minus the entries and synonyms in `names` (scorer groups) to
    `out`; return every vocabulary name removed (normalised)."""
    def group(name: str) -> str:
        return groups.get(_key(name), _key(name))

    parameters = json.loads((data_dir / "parameters.json").read_text())
    synonyms = json.loads((data_dir / "synonyms.json").read_text())
    removed = {_key(name) for name in parameters if group(name) in names}
    removed |= {_key(name) for name in synonyms if group(name) in names}
    kept_synonyms: dict[str, list[str]] = {}
    for canon, alts in synonyms.items():
        if _key(canon) in removed:
            removed |= {_key(alt) for alt in alts}
            continue
        kept = [alt for alt in alts if group(alt) not in names]
        removed |= {_key(alt) for alt in alts if group(alt) in names}
        kept_synonyms[canon] = kept
    out.mkdir(parents=True, exist_ok=True)
    (out / "parameters.json").write_text(json.dumps({k: v for k, v in parameters.items() if _key(k) not in removed}))
    (out / "synonyms.json").write_text(json.dumps(kept_synonyms))
    for extra in data_dir.iterdir():  # gpus.json, techniques.json: unchanged
        if extra.suffix == ".json" and not (out / extra.name).exists():
            (out / extra.name).write_text(extra.read_text())
    return removed


def run_extractor(data_dir: str, strict_names: str, argv: list[str]) -> None:
    """Stand-in for `python manage.py extract_pdf PDF --json` with the vocabulary read from `data_dir`;
    with `strict_names` (a JSON list), facts carrying one of those names are left out of the output."""
    import ontology.vocabulary as vocabulary

    vocabulary.DATA_DIR = Path(data_dir)
    sys.argv = argv
    if not strict_names:
        runpy.run_path(str(ROOT / "manage.py"), run_name="__main__")
        return
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        runpy.run_path(str(ROOT / "manage.py"), run_name="__main__")
    text = buffer.getvalue()
    result = json.loads(text[text.find("{"):])
    banned = set(json.loads(strict_names))
    result["facts"] = [fact for fact in result["facts"] if _key(fact.get("parameter")) not in banned]
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strict", action="store_true", help="also drop extracted facts carrying a removed name")
    parser.add_argument("--papers", nargs="*", help="only these development papers (arXiv ids)")
    args = parser.parse_args()
    groups = scorer_groups()
    gold: dict[str, list[dict]] = defaultdict(list)
    pdf_dir: dict[str, Path] = {}
    for gold_path, pdfs in DEV_SETS:
        for line in gold_path.read_text().splitlines():
            if line.strip():
                fact = json.loads(line)
                gold[fact["paper"]].append(fact)
                pdf_dir[fact["paper"]] = pdfs
    exclusive = exclusive_groups(gold, groups)
    env = {**os.environ, "INFRAWIKI_LLM_URL": "http://127.0.0.1:9"}
    totals = {"hit": 0, "n": 0, "g": 0, "f": 0}
    scored = 0
    with tempfile.TemporaryDirectory(prefix="facts_cv_") as tmp:
        for paper in sorted(gold):
            if args.papers and paper not in args.papers:
                continue
            fold = Path(tmp) / paper
            removed = vocabulary_without(exclusive[paper], groups, ROOT / "ontology" / "data", fold / "data")
            (fold / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold[paper]))
            scored += 1
            wrapper = fold / "python"
            wrapper.write_text("#!/bin/sh\nexec {} -m benchmarks.facts_cv --run {} '{}' \"$@\"\n".format(
                sys.executable, fold / "data", json.dumps(sorted(removed)) if args.strict else ""))
            wrapper.chmod(0o755)
            run = subprocess.run([sys.executable, str(SCORER), str(ROOT), str(fold / "gold.jsonl"), str(pdf_dir[paper]),
                                  str(wrapper)], capture_output=True, text=True, env=env, cwd=ROOT, check=False)
            for line in run.stdout.splitlines():
                found = _LINE.match(line)
                if found:
                    for name in totals:
                        totals[name] += int(found.group(name))
                    print(f"{paper}: recall={found['hit']}/{found['n']} grounded={found['g']}/{found['f']} "
                          f"(vocabulary removed: {len(removed)} names for {len(exclusive[paper])} gold names of this "
                          f"paper only)", flush=True)
                elif line.startswith(paper):
                    print(line, run.stderr[-2000:], flush=True)
                    totals["n"] += len(gold[paper])
    print(f"cross-validated{' strict' if args.strict else ''} recall={totals['hit'] / max(totals['n'], 1):.2f} "
          f"({totals['hit']}/{totals['n']}) grounded={totals['g'] / max(totals['f'], 1):.2f} papers={scored}")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[1] == "--run":
        run_extractor(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        main()
