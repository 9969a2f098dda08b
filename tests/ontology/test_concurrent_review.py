"""Races between people reviewing facts and the machinery rewriting them, on the real PostgreSQL with
real threads (each its own connection and transactions): two editors on one fact, a re-extraction or
a knowledge import running while an editor verifies. Nothing a person reviewed may be lost."""
from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection, transaction

from knowledge.load import import_knowledge
from knowledge.records import FactRecord, Header, PaperRecord, RevisionRecord, write_file
from ontology.models import Fact
from ontology.services import fingerprint, store_facts, verify_fact
from tests.conftest import wait_until
from tests.frontend.conftest import web  # noqa: F401  (fixture)
from tests.frontend.data import token_client
from tests.ontology.conftest import make_fact

pytestmark = pytest.mark.django_db(transaction=True)


class Worker(threading.Thread):
    """`work()` in its own thread and database connection; its result or exception kept for the test."""

    def __init__(self, work: Callable[[], object], start_together: threading.Barrier | None = None) -> None:
        super().__init__(daemon=True)
        self.work, self.barrier, self.result, self.error = work, start_together, None, None

    def run(self) -> None:
        try:
            if self.barrier is not None:
                self.barrier.wait(timeout=30)
            self.result = self.work()
        except BaseException as exc:  # reported by the test, never swallowed
            self.error = exc
        finally:
            connection.close()

    def outcome(self) -> object:
        self.join(timeout=120)
        assert not self.is_alive(), "the worker did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def someone_waits_for_a_row_lock() -> bool:
    """A session of this test's database is blocked on a lock (other test databases are not counted)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else a transaction keeps seeing its first snapshot
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND wait_event_type = 'Lock'")
        return cursor.fetchone()[0] > 0


def test_two_editors_patching_different_fields_at_once_both_keep_their_change(web):  # noqa: F811
    fact = web.facts["block_size"]
    alice, bob = token_client(web.users["editor"]), token_client(web.users["admin"])
    lost = 0
    for trial in range(12):
        value, condition = str(32 + trial), f"trace {trial}"
        together = threading.Barrier(2)
        workers = [Worker(lambda v=value: alice.patch(f"/api/facts/{fact.id}/", {"value": v}, format="json"), together),
                   Worker(lambda c=condition: bob.patch(f"/api/facts/{fact.id}/", {"condition": c}, format="json"),
                          together)]
        for worker in workers:
            worker.start()
        assert [w.outcome().status_code for w in workers] == [200, 200]
        stored = Fact.objects.get(id=fact.id)
        lost += (stored.value, stored.condition) != (value, condition)
        first, second = stored.revisions.order_by("-id")[:2][::-1]
        assert first.after == {**second.before}, "the second writer's 'before' is what the first one stored"
    assert lost == 0, f"one editor's change was undone in {lost} of 12 trials"


def test_a_verify_that_commits_while_a_re_extraction_runs_is_kept(paper, editor):
    store_facts(paper, [make_fact(), make_fact(value="32", quote="vLLM also tries blocks of 32", page=13)])
    target = Fact.objects.get(value="16")
    re_extraction = Worker(lambda: store_facts(paper, [make_fact(value="32", quote="vLLM also tries blocks of 32",
                                                                 page=13)]))
    with transaction.atomic():
        verify_fact(target, editor, note="p.12 says 16")
        re_extraction.start()
        wait_until(someone_waits_for_a_row_lock, 30, "the re-extraction to meet the verify's row lock")
    counts = re_extraction.outcome()
    assert counts["kept"] == 0 and counts["created"] == 0
    stored = Fact.objects.get(id=target.id)
    assert (stored.status, stored.value) == ("verified", "16")
    assert list(stored.revisions.values_list("action", flat=True)) == ["create", "verify"]


def test_an_import_that_runs_while_an_editor_verifies_never_overwrites_the_verify(paper, editor, tmp_path: Path):
    store_facts(paper, [make_fact()])
    target = Fact.objects.get()
    theirs = make_fact(value="64", quote="vLLM sets its default block size as 16", extractor="human")
    record = FactRecord(**{**theirs, "status": "verified"}, fingerprint=fingerprint(make_fact()), revisions=[
        RevisionRecord(action="edit", actor="elsewhere", user="elsewhere", before={"value": "16"},
                       after={"value": "64"}, created_at="2026-11-30T12:00:00Z")])
    path = tmp_path / "theirs.jsonl"
    write_file(path, Header(origin="export of another instance"),
               [PaperRecord(arxiv_id=paper.arxiv_id, version=1, title=paper.title, facts=[record])])
    importing = Worker(lambda: import_knowledge(path))
    with transaction.atomic():
        verify_fact(target, editor, note="p.12 says 16")
        importing.start()
        wait_until(someone_waits_for_a_row_lock, 30, "the import to meet the verify's row lock")
    report = importing.outcome()
    assert report.errors == [] and report.facts["kept"] == 1
    stored = Fact.objects.get(id=target.id)
    assert (stored.status, stored.value) == ("verified", "16")
    assert list(stored.revisions.values_list("action", "actor")) == [("create", "extractor"), ("verify", "editor")]
