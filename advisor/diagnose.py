"""Diagnose: a production symptom or error message in plain words -> the techniques that address it, with
engine flags, paper evidence and production reports from crawled GitHub issues.

Runs for `manage.py diagnose`, `POST /api/diagnose` and the /diagnose/ page. Techniques are ranked by
three signals: how close the text is to the symptoms each technique lists (embedding similarity and
shared words, ontology/data/techniques.json), whether it uses a technique's own words, and which
techniques the facts that hybrid search finds for the text are linked to. Each finding cites the
linked facts nearest to the text (one per paper), the flags engines ship it under (advisor.profiles),
and the repository issues whose titles speak of it. Text that matches no symptom and no technique is
answered as such, never with the nearest unrelated technique.

A pasted error is recognised first (advisor.known_failures: the engine's own error strings, per
release): those findings come first and carry the fix — the flag as the engine and release spell
it, the number to set with its arithmetic, the source of the string. Techniques follow only where the
failure's catalog entry names them (they explain why and what the fix costs); a log the catalog does
not know gets techniques only on its own words, and the answer says which detail would help.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from advisor import (
    known_failures,
    library_env,
    named_fixes,
    pins,
    profiles,
    quantities,
    regressions,
    suspects,
    unknown_flags,
    wrappers,
)
from advisor.error_text import Recognised, looks_like_a_log
from advisor.validation import AdvisorInputError
from ontology import selectors as ontology_selectors
from ontology.selectors import TechniqueSpec, techniques, techniques_in_text
from papers import selectors as paper_selectors

MAX_QUERY_CHARS = 2000
MAX_FINDINGS = 3
# A catalogued message matched over at least this many characters was pasted, not paraphrased: nobody describing a
# symptom writes "contains custom code which must be executed to correctly load the model" in their own words, while
# a sentence may well say "CUDA out of memory" (18 characters). Such a match is answered fix first like a log.
PASTED_MATCH_CHARS = 40
# Web pages, forums and chat tools turn quotes typographic (File “/opt/…/scheduler.py”, line 4; cannot import name
# ‘x’); engines print plain ones, which is what the catalog's patterns read.
_PLAIN_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
EVIDENCE_PER_FINDING = 3
REPORTS_PER_FINDING = 3
SEARCH_HITS = 30
# Below this similarity to every listed symptom, and with no technique word or shared symptom word,
# the text is about something the vocabulary does not cover.
MIN_SIMILARITY = 0.40
# A finding must reach this share of the best finding's score: the tail is noise, not a second cause.
MIN_SHARE = 0.6
_STOP = frozenset((
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "without", "is", "are", "was",
    "were", "be", "been", "it", "its", "this", "that", "my", "our", "we", "i", "you", "when", "while",
    "after", "before", "under", "over", "too", "very", "keep", "keeps", "getting", "get", "gets", "has",
    "have", "had", "do", "does", "did", "not", "no", "so", "than", "then", "there", "their", "they", "at",
    "by", "from", "as", "into", "up", "down", "all", "any", "each", "many", "much", "more", "most", "some",
    "same", "every", "whenever",
))


class DiagnoseInputError(AdvisorInputError):
    """Text diagnose cannot work with (`error`, and a `hint` saying what to send instead); the API
    answers it with HTTP 400 like any advisor input error."""


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """Lower-cased, crudely stemmed words of `text` without stop words."""
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1}


@cache
def _symptom_table() -> tuple[list[str], list[str], np.ndarray]:
    """(technique per row, symptom text per row, unit embedding per row) over the whole vocabulary."""
    names, texts = [], []
    for name, spec in techniques().items():
        for symptom in spec.symptoms:
            names.append(name)
            texts.append(symptom)
    return names, texts, ontology_selectors.text_embeddings(texts)


def _lexical(words: set[str], spec: TechniqueSpec) -> tuple[float, str | None]:
    """Best share of a symptom's words the text contains, and that symptom. A symptom that names the technique's
    own subject ("out of memory with many adapters") is the technique's condition: it counts only when the text
    names that subject too, so a plain out-of-memory does not suggest multi-LoRA serving."""
    subject = set().union(*(content_words(w) for w in spec.words)) if spec.words else set()
    named = bool(words & subject)
    best, which = 0.0, None
    for symptom in spec.symptoms:
        want = content_words(symptom)
        if want & subject and not named:
            continue
        share = len(words & want) / len(want) if want else 0.0
        if share > best:
            best, which = share, symptom
    return best, which


def _fact_votes(query: str) -> dict[str, float]:
    """Reciprocal-rank votes of the facts search finds for the text, per technique they are linked to."""
    hits = ontology_selectors.hybrid_search(query, limit=SEARCH_HITS, types=("fact",))
    linked = ontology_selectors.techniques_of_facts([h["fact_id"] for h in hits if h.get("fact_id")])
    votes: dict[str, float] = {}
    for rank, hit in enumerate(hits):
        for name in linked.get(int(hit.get("fact_id") or 0), []):
            votes[name] = votes.get(name, 0.0) + 1.0 / (rank + 10)
    top = max(votes.values(), default=0.0)
    return {name: v / top for name, v in votes.items()} if top else {}


def rank_techniques(query: str, strict: bool = False) -> list[dict[str, Any]]:
    """Techniques for the text, best first: name, score, similarity, symptom (the listed one it matches best).

    `strict` (a pasted log the failure catalog does not know): only techniques the text names or whose
    listed symptom it mostly shares words with; embedding closeness alone says little about a traceback."""
    names, texts, matrix = _symptom_table()
    sims = matrix @ ontology_selectors.text_embeddings([query])[0]
    words = content_words(query)
    named = set(techniques_in_text(query))
    votes = _fact_votes(query)
    ranked: list[dict[str, Any]] = []
    for name, spec in techniques().items():
        rows = [i for i, n in enumerate(names) if n == name]
        best_row = max(rows, key=lambda i: sims[i])
        similarity = float(sims[best_row])
        lexical, symptom = _lexical(words, spec)
        if similarity < MIN_SIMILARITY and lexical < 0.5 and name not in named:
            continue
        if strict and lexical < 0.5 and name not in named:
            continue
        score = similarity + 0.5 * lexical + 0.3 * (name in named) + 0.3 * votes.get(name, 0.0)
        ranked.append({"name": name, "score": round(score, 4), "similarity": round(similarity, 4),
                       "symptom": symptom if lexical >= similarity else texts[best_row]})
    ranked.sort(key=lambda r: (-r["score"], r["name"]))
    if ranked:
        ranked = [r for r in ranked if r["score"] >= MIN_SHARE * ranked[0]["score"]]
    return ranked[:MAX_FINDINGS]


def _evidence(vector: np.ndarray, name: str) -> list[dict[str, Any]]:
    """The linked facts nearest to the text, one per paper, papers that name the technique most often first;
    never from a neighbour paper screening set aside (a training or pruning paper is not serving advice)."""
    neighbours = paper_selectors.neighbour_papers()
    rows = [row for row in ontology_selectors.technique_facts_near(vector, name, limit=80)
            if row["paper"] not in neighbours]
    named: dict[str, int] = {}
    for row in rows:
        named[row["paper"]] = named.get(row["paper"], 0) + row["names_technique"]
    out, seen = [], set()
    # A paper naming the technique in more of the facts nearest the text treats it in depth; one that names
    # it once (a related-work line) comes after, however near that line is. With a few dozen papers
    # per technique, nearness alone let passing mentions crowd out the papers that built or measured it.
    for row in sorted(rows, key=lambda r: (-named[r["paper"]], r["distance"])):
        if row["paper"] not in seen:
            seen.add(row["paper"])
            out.append({"paper": row["paper"], "page": row["page"], "quote": row["quote"]})
        if len(out) == EVIDENCE_PER_FINDING:
            break
    return out


def _actions(name: str) -> list[dict[str, Any]]:
    """The engines' switches for a technique; `direction` "set": each flag turns the technique on."""
    return [{"engine": f.engine, "flag": f.flag, "since": f.since, "direction": "set", "source": f.source}
            for f in profiles.technique_flags(name)]


def _issues() -> list[dict[str, str]]:
    """Every production signal of the crawled repositories: repo, issue URL, title."""
    return [{"repo": full_name, "issue": signal.get("url", ""), "title": signal.get("title") or ""}
            for full_name, signals in paper_selectors.repo_production_signals()
            for signal in signals]


def _reports(name: str, symptom: str, issues: list[dict[str, str]]) -> list[dict[str, str]]:
    """Issues of crawled repositories whose titles use the technique's words or two words of its matched symptom."""
    found = [i for i in issues if name in techniques_in_text(i["title"])
             or len(content_words(symptom) & content_words(i["title"])) >= 2]
    return found[:REPORTS_PER_FINDING]


def _technique_finding(vector: np.ndarray, name: str, why: str, symptom: str,
                       issues: list[dict[str, str]], engine: str | None = None) -> dict[str, Any]:
    """A technique with its switches (only the named engine's when the text names one), evidence and reports."""
    spec = techniques()[name]
    actions = [a for a in _actions(spec.name) if engine is None or a["engine"] == engine]
    return {"kind": "technique", "technique": spec.name, "title": spec.title, "why": why,
            "actions": actions, "evidence": _evidence(vector, spec.name),
            "reports": _reports(spec.name, symptom, issues)}


def _failure_finding(m: known_failures.Match, rec: Recognised, issues: list[dict[str, str]]) -> dict[str, Any]:
    """A recognised failure: its fixes (flag, value, arithmetic, source) first, then where its string lives."""
    sig = m.signature
    where = f" ({profiles.engine_label(m.engine)})" if m.engine else ""
    return {"kind": "known_failure", "technique": None, "signature": sig.id, "title": f"{sig.title}{where}",
            "why": f"This is a known {sig.kind} failure; the fixes below are ordered as to try them.",
            "actions": known_failures.actions(m, rec), "evidence": [],
            "source": {"url": sig.source, "quote": sig.quote, "seen_in": [s.model_dump() for s in sig.seen_in]},
            "numbers": known_failures.numbers(m),
            "reports": known_failures.reports_for(sig, issues)[:REPORTS_PER_FINDING]}


def _given(findings: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(a["engine"], a["flag"], a["direction"]) for f in findings for a in f["actions"]}


def _fix_finding(kind: str, title: str, why: str, actions: list[dict[str, Any]],
                 findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A finding of fixes not read from the catalog, less the actions an earlier finding already gives; None when
    nothing is left."""
    given = _given(findings)
    actions = [a for a in actions if (a["engine"], a["flag"], a["direction"]) not in given]
    if not actions:
        return None
    return {"kind": kind, "technique": None, "signature": None, "title": title, "why": why, "actions": actions,
            "evidence": [], "source": None, "numbers": {}, "reports": []}


# Builds one fix finding from the text, what was recognised in it and the findings ranked above it (whose actions it
# leaves out); None when the text gives it nothing.
_FindingBuilder = Callable[[str, Recognised, list[dict[str, Any]]], dict[str, Any] | None]


def _named_finding(query: str, rec: Recognised, failures: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The settings the message itself asks to change (advisor.named_fixes), less those a recognised
    failure already answers; None when it names none."""
    return _fix_finding("named_fix", "The message names its own fix",
                        "The error text asks for these settings itself; they are spelt as the recognised engine and "
                        "release spell them.", named_fixes.actions(query, rec), failures)


def _unknown_flag_finding(query: str, rec: Recognised, findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The launcher refused a flag (advisor.unknown_flags): the release that has it, or the documented spelling;
    None when no flag was refused."""
    return _fix_finding("unknown_flag", "The launcher refused a flag",
                        "The engine's argument parser does not know a flag the command passes: either the installed "
                        "release predates it or the command misspells it.", unknown_flags.actions(query, rec), findings)


def _pin_finding(query: str, rec: Recognised, findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The release a package's stated range asks for (advisor.pins); None when the text states no range."""
    return _fix_finding("pin", "A package is outside the range it must be in",
                        "The message states the releases a package must be in and the one it found: move it into "
                        "that range.", pins.actions(query, rec), findings)


def _regression_finding(query: str, rec: Recognised, findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The release that worked, when the text says the failure began with an update (advisor.regressions); None
    when it does not."""
    return _fix_finding("regression", "It broke with an update",
                        "The text says an update brought this failure: the release before it is the quickest way back "
                        "to serving while the regression is reported.", regressions.actions(query, rec), findings)


def _quantity_finding(query: str, rec: Recognised, findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The flags the message's comparison of quantities moves (advisor.quantities); None when it compares none."""
    return _fix_finding("quantity", "The message compares a setting with what it needs",
                        "The error says one quantity exceeds or lacks another; these flags set them, in the engine's "
                        "own spelling.", quantities.actions(query, rec), findings)


def _suspect_finding(text: str, rec: Recognised, findings: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The library variables the text sets and the engine features to rule out for a crash that names no cause
    (advisor.library_env, advisor.suspects); None when none apply."""
    found = suspects.suspects(text, rec)
    # a library variable the text itself sets is the likeliest suspect: the text turns it on
    actions = library_env.actions(text, rec) + [a for a in (suspects.action(s, rec) for s in found) if a is not None]
    # last: an engine bug is what is left when no feature is the cause, fixed in a later release or brought in by a
    # recent one
    actions += suspects.release_moves(text, rec)
    return _fix_finding("suspect", "Settings and features to rule out, one at a time",
                        "The error says where it stopped, not why. Undo these settings or turn these features off one "
                        "at a time, the most implicated first; the one whose absence stops the failure is the cause.",
                        actions, findings)


def _missing(rec: Recognised, answered: bool) -> list[str]:
    """The details that would sharpen the answer, in the order to ask for them."""
    missing = []
    if rec.engine is None:
        missing.append("the engine (vLLM, SGLang, TGI, TensorRT-LLM or llama.cpp)")
    if rec.version is None:
        missing.append("the engine version")
    if rec.compute_capability is None and rec.gpu_text:
        # the text names a GPU InfraWiki's GPU list does not hold ("RTX 5070 Ti"): its capability is what is missing
        missing.append(f"the compute capability of the {rec.gpu_text} (e.g. the 'compute capability 12.0' a CUDA "
                       "log prints)")
    elif rec.compute_capability is None:
        missing.append("the GPU model")
    if not answered:
        missing.append("the full error (the last lines of the traceback)")
    return missing


def diagnose(text: str) -> dict[str, Any]:
    """`{"query", "findings": [{"kind", "technique", "title", "why", "actions", "evidence", "reports", ...}],
    "answered", "message", "recognised", "missing"}`: known failures first (their findings add `signature`,
    `source` and `numbers`; their actions `direction`, `value`, `arithmetic`, `why`, `source`)."""
    if not isinstance(text, str) or not text.strip():
        raise DiagnoseInputError("describe the symptom or paste the error message",
                                 'e.g. diagnose "CUDA out of memory with many concurrent requests"')
    text = text.translate(_PLAIN_QUOTES)
    query = " ".join(text.split())
    if len(query) > MAX_QUERY_CHARS:
        raise DiagnoseInputError(f"the text is {len(query)} characters; at most {MAX_QUERY_CHARS} are read",
                                 "paste the error line and a sentence about when it happens")
    vector = ontology_selectors.text_embeddings([query])[0]
    issues = _issues()
    rec, matches = known_failures.match(query, pasted=text)
    failures = [_failure_finding(m, rec, issues) for m in matches[:MAX_FINDINGS]]
    # Right after the best catalogued failure (or first), in this order: what the message asks for itself, the
    # launcher's own complaint about a flag, a package range the message states, and the person's own account that an
    # update broke it. Each later finding drops the actions an earlier one already gives.
    read_off = []
    at = 1
    own_fixes: tuple[_FindingBuilder, ...] = (_named_finding, _unknown_flag_finding, _pin_finding, _regression_finding)
    for build in own_fixes:
        found = build(query, rec, failures)
        if found is not None:
            failures = (failures[:at] + [found] + failures[at:])[:MAX_FINDINGS]
            read_off.append(found)
            at += 1
    # Then what the message's comparison of quantities moves, then the features to rule out for a crash: both read
    # messages no signature was written for, so they rank below any that was.
    read_words: tuple[_FindingBuilder, ...] = (_quantity_finding, _suspect_finding)
    for build in read_words:
        found = build(query, rec, failures)
        if found is not None:
            failures = (failures + [found])[:MAX_FINDINGS]
            read_off.append(found)
    findings: list[dict[str, Any]] = []
    # A pasted log, an engine's own error string or a long stretch of a catalogued message is answered fix first; a
    # sentence that only uses words an error also uses ("CUDA out of memory with many requests") keeps the
    # literature first and the fix after.
    fix_first = bool(read_off) or bool(matches) and (
        looks_like_a_log(query) or any(m.signature.id in known_failures.engine_ids() or m.span >= PASTED_MATCH_CHARS
                                       for m in matches))
    if fix_first:
        findings = failures
        explained = [n for m in matches for n in m.signature.explains if n in techniques()]
        for name in list(dict.fromkeys(explained))[: MAX_FINDINGS - len(findings)]:
            spec = techniques()[name]
            findings.append(_technique_finding(vector, name, f"{spec.description} Why it bears on this error: "
                                               f"it addresses {spec.symptoms[0] if spec.symptoms else spec.title}.",
                                               spec.symptoms[0] if spec.symptoms else spec.title, issues, rec.engine))
    else:
        for ranked in rank_techniques(query, strict=looks_like_a_log(query)):
            spec = techniques()[ranked["name"]]
            findings.append(_technique_finding(vector, spec.name, f"{spec.description} It is known for: {ranked['symptom']}.",
                                               ranked["symptom"], issues, rec.engine))
        findings += failures
    findings = wrappers.respell(findings, query)
    missing = _missing(rec, bool(failures))
    if findings:
        message = ""
    elif looks_like_a_log(query):
        message = ("This error is not in InfraWiki's failure catalog and names no serving technique. "
                   f"To narrow it down, send {', '.join(missing)}.")
    else:
        message = ("This does not match any serving symptom or technique InfraWiki knows. Describe what you "
                   "observe while serving (e.g. latency, memory or throughput) or paste the error message, "
                   f"and add {', '.join(missing)}; the techniques InfraWiki knows are listed at /techniques/.")
    wrapper = wrappers.running(rec.engine, query)
    recognised = {**rec.as_dict(), "failures": [m.signature.id for m in matches],
                  "wrapper": wrapper.name if wrapper else None}
    return {"query": query, "findings": findings, "answered": bool(findings), "message": message,
            "recognised": recognised, "missing": missing}
