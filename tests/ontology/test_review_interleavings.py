"""No reviewed fact is lost in 1,000 randomized interleavings of edit, verify, re-extract and import.

Each interleaving is a fresh small paper (three extracted facts) and three worker threads, each with
its own PostgreSQL connection, that start together and each run one seeded random operation through
the services the API, the extract task and `import_knowledge` use: a person's edit or verify (half of
them naming the version they read, as the edit form and If-Match do), a re-extraction reading a
random subset of the facts, or a knowledge-file import reviewing a random subset elsewhere. Then:
- every fact a person wrote must still exist, still reviewed, exactly as the person's last
  successful write left it (same version: nothing but a person may write a reviewed fact);
- every fact an import reviewed must still exist, still verified, with the import's revision.
The count of facts that break this is printed and must be 0.
"""
from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import User
from django.db import connection

from knowledge.load import ImportReport, import_paper
from knowledge.records import FactRecord, PaperRecord, RevisionRecord
from ontology.models import Fact, FactRevision
from ontology.services import (
    REVIEWED,
    StaleFact,
    edit_fact,
    entity_for,
    fingerprint,
    model_fields,
    snapshot,
    store_facts,
    verify_fact,
)
from papers.models import Paper

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

INTERLEAVINGS = 1000
WORKERS = 3  # threads per interleaving
AT_ONCE = 2  # interleavings run side by side (different papers), to use more than one core
SEED = 20261201
REMOTE = "remote-editor"
TITLE = "A paper under concurrent review"  # one title: the paper's search text is embedded once, then cached
BASE = [
    {"kind": "parameter", "subject": "vLLM", "parameter": "block_size", "value": "16", "unit": "tokens",
     "condition": None, "effect": None, "page": 12, "quote": "vLLM sets its default block size as 16",
     "confidence": 0.6, "extractor": "rules"},
    {"kind": "constraint", "subject": "vLLM", "parameter": "gpu", "value": "A100", "unit": None, "condition": None,
     "effect": None, "page": 8, "quote": "We evaluate vLLM on NVIDIA A100 GPUs", "confidence": 0.6,
     "extractor": "rules"},
    {"kind": "parameter", "subject": "vLLM", "parameter": "chunk_size", "value": "512", "unit": "tokens",
     "condition": None, "effect": None, "page": 11, "quote": "a chunk size of 512 tokens", "confidence": 0.6,
     "extractor": "rules"},
]
CONDITIONS = ("ShareGPT", "Alpaca", "LMSYS-Chat")


@dataclass
class Round:
    """One interleaving: its paper and what the workers saw succeed."""

    paper: Paper
    facts: list[int]
    person_writes: dict[int, list[tuple[int, dict]]] = field(default_factory=dict)
    imported: int = 0
    errors: list[BaseException] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wrote(self, fact: Fact) -> None:
        with self.lock:
            self.person_writes.setdefault(fact.pk, []).append((fact.version, snapshot(fact)))


def operation(rng: random.Random, people: list[User]):
    """One seeded random operation, as a function of the round it runs in."""
    kind = rng.choices(["edit", "verify", "re-extract", "import"], weights=[3, 3, 2, 2])[0]
    index, named, person = rng.randrange(len(BASE)), rng.random() < 0.5, rng.choice(people)
    condition, pause = rng.choice(CONDITIONS), rng.random() * 0.002
    subset = [i for i in range(len(BASE)) if rng.random() < 0.5]
    confidence = rng.choice((0.6, 0.7))

    def run(state: Round) -> None:
        time.sleep(pause)
        if kind in ("edit", "verify"):
            seen = Fact.objects.get(pk=state.facts[index])  # what the person's page or tool read
            expected = seen.version if named else None
            try:
                if kind == "edit":
                    stored = edit_fact(seen, person, {"condition": condition}, expected_version=expected)
                else:
                    stored = verify_fact(seen, person, expected_version=expected)
            except StaleFact:
                return  # refused, and told the current fact: nothing was written
            state.wrote(stored)
        elif kind == "re-extract":
            store_facts(state.paper, [{**BASE[i], "confidence": confidence} for i in subset])
        else:
            report = ImportReport()
            import_paper(import_record(state.paper, subset or [index]), "a knowledge file", report)
            assert not report.errors, report.errors
            with state.lock:
                state.imported += report.facts["reviewed"] + report.facts["created"]

    return run


def import_record(paper: Paper, indexes: list[int]) -> PaperRecord:
    """Another instance's export of this paper: the chosen facts, verified there by REMOTE."""
    facts = [FactRecord(**{**BASE[i], "condition": "checked elsewhere"}, status="verified",
                        fingerprint=fingerprint(BASE[i]),
                        revisions=[RevisionRecord(action="verify", actor=REMOTE, user=REMOTE,
                                                  created_at="2026-11-30T12:00:00Z")])
             for i in indexes]
    return PaperRecord(arxiv_id=paper.arxiv_id, version=1, title=paper.title, facts=facts)


def extracted(paper: Paper) -> list[int]:
    """The paper's first extraction: BASE stored as store_facts stores new facts (validated fields,
    fingerprint, entity, a create revision), in three queries, so each interleaving starts cheaply."""
    entity = entity_for("vLLM")
    facts = Fact.objects.bulk_create([Fact(paper=paper, fingerprint=fingerprint(data), entity=entity,
                                           **model_fields(data)) for data in BASE])
    FactRevision.objects.bulk_create([FactRevision(fact=fact, action=FactRevision.Action.CREATE, actor="extractor",
                                                   after=snapshot(fact)) for fact in facts])
    return [fact.pk for fact in facts]


def lost_in(state: Round) -> int:
    """Reviewed facts of this round that are gone or changed by anything but their last reviewer."""
    lost = 0
    for fact_id, writes in state.person_writes.items():
        version, after = max(writes, key=lambda write: write[0])
        final = Fact.objects.filter(pk=fact_id).first()
        if final is None or final.status not in REVIEWED or final.version != version or snapshot(final) != after:
            lost += 1
    holding = (Fact.objects.filter(paper=state.paper, status=Fact.Status.VERIFIED,
                                   revisions__actor=REMOTE).distinct().count())
    return lost + max(0, state.imported - holding)


class Pool:
    """Threads that each run one job per round, all released together (a job reports its own errors)."""

    def __init__(self, size: int) -> None:
        self.start, self.done = threading.Barrier(size + 1), threading.Barrier(size + 1)
        self.jobs: list = [None] * size
        self.threads = [threading.Thread(target=self._work, args=(n,), daemon=True) for n in range(size)]
        for thread in self.threads:
            thread.start()

    def _work(self, n: int) -> None:
        try:
            while True:
                self.start.wait(timeout=60)
                if self.jobs[n] is None:
                    return
                self.jobs[n]()
                self.done.wait(timeout=60)
        finally:
            connection.close()

    def run(self, jobs: list) -> None:
        self.jobs = jobs
        self.start.wait(timeout=60)
        self.done.wait(timeout=120)

    def close(self) -> None:
        self.jobs = [None] * len(self.threads)
        self.start.wait(timeout=60)
        for thread in self.threads:
            thread.join(timeout=60)


def job(run, state: Round):
    def go() -> None:
        try:
            run(state)
        except BaseException as exc:  # kept for the test to report
            state.errors.append(exc)
    return go


def test_no_reviewed_fact_is_lost_in_a_thousand_random_interleavings_of_edit_verify_re_extract_and_import():
    people = [User.objects.create_user(name) for name in ("alice", "bob")]
    rng = random.Random(SEED)
    pool = Pool(WORKERS * AT_ONCE)
    lost, reviewed, started = 0, 0, time.perf_counter()
    try:
        for first in range(0, INTERLEAVINGS, AT_ONCE):
            states = []
            for number in range(first, first + AT_ONCE):
                paper = Paper.objects.create(arxiv_id=f"2501.{number:05d}", title=TITLE)
                states.append(Round(paper, extracted(paper)))
            pool.run([job(operation(rng, people), state) for state in states for _ in range(WORKERS)])
            for number, state in enumerate(states, start=first):
                assert not state.errors, f"interleaving {number}: {state.errors[0]!r}"
                lost += lost_in(state)
                reviewed += len(state.person_writes) + state.imported
    finally:
        pool.close()
    elapsed = time.perf_counter() - started
    print(f"\n{INTERLEAVINGS} interleavings (seed {SEED}): {reviewed} reviewed facts, {lost} lost, {elapsed:.1f} s")
    assert reviewed > INTERLEAVINGS, "the interleavings should review facts"
    assert FactRevision.objects.filter(action="supersede").exists(), "re-extractions should supersede facts"
    assert lost == 0, f"{lost} reviewed facts lost"
