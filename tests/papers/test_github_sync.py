"""GitHub repository health from recorded PyGithub traffic replayed over loopback: metadata, CI,
production signals, ETag caching, 404 and rate limits (403/429) handled without losing data."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from papers.clients.github import GithubClient, RateLimited, rate_limit_wait
from papers.models import CodeRepo, Paper, PaperRepo, PipelineEvent
from papers.services.github import link_readme, signals_from_issues, sync_repo

pytestmark = pytest.mark.django_db
REPO = "PyGithub/PyGithub"
REPO_PATH = "/repos/PyGithub/PyGithub"


def test_repository_metadata_and_ci_are_stored(github_replay) -> None:
    report = sync_repo(REPO)
    assert not report.error and {"repo", "workflows"} <= set(report.changed)
    repo = CodeRepo.objects.get(full_name=REPO)
    assert (repo.stars, repo.forks, repo.license_spdx, repo.default_branch) == (7122, 1793, "LGPL-3.0", "main")
    assert repo.archived is False and repo.pushed_at.isoformat().startswith("2024-12-19")
    assert repo.has_ci is True and [w["path"] for w in repo.workflows] == [
        ".github/workflows/check.yml", ".github/workflows/python-publish.yml"]
    assert repo.fetched_at is not None and repo.etags["repo"].startswith('W/"')


def test_a_second_sync_sends_the_etag_and_keeps_data_on_304(github_replay) -> None:
    sync_repo(REPO)
    github_replay.requests.clear()
    report = sync_repo(REPO)
    meta_request = next(r for r in github_replay.requests if r["path"] == REPO_PATH)
    assert meta_request["headers"]["If-None-Match"].startswith('W/"')
    assert "repo" not in report.changed
    assert CodeRepo.objects.get(full_name=REPO).stars == 7122


def test_the_issue_search_asks_for_production_signals(github_replay) -> None:
    sync_repo(REPO)
    search = next(r for r in github_replay.requests if r["path"].startswith("/search/issues"))
    assert "repo%3APyGithub%2FPyGithub" in search["path"] and "OOM" in search["path"]


def test_issues_that_mention_memory_blowups_or_datacenter_gpus_are_signals() -> None:
    items = [
        {"title": "CUDA out of memory on A100 with long prompts", "html_url": "u1", "state": "open"},
        {"title": "Typo in README", "body": "fix", "html_url": "u2", "state": "closed"},
        {"title": "Crash", "body": "OOM killed when serving in production", "html_url": "u3", "state": "open"},
        {"title": "Slow on an nvidia rtx4090", "html_url": "u4", "state": "open"},  # any GPU of the vocabulary
    ]
    signals = signals_from_issues(items)
    assert [s["url"] for s in signals] == ["u1", "u3", "u4"]
    assert {"A100", "out of memory"} <= set(signals[0]["matched"])
    assert signals[2]["matched"] == ["RTX 4090"]


def test_a_missing_repository_is_recorded_and_stored_data_is_kept(github_replay) -> None:
    sync_repo(REPO)
    github_replay.missing.add(REPO_PATH)
    CodeRepo.objects.filter(full_name=REPO).update(etags={})
    report = sync_repo(REPO)
    assert "404" in report.error and "renamed, deleted or made private" in report.error
    repo = CodeRepo.objects.get(full_name=REPO)
    assert repo.stars == 7122 and repo.license_spdx == "LGPL-3.0" and "404" in repo.failure_reason
    assert PipelineEvent.objects.filter(repo=repo, level="error").exists()


@pytest.mark.parametrize("status", [403, 429])
def test_a_rate_limit_raises_with_the_wait_from_the_reset_header(github_replay, status: int) -> None:
    github_replay.rate_limited[REPO_PATH] = status
    with pytest.raises(RateLimited) as caught:
        sync_repo(REPO)
    assert 1 <= caught.value.wait_s <= 5
    assert "rate limit" in CodeRepo.objects.get(full_name=REPO).failure_reason


def test_the_task_retries_a_rate_limited_repo_and_never_crashes(github_replay) -> None:
    from papers.tasks import fetch_repo_task

    github_replay.rate_limited[REPO_PATH] = 403
    result = fetch_repo_task.apply(args=[REPO])  # eager: each retry runs at once
    assert result.successful() and "gave up after" in result.result["error"]
    tries = [r for r in github_replay.requests if r["path"] == REPO_PATH]
    assert len(tries) == fetch_repo_task.max_retries + 1
    del github_replay.rate_limited[REPO_PATH]
    assert not fetch_repo_task.apply(args=[REPO]).result["error"]


def test_retry_after_wins_over_the_reset_header() -> None:
    import requests

    response = requests.Response()
    response.status_code = 429
    response.headers.update({"Retry-After": "30", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "999"})
    assert rate_limit_wait(response, now=0) == 30
    response.headers.pop("Retry-After")
    assert rate_limit_wait(response, now=900) == 100
    response.status_code = 404
    assert rate_limit_wait(response) is None


def test_the_token_is_sent_when_configured(github_replay, settings) -> None:
    settings.GITHUB_TOKEN = "ghp_test"
    sync_repo(REPO)
    assert github_replay.requests[0]["headers"]["Authorization"] == "Bearer ghp_test"
    assert "Authorization" not in GithubClient(github_replay.url).session.headers


def test_a_readme_that_mentions_an_arxiv_id_links_the_paper() -> None:
    paper = Paper.objects.create(arxiv_id="2309.06180", title="vLLM")
    repo = CodeRepo.objects.create(full_name="vllm-project/vllm")
    assert link_readme(repo, "Paper: https://arxiv.org/abs/2309.06180v1 and arXiv:9999.99999") == ["2309.06180"]
    assert PaperRepo.objects.get(paper=paper, repo=repo).source == PaperRepo.Source.README


def test_the_command_reports_each_repo_and_carries_on_after_a_failure(github_replay, capsys) -> None:
    call_command("crawl_github", "--repo", "nobody/nothing", REPO)
    captured = capsys.readouterr()
    assert "nobody/nothing" in captured.err and "404" in captured.err
    assert f"{REPO}: repo, workflows" in captured.out


def test_the_command_queues_a_rate_limited_repo_with_githubs_countdown(github_replay, memory_broker, capsys) -> None:
    github_replay.rate_limited[REPO_PATH] = 429
    call_command("crawl_github", "--repo", REPO)
    assert "rate limited; retrying in" in capsys.readouterr().err
    with memory_broker.connection_for_write() as conn:
        message = conn.SimpleQueue("crawl").get(timeout=2)
    assert message.headers["task"] == "papers.tasks.fetch_repo_task" and message.headers["eta"]
    message.ack()


def test_an_unreachable_github_is_reported_per_repo(settings, capsys) -> None:
    settings.GITHUB_API_URL = "http://127.0.0.1:9"  # nothing listens on the discard port
    call_command("crawl_github", "--repo", REPO, "--no-queue")
    assert "GitHub unreachable" in capsys.readouterr().err


def test_a_403_without_a_rate_limit_is_a_permanent_access_error(github_replay) -> None:
    github_replay.forbidden.add(REPO_PATH)
    report = sync_repo(REPO)
    assert "GitHub 403" in report.error and "access denied" in report.error
    assert "Resource not accessible" in CodeRepo.objects.get(full_name=REPO).failure_reason


def test_the_nightly_task_queues_every_known_repo_least_recently_fetched_first(memory_broker) -> None:
    from django.utils import timezone

    from papers.tasks import crawl_github_task

    CodeRepo.objects.create(full_name="a/fresh", fetched_at=timezone.now())
    CodeRepo.objects.create(full_name="b/never")
    assert crawl_github_task.apply().result == 2
    with memory_broker.connection_for_write() as conn:
        queue = conn.SimpleQueue("crawl")
        queued = [queue.get(timeout=2) for _ in range(2)]
    assert [m.headers["argsrepr"] for m in queued] == ["('b/never',)", "('a/fresh',)"]
