"""The weekly digest over a real loopback SMTP server: content, order, unsubscribe, claim-once, retries."""
from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command, get_commands
from django.db import connection
from django.test import Client

from papers.digest import subscriptions, tokens
from papers.digest.services import next_period_start, send_due_digests
from papers.digest.tasks import send_digests_task
from papers.models import DigestDelivery, Paper, Score, Subscription
from papers.scoring.services import score_paper
from tests.conftest import require
from tests.papers import scoring_corpus as corpus
from tests.papers.smtp_sink import free_port, smtp_server_fixture  # noqa: F401  (the smtp_server fixture)

MONDAY = datetime(2024, 12, 30, 8, 0, tzinfo=UTC)  # a beat run; the recorded repo was pushed 11 days before
SCORED = MONDAY - timedelta(days=2)
MOONCAKE, VLLM, VTENSOR, MEGATRON3 = "2407.00079", "2309.06180", "2407.15309", "2104.04473"


@pytest.fixture
def scored_papers(corpus_dir, shared_dir) -> dict[str, Paper]:
    """Four real papers scored from real inputs: 10 (Mooncake), 5 (vLLM), 3 (vTensor), 0 (Megatron, bare)."""
    papers = {arxiv_id: corpus.paper_in_db(corpus_dir, arxiv_id, pdf=arxiv_id != MEGATRON3)
              for arxiv_id in (MOONCAKE, VLLM, VTENSOR, MEGATRON3)}
    corpus.link_recorded_repo(corpus_dir, papers[MOONCAKE])
    for arxiv_id, paper in papers.items():
        facts = corpus.gold_parameter_facts(shared_dir, arxiv_id) if arxiv_id in (MOONCAKE, VLLM) else []
        score_paper(paper, SCORED, facts=facts)
    return papers


def listed(text: str) -> list[str]:
    """The numbered paper headings of a digest's text part, in order."""
    return re.findall(r"^\d+\. (.+?)\r?$", text, re.MULTILINE)


def subscriber(email: str, topics: tuple[str, ...] = (), min_score: float = 0, joined: datetime = SCORED) -> Subscription:
    subscription = Subscription.objects.create(email=email, topics=list(topics), min_score=min_score)
    return subscriptions.confirm(tokens.make_token(subscription, "confirm"), joined)


@pytest.mark.django_db
def test_the_digest_arrives_best_first_with_scores_repository_and_one_click_unsubscribe(scored_papers, smtp_server):
    assert [s.total for s in Score.objects.order_by("-total")] == [10, 5, 3, 0]
    subscriber("owner@example.org")
    report = send_due_digests(MONDAY)
    assert report.sent == ["owner@example.org"] and not report.failed

    [mail] = smtp_server.received
    assert mail.rcpt_tos == ["owner@example.org"]
    assert mail.message["Subject"].strip().startswith("InfraWiki digest: 4 newly scored papers — best: 10/10 Mooncake")
    text, html = mail.part("text/plain"), mail.part("text/html")
    titles = [scored_papers[a].title for a in (MOONCAKE, VLLM, VTENSOR, MEGATRON3)]
    assert listed(text) == titles  # best first
    assert re.findall(r'<h3[^>]*>\d+\. <a href="[^"]+">([^<]+)</a></h3>', html) == titles
    assert "Score 10/10 (recommended) · quick win" in text and "Score 3/10 (to verify)" in text
    assert "code availability 3/3 · experimental realism 3/3 · parameter transparency 2/2 · community 2/2" in text
    assert "real trace? yes · end-to-end metrics? yes · reproducible configuration? yes" in text
    assert "Code: https://github.com/PyGithub/PyGithub · 7122 stars · 1793 forks · 357 open issues" in text
    assert "Code: https://github.com/vllm-project/vllm (health not checked yet)" in text  # linked, not crawled
    assert "https://arxiv.org/abs/2407.00079" in text and 'href="https://arxiv.org/abs/2407.00079"' in html
    assert text.count("More like this:") == 4  # nearest papers by embedding, for every item
    nearest_to_mooncake = re.search(r"More like this:\r?\n\s+- .+? https://arxiv.org/abs/(\S+)", text).group(1)
    assert nearest_to_mooncake == VTENSOR  # the other KV-memory paper, not the training one

    unsubscribe = mail.message["List-Unsubscribe"].strip().removeprefix("<").removesuffix(">")
    assert mail.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert unsubscribe.startswith("http://testserver/digest/unsubscribe/") and unsubscribe in text
    assert unsubscribe in html
    Client(enforce_csrf_checks=True).post(unsubscribe.removeprefix("http://testserver"), "List-Unsubscribe=One-Click",
                                          content_type="application/x-www-form-urlencoded")
    assert Subscription.objects.get(email="owner@example.org").status == "unsubscribed"


@pytest.mark.django_db
def test_topics_and_minimum_score_choose_what_each_subscriber_gets(scored_papers, smtp_server):
    subscriber("kv@example.org", topics=("kv-cache",))
    subscriber("picky@example.org", min_score=6)
    subscriber("spec@example.org", topics=("speculative-decoding",))
    report = send_due_digests(MONDAY)
    assert sorted(report.sent) == ["kv@example.org", "picky@example.org"] and report.empty == ["spec@example.org"]
    kv_text = smtp_server.to("kv@example.org")[0].part("text/plain")
    assert listed(kv_text) == [scored_papers[MOONCAKE].title, scored_papers[VLLM].title]
    picky_text = smtp_server.to("picky@example.org")[0].part("text/plain")
    assert listed(picky_text) == [scored_papers[MOONCAKE].title]
    assert smtp_server.to("spec@example.org") == []
    assert DigestDelivery.objects.get(subscription__email="spec@example.org").status == "empty"


@pytest.mark.django_db
def test_the_next_digest_brings_only_papers_first_scored_since_the_last_one(scored_papers, corpus_dir, smtp_server):
    subscriber("owner@example.org")
    send_due_digests(MONDAY)
    assert send_due_digests(MONDAY + timedelta(hours=1)).sent == []  # claimed for this week already
    nanoflow = corpus.paper_in_db(corpus_dir, "2408.12757", pdf=True)
    score_paper(nanoflow, MONDAY + timedelta(days=3))
    _, rescored = score_paper(scored_papers[MOONCAKE], MONDAY + timedelta(days=40))  # its repo push aged out
    assert rescored
    next_monday = next_period_start(MONDAY) + timedelta(days=35, hours=8)
    assert send_due_digests(next_monday).sent == ["owner@example.org"]
    second = smtp_server.received[-1]
    assert len(smtp_server.received) == 2
    assert second.message["Subject"].strip().startswith("InfraWiki digest: 1 newly scored paper — best:")
    assert listed(second.part("text/plain")) == [nanoflow.title]


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_senders_deliver_exactly_one_digest_per_subscriber(scored_papers, smtp_server):
    emails = [f"member{n}@example.org" for n in range(6)]
    for email in emails:
        subscriber(email)
    start = threading.Barrier(2)
    reports = []

    def sender() -> None:
        try:
            start.wait(timeout=30)
            reports.append(send_due_digests(MONDAY))
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(reports) == 2
    assert sorted(r for mail in smtp_server.received for r in mail.rcpt_tos) == emails
    assert sorted(reports[0].sent + reports[1].sent) == emails
    assert DigestDelivery.objects.filter(status="sent").count() == len(emails)
    assert set(Subscription.objects.values_list("next_digest_at", flat=True)) == {next_period_start(MONDAY)}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_worker_processes_running_the_weekly_task_mail_each_subscriber_once(
        scored_papers, smtp_server, monkeypatch, request):
    monkeypatch.setenv("EMAIL_URL", f"smtp://127.0.0.1:{smtp_server.port}")
    monkeypatch.setenv("SITE_URL", "http://testserver")
    worker = request.getfixturevalue("celery_redis_worker")  # a real worker: 2 prefork processes on Redis
    emails = [f"member{n}@example.org" for n in range(4)]
    for email in emails:
        subscriber(email)
    results = [send_digests_task.apply_async() for _ in range(2)]
    outcomes = [result.get(timeout=120) for result in results]
    assert sum(outcome["sent"] for outcome in outcomes) == len(emails), worker["log"].read_text()[-2000:]
    assert sorted(r for mail in smtp_server.received for r in mail.rcpt_tos) == emails
    assert DigestDelivery.objects.filter(status="sent").count() == len(emails)


@pytest.mark.django_db
def test_a_failed_send_is_recorded_and_retried_until_it_goes_through(scored_papers, smtp_server, settings):
    subscriber("owner@example.org")
    up_port, settings.EMAIL_PORT = settings.EMAIL_PORT, free_port()  # nothing listens there
    settings.DIGEST_SEND_ATTEMPTS, settings.DIGEST_RETRY_DELAY_S = 2, 600
    report = send_due_digests(MONDAY)
    assert report.failed == ["owner@example.org"]
    delivery = DigestDelivery.objects.get()
    assert delivery.status == "failed" and delivery.attempts == 2 and "ConnectionRefusedError" in delivery.error
    assert Subscription.objects.get().next_digest_at == MONDAY + timedelta(seconds=600)
    assert send_due_digests(MONDAY + timedelta(seconds=60)).sent == []  # not due again yet

    settings.EMAIL_PORT = up_port
    retry = send_due_digests(MONDAY + timedelta(seconds=601))
    assert retry.sent == ["owner@example.org"] and len(smtp_server.received) == 1
    delivery.refresh_from_db()
    assert delivery.status == "sent" and delivery.attempts == 3 and delivery.error == ""


@pytest.mark.django_db
def test_the_celery_task_sends_the_due_digests(scored_papers, smtp_server):
    subscriber("owner@example.org")
    subscriber("member@example.org", topics=("speculative-decoding",))  # nothing new on that topic
    assert send_digests_task.apply().get()["sent"] >= 1
    assert [m.rcpt_tos for m in smtp_server.received] == [["owner@example.org"]]


@pytest.mark.django_db
def test_send_digest_sends_now_and_refuses_an_unknown_address(scored_papers, smtp_server, capsys):
    subscriber("owner@example.org", joined=datetime.now(UTC))
    Score.objects.update(scored_at=datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(CommandError, match="stranger@example.org is not subscribed; subscribe at /digest/ first"):
        call_command("send_digest", "--user", "stranger@example.org")
    call_command("send_digest", "--user", "owner@example.org")
    assert "sent 1, nothing new for 0, failed 0, skipped 0" in capsys.readouterr().out
    assert [m.rcpt_tos for m in smtp_server.received] == [["owner@example.org"]]


@pytest.mark.django_db
def test_top_facts_with_their_quotes_come_from_the_ontology(scored_papers, shared_dir, smtp_server):
    from ontology import selectors

    require(hasattr(selectors, "facts_for_paper"), "ontology.selectors.facts_for_paper is not there yet")
    from ontology.models import Fact

    for n, fact in enumerate(corpus.gold_parameter_facts(shared_dir, MOONCAKE)):
        Fact.objects.create(paper=scored_papers[MOONCAKE], kind="parameter", subject=fact["subject"],
                            parameter=fact["parameter"], value=str(fact["value"]), unit=fact["unit"] or "",
                            page=fact["page"], quote=fact["quote"], confidence=0.9, extractor="human",
                            fingerprint=f"gold-{n}")
    subscriber("owner@example.org")
    send_due_digests(MONDAY)
    text = smtp_server.received[0].part("text/plain")
    quotes = [f["quote"][:40] for f in corpus.gold_parameter_facts(shared_dir, MOONCAKE)]
    assert any(quote in text for quote in quotes)


@pytest.mark.django_db
def test_send_digest_dry_run_prints_what_a_subscriber_would_get_and_sends_nothing(scored_papers, smtp_server, capsys):
    subscriber("owner@example.org", joined=datetime.now(UTC))
    Score.objects.update(scored_at=datetime.now(UTC) - timedelta(hours=1))
    call_command("send_digest", "--dry-run", "--user", "owner@example.org")
    out = capsys.readouterr().out
    assert "To: owner@example.org" in out and "Subject: InfraWiki digest: 4 newly scored papers" in out
    assert "List-Unsubscribe: <http://testserver/digest/unsubscribe/" in out
    assert out.index(scored_papers[MOONCAKE].title) < out.index(scored_papers[VTENSOR].title)
    assert smtp_server.received == [] and not DigestDelivery.objects.exists()
    call_command("send_digest", "--dry-run", "--user", "stranger@example.org")
    assert "not subscribed: preview with all topics" in capsys.readouterr().out


@pytest.mark.django_db
@pytest.mark.slow
def test_send_digest_dry_run_on_the_bundled_seed_corpus(smtp_server, capsys):
    require("load_seed" in get_commands(), "papers' load_seed command is not there yet")
    call_command("load_seed")
    call_command("score_papers")
    assert Score.objects.filter(is_latest=True).count() == Paper.objects.count() > 0
    call_command("send_digest", "--dry-run", "--user", "owner@example.org")
    out = capsys.readouterr().out
    best = Score.objects.filter(is_latest=True).order_by("-total", "paper__arxiv_id").first()
    assert f"1. {best.paper.title}" in out and "Unsubscribe (one click): http://testserver/digest/unsubscribe/" in out
    papers = Paper.objects.count()
    assert f"Subject: InfraWiki digest: top 20 of {papers} newly scored papers" in out
    assert not re.search(r"(Code: \S+)\s+\1", out)  # a repository shared by two papers is listed once per paper
