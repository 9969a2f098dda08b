"""The scorecard rules: four sub-scores with evidence, three screening answers, a value matrix, flags.

Pure functions of a ScoringInput and the scoring time `now` (passed explicitly, so tests freeze
time by passing it). Every point given or withheld carries a sentence of evidence a reader can
check; "unknown" is reserved for inputs not gathered yet (paper not parsed, repo not crawled,
facts not extracted), never for "looked and found nothing".
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta

from papers.scoring import text_rules as tr
from papers.scoring.community import field_reports
from papers.scoring.inputs import RepoInput, ScoringInput
from papers.scoring.topics import topics_for

RULES_VERSION = 2  # bump when a rule changes, so every paper gets a fresh Score row
# The four sub-scores in display order with their maximum points; they add up to the total's maximum (10).
SUBSCORE_MAXIMA = {"code_availability": 3, "experimental_realism": 3, "parameter_transparency": 2,
                   "community_feedback": 2}
TIER_THRESHOLD = 6.0
# Screening: a paper whose title names no serving or inference, whose title and abstract spend fewer
# than MIN_SERVING_SHARE of their words on it, and whose body reports no end-to-end serving metric is
# a neighbour (training, pruning, serverless functions): its total is scaled by NEIGHBOUR_WEIGHT.
MIN_SERVING_SHARE = 0.02
NEIGHBOUR_WEIGHT = 0.3
ABSTRACT_WORDS = 400  # an abstract the parser could not delimit reads as its first words
NON_COMMERCIAL = re.compile(r"(?:^|[-_. ])NC(?:[-_. ]|$)|non-?commercial", re.IGNORECASE)
ARXIV_YYMM = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}")


@dataclass(frozen=True)
class ScoringConfig:
    recent_commit_days: int = 30
    too_fresh_days: int = 90

    def __post_init__(self) -> None:
        assert self.recent_commit_days > 0 and self.too_fresh_days >= 0


@dataclass(frozen=True)
class Point:
    rule: str
    points: float
    evidence: str


@dataclass
class SubScore:
    maximum: float
    items: list[Point] = field(default_factory=list)

    @property
    def value(self) -> float:
        return round(min(self.maximum, sum(item.points for item in self.items)), 2)

    def points_for(self, rule: str) -> float:
        return sum(item.points for item in self.items if item.rule == rule)


@dataclass(frozen=True)
class Answer:
    answer: str  # "yes" | "no" | "unknown"
    evidence: str


@dataclass
class Scorecard:
    subscores: dict[str, SubScore]
    screening: dict[str, Answer]
    production_value: float
    implementation_cost: float
    quadrant: str
    value_matrix: dict[str, list[str]]
    flags: list[dict[str, str]]
    topics: list[str]
    fingerprint: str

    @property
    def total(self) -> float:
        points = sum(sub.value for sub in self.subscores.values())
        if self.screening.get("serving_focus", Answer("unknown", "")).answer == "no":
            points *= NEIGHBOUR_WEIGHT
        return round(points, 2)

    @property
    def tier(self) -> str:
        return "recommended" if self.total >= TIER_THRESHOLD else "to_verify"

    def evidence(self) -> dict[str, list[dict]]:
        return {name: [asdict(item) for item in sub.items] for name, sub in self.subscores.items()}


def official_repos(inp: ScoringInput) -> list[RepoInput]:
    return sorted((r for r in inp.repos if r.official), key=lambda r: -(r.stars or 0))


def code_availability(inp: ScoringInput, now: datetime, config: ScoringConfig) -> SubScore:
    """0–3: an official repository exists, it was pushed to recently, it runs CI."""
    sub = SubScore(SUBSCORE_MAXIMA["code_availability"])
    repos = official_repos(inp)
    if repos:
        sub.items.append(Point("official_repository", 1, "official repository: " + ", ".join(r.url for r in repos)))
    elif inp.code_urls:
        sub.items.append(Point("official_repository", 1, f"code link given with the paper: {inp.code_urls[0]}"))
    else:
        sub.items.append(Point("official_repository", 0, "no code repository is linked from the paper"))
        sub.items.append(Point("recent_commits", 0, "no repository to check"))
        sub.items.append(Point("ci", 0, "no repository to check"))
        return sub
    pushed = [r for r in repos if r.pushed_at]
    if not pushed:
        sub.items.append(Point("recent_commits", 0, "unknown: repository not crawled yet (no push date)"))
    else:
        newest = max(pushed, key=lambda r: r.pushed_at)
        age = (now - newest.pushed_at).days
        when = f"last push to {newest.full_name} on {newest.pushed_at:%Y-%m-%d}, {age} days before scoring"
        if newest.archived:
            sub.items.append(Point("recent_commits", 0, f"{newest.full_name} is archived ({when})"))
        elif age <= config.recent_commit_days:
            sub.items.append(Point("recent_commits", 1, when))
        else:
            sub.items.append(Point("recent_commits", 0, f"{when} (more than {config.recent_commit_days})"))
    with_ci = [r for r in repos if r.has_ci]
    if with_ci:
        repo = with_ci[0]
        names = ", ".join(repo.workflows[:4]) or "workflows present"
        sub.items.append(Point("ci", 1, f"CI in {repo.full_name}: {names}"))
    elif any(r.has_ci is False for r in repos):
        sub.items.append(Point("ci", 0, "no CI workflows in " + ", ".join(r.full_name for r in repos)))
    else:
        sub.items.append(Point("ci", 0, "unknown: CI not checked yet"))
    return sub


def _quotes(matches: list[tr.Match]) -> str:
    return "; ".join(str(m) for m in matches)


def experimental_realism(inp: ScoringInput) -> SubScore:
    """0–3: real traces rather than synthetic inputs, real hardware named, end-to-end serving metrics."""
    sub = SubScore(SUBSCORE_MAXIMA["experimental_realism"])
    if not inp.texts:
        for rule in ("real_trace", "real_hardware", "end_to_end_metrics"):
            sub.items.append(Point(rule, 0, "unknown: the paper's text is not parsed yet"))
        return sub
    traces, synthetic = tr.find(tr.REAL_TRACE, inp.texts), tr.find(tr.SYNTHETIC, inp.texts)
    if traces:
        sub.items.append(Point("real_trace", 1, "real traces/datasets: " + _quotes(traces)))
    elif synthetic:
        sub.items.append(Point("real_trace", 0, "only synthetic inputs: " + _quotes(synthetic)))
    else:
        sub.items.append(Point("real_trace", 0, "no named trace or dataset found in the text"))
    hardware = tr.find(tr.HARDWARE, inp.texts)
    if hardware:
        sub.items.append(Point("real_hardware", 1, "hardware named: " + _quotes(hardware)))
    else:
        sub.items.append(Point("real_hardware", 0, "no GPU/accelerator model named in the text"))
    e2e = tr.find(tr.END_TO_END, inp.texts)
    if e2e:
        sub.items.append(Point("end_to_end_metrics", 1, "end-to-end metrics: " + _quotes(e2e)))
    else:
        kernel = tr.find(tr.KERNEL_ONLY, inp.texts)
        why = "only kernel-level timings: " + _quotes(kernel) if kernel else "no end-to-end serving metric found"
        sub.items.append(Point("end_to_end_metrics", 0, why))
    return sub


def _concrete_parameters(inp: ScoringInput) -> dict[str, str]:
    """parameter name -> "name = value unit (p.N: "quote")" for the first fact with a value."""
    found: dict[str, str] = {}
    for fact in inp.facts:
        if not str(fact.value).strip() or fact.parameter in found:
            continue
        where = f"p.{fact.page}: " if fact.page else ""
        quote = f' ({where}"{fact.quote[:120]}")' if fact.quote else ""
        found[fact.parameter] = f"{fact.parameter} = {fact.value} {fact.unit}".rstrip() + quote
    return found


def parameter_transparency(inp: ScoringInput) -> SubScore:
    """0–2: how many distinct knobs the paper publishes a concrete value for (1–2 → 1, ≥3 → 2)."""
    sub = SubScore(SUBSCORE_MAXIMA["parameter_transparency"])
    params = _concrete_parameters(inp)
    if not params:
        why = "no configuration value published" if inp.facts_extracted else "unknown: facts not extracted yet"
        sub.items.append(Point("published_values", 0, why))
        return sub
    points = 2 if len(params) >= 3 else 1
    listed = "; ".join(list(params.values())[:5])
    sub.items.append(Point("published_values", points, f"{len(params)} parameter value(s) published: {listed}"))
    return sub


def community_feedback(inp: ScoringInput) -> SubScore:
    """0–2: popularity (stars/forks), issue activity, and issues reporting production use or failures."""
    sub = SubScore(SUBSCORE_MAXIMA["community_feedback"])
    repos = official_repos(inp)
    if not repos:
        sub.items.append(Point("popularity", 0, "no official repository, so no community signal"))
        return sub
    main = repos[0]
    if main.stars is None:
        sub.items.append(Point("popularity", 0, f"unknown: {main.full_name} not crawled yet"))
        return sub
    stars, forks = main.stars or 0, main.forks or 0
    popularity = 1.0 if stars >= 1000 or forks >= 100 else 0.5 if stars >= 100 or forks >= 10 else 0.0
    sub.items.append(Point("popularity", popularity, f"{main.full_name}: {stars} stars, {forks} forks"))
    issues = main.open_issues or 0
    sub.items.append(Point("issue_activity", 0.5 if issues >= 5 else 0.0, f"{issues} open issues"))
    reports = [report for repo in repos for report in field_reports(repo.issues)]
    if reports:
        listed = "; ".join(str(r) for r in reports[:3])
        sub.items.append(Point("production_reports", 0.5, f"{len(reports)} field report(s) in issues: {listed}"))
    else:
        sub.items.append(Point("production_reports", 0, "no issue reports a failure or use in the field"))
    return sub


def serving_focus(inp: ScoringInput, realism: SubScore) -> Answer:
    """Is this a serving or inference paper at all? "no" for a neighbour (a training system, a pruning
    method, serverless functions) — three generic signals, all absent: the title names serving or
    inference, serving words are at least MIN_SERVING_SHARE of the title and abstract, the body
    reports an end-to-end serving metric (and the abstract says serving at all). "unknown" while the
    body is not read."""
    abstract = next((t.text for t in inp.texts if t.where == "abstract"), "")
    abstract = " ".join(abstract.split()[:ABSTRACT_WORDS])
    hits, words = tr.vocabulary_share(tr.SERVING_VOCABULARY, f"{inp.title}\n{abstract}")
    share = f"serving/inference words are {hits} of {words} in the title and abstract ({hits / max(words, 1):.1%})"
    title = tr.SERVING_TITLE.search(inp.title)
    if title:
        return Answer("yes", f"the title names it ({title.group(1)!r}); {share}")
    if words and hits / words >= MIN_SERVING_SHARE:
        return Answer("yes", share)
    metric = next(i for i in realism.items if i.rule == "end_to_end_metrics")
    if metric.points and hits:  # tail or end-to-end latency alone is every systems paper's metric
        return Answer("yes", f"{share}, but the body reports serving metrics ({metric.evidence})")
    if not tr.has_body_text(inp.texts):
        return Answer("unknown", f"{share}; too little of the paper's text is parsed to look for serving metrics")
    return Answer("no", f"a neighbour, not a serving paper: the title names no serving or inference, {share} "
                        f"(under {MIN_SERVING_SHARE:.0%}), and no end-to-end serving metric is reported")


def screening(inp: ScoringInput, realism: SubScore, transparency: SubScore, code: SubScore) -> dict[str, Answer]:
    """Yes/no/unknown answers to: a serving paper at all? real trace? end-to-end metrics? reproducible configuration?"""
    read = tr.has_body_text(inp.texts)

    def from_rule(rule: str) -> Answer:
        item = next(i for i in realism.items if i.rule == rule)
        if item.points:
            return Answer("yes", item.evidence)
        if read:
            return Answer("no", item.evidence)
        return Answer("unknown", f"too little of the paper's text is parsed to tell ({item.evidence})")

    params = _concrete_parameters(inp)
    has_code = code.points_for("official_repository") > 0
    evidence = transparency.items[0].evidence
    if len(params) >= 3 or (params and has_code):
        config = Answer("yes", evidence + (" — with official code" if has_code else ""))
    elif inp.facts_extracted and not params and not has_code:
        config = Answer("no", "no configuration values and no code published")
    else:
        config = Answer("unknown", evidence if params else f"{evidence}; code: {code.items[0].evidence}")
    return {"serving_focus": serving_focus(inp, realism),
            "real_trace": from_rule("real_trace"), "end_to_end_metrics": from_rule("end_to_end_metrics"),
            "reproducible_configuration": config}


# Quadrant boundaries of the value matrix (both axes 0-5): the dashboard chart draws them from here.
HIGH_VALUE = 3.0
HIGH_COST = 2.0


def value_matrix(subs: dict[str, SubScore], flags: list[dict[str, str]]) -> tuple[float, float, str, dict]:
    """Production value (0–5) against implementation cost (0–5), and the quadrant they fall in."""
    realism, community, code = subs["experimental_realism"], subs["community_feedback"], subs["code_availability"]
    value = {
        "evaluated on real traces": realism.points_for("real_trace"),
        "end-to-end serving metrics": realism.points_for("end_to_end_metrics"),
        "real hardware": realism.points_for("real_hardware"),
        "field reports in issues": 1.0 if community.points_for("production_reports") else 0.0,
        "popular repository": community.points_for("popularity"),
    }
    has_code = code.points_for("official_repository") > 0
    cost = {
        "no official code: must be reimplemented": 0.0 if has_code else 2.0,
        "code not maintained recently": 1.0 if has_code and not code.points_for("recent_commits") else 0.0,
        "no CI": 1.0 if has_code and not code.points_for("ci") else 0.0,
        "configuration not published": 0.0 if subs["parameter_transparency"].value else 1.0,
        "non-commercial licence": 1.0 if any(f["code"] == "non_commercial_license" for f in flags) else 0.0,
    }
    production_value, implementation_cost = round(sum(value.values()), 2), round(min(5.0, sum(cost.values())), 2)
    high_value, high_cost = production_value >= HIGH_VALUE, implementation_cost >= HIGH_COST
    quadrant = {(True, False): "quick_win", (True, True): "major_project",
                (False, False): "fill_in", (False, True): "thankless"}[(high_value, high_cost)]
    reasons = {"value": [k for k, v in value.items() if v], "cost": [k for k, v in cost.items() if v]}
    return production_value, implementation_cost, quadrant, reasons


def submitted_at(inp: ScoringInput) -> tuple[datetime | None, str]:
    """When the paper was first submitted: the arXiv date, else the month its arXiv id encodes."""
    if inp.published:
        return inp.published, f"{inp.published:%Y-%m-%d}"
    match = ARXIV_YYMM.match(inp.arxiv_id)
    if not match:
        return None, ""
    year, month = 2000 + int(match.group(1)), int(match.group(2))
    return datetime(year, month, 1, tzinfo=UTC), f"{year}-{month:02d} (from the arXiv id)"


def flags(inp: ScoringInput, now: datetime, config: ScoringConfig) -> list[dict[str, str]]:
    """Warnings a reader must see next to the score: non-commercial code licence, too fresh to trust."""
    found = []
    for repo in official_repos(inp):
        if repo.license_spdx and NON_COMMERCIAL.search(repo.license_spdx):
            found.append({"code": "non_commercial_license",
                          "detail": f"{repo.full_name} is licensed {repo.license_spdx}: no commercial use"})
    when, label = submitted_at(inp)
    if when and now - when < timedelta(days=config.too_fresh_days):
        days = (now - when).days
        found.append({"code": "too_fresh", "detail": f"submitted {label}, {days} days before scoring "
                                                     f"(under {config.too_fresh_days}): no independent reproduction yet"})
    return found


def fingerprint(inp: ScoringInput, subs: dict[str, SubScore], found_flags: list[dict[str, str]]) -> str:
    """Hash of the inputs plus the time-dependent judgements (a push ageing out, a paper ageing in)."""
    time_state = {"recent_commits": subs["code_availability"].points_for("recent_commits"),
                  "flags": sorted(f["code"] for f in found_flags)}
    blob = json.dumps({"rules": RULES_VERSION, "input": inp.fingerprint_data(), "time": time_state},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def score(inp: ScoringInput, now: datetime, config: ScoringConfig | None = None) -> Scorecard:
    """The full scorecard of one paper at time `now`."""
    config = config or ScoringConfig()
    subs = {
        "code_availability": code_availability(inp, now, config),
        "experimental_realism": experimental_realism(inp),
        "parameter_transparency": parameter_transparency(inp),
        "community_feedback": community_feedback(inp),
    }
    found_flags = flags(inp, now, config)
    value, cost, quadrant, reasons = value_matrix(subs, found_flags)
    abstract = next((t.text for t in inp.texts if t.where == "abstract"), "")
    return Scorecard(
        subscores=subs,
        screening=screening(inp, subs["experimental_realism"], subs["parameter_transparency"], subs["code_availability"]),
        production_value=value, implementation_cost=cost, quadrant=quadrant, value_matrix=reasons,
        flags=found_flags, topics=topics_for(inp.title, abstract), fingerprint=fingerprint(inp, subs, found_flags),
    )
