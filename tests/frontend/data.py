"""Test data for the web tests (pages, API, browser): role-named users and a small, realistic corpus
built with the models directly. Titles and ids are real arXiv papers; facts are short stand-ins.

Users: `owner` (has a digest subscription), `editor` (in the "editors" group), `outsider`
(signed in, no rights), `admin` (superuser). Every password is "<name>-pw-2026".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import Group, User
from django.utils import timezone

from infrawiki.permissions import EDITORS_GROUP
from ontology.models import Entity, Fact, FactRevision
from ontology.search_index import index_facts, index_paper
from papers.models import Author, CodeRepo, Paper, PaperAuthor, PaperRepo, Section
from papers.models.digest import Subscription
from papers.models.scoring import Score

HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned=2">'


def password(name: str) -> str:
    return f"{name}-pw-2026"


def token_client(user: User):
    """An API client that authenticates as `user` with a token, as tools do."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@dataclass
class WebData:
    users: dict[str, User]
    papers: dict[str, Paper]
    facts: dict[str, Fact]
    entities: dict[str, Entity] = field(default_factory=dict)
    repo: CodeRepo | None = None


def make_users() -> dict[str, User]:
    editors, _ = Group.objects.get_or_create(name=EDITORS_GROUP)
    users = {}
    for name in ("owner", "editor", "outsider"):
        users[name] = User.objects.create_user(name, f"{name}@example.org", password(name))
    users["editor"].groups.add(editors)
    users["admin"] = User.objects.create_superuser("admin", "admin@example.org", password("admin"))
    return users


def _paper(arxiv_id: str, title: str, days_ago: int, **extra) -> Paper:
    return Paper.objects.create(
        arxiv_id=arxiv_id, title=title, published=timezone.now() - timedelta(days=days_ago),
        primary_category="cs.DC", categories=["cs.DC", "cs.LG"], status=extra.pop("status", "extracted"),
        abstract=extra.pop("abstract", f"Abstract of {title}."), page_count=16, **extra,
    )


def _score(paper: Paper, total: float, tier: str) -> Score:
    parts = {"code_availability": min(3.0, total * 0.3), "experimental_realism": min(3.0, total * 0.3),
             "parameter_transparency": min(2.0, total * 0.2), "community_feedback": min(2.0, total * 0.2)}
    return Score.objects.create(
        paper=paper, total=total, tier=tier, **parts,
        evidence={"code_availability": [{"rule": "official repository with a licence", "points": 2.0,
                                         "evidence": "github.com/vllm-project/vllm (Apache-2.0)"}]},
        screening={"Does it report the GPU?": {"answer": "yes", "evidence": "NVIDIA A100 GPUs with 40GB"}},
        production_value=4.0, implementation_cost=2.0, quadrant="quick_win", flags=[], topics=["kv-cache"],
        fingerprint=f"fp-{paper.arxiv_id}", scored_at=timezone.now(),
    )


def _fact(paper: Paper, key: str, *, entity: Entity | None = None, **fields) -> Fact:
    defaults = {"kind": "parameter", "unit": "", "condition": "", "effect": "", "confidence": 0.6,
                "extractor": "rules", "page": 5}
    return Fact.objects.create(paper=paper, entity=entity, fingerprint=f"{paper.arxiv_id}-{key}",
                               **{**defaults, **fields})


def make_corpus(users: dict[str, User]) -> WebData:
    vllm = _paper("2309.06180", "Efficient Memory Management for Large Language Model Serving with PagedAttention",
                  3, abstract="High throughput serving of large language models (LLMs) requires batching "
                              "sufficiently many requests at a time. We propose PagedAttention and build vLLM.")
    sarathi = _paper("2403.02310", "Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve", 40)
    distserve = _paper("2401.09670", "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized "
                                     "Large Language Model Serving", 50, status="parsed")
    for i, name in enumerate(["Woosuk Kwon", "Zhuohan Li", "Siyuan Zhuang"]):
        PaperAuthor.objects.create(paper=vllm, author=Author.objects.create(name=name), position=i)
    Section.objects.create(paper=vllm, order=0, number="4", title="Method", page_start=4, page_end=7,
                           text="PagedAttention partitions the KV cache of each sequence into KV blocks.")
    Section.objects.create(paper=vllm, order=1, number="6", title="Evaluation", page_start=8, page_end=12,
                           text="We evaluate vLLM on NVIDIA A100 GPUs.")
    repo = CodeRepo.objects.create(full_name="vllm-project/vllm", html_url="https://github.com/vllm-project/vllm",
                                   stars=30000, forks=4500, open_issues=1500, license_spdx="Apache-2.0",
                                   has_ci=True, pushed_at=timezone.now() - timedelta(days=1))
    PaperRepo.objects.create(paper=vllm, repo=repo, source="abstract")
    _score(vllm, 8.5, "recommended")
    _score(sarathi, 6.0, "to_verify")
    vllm_entity = Entity.objects.create(key="vllm", name="vLLM", kind="system", aliases=["vLLM engine"])
    prefill = Entity.objects.create(key="chunked prefill", name="chunked prefill", kind="technique")
    facts = {
        "block_size": _fact(vllm, "block", entity=vllm_entity, subject="vLLM", parameter="block_size", value="16",
                            value_num=16, unit="tokens", page=7, quote="we set the block size to 16 tokens",
                            confidence=0.9),
        "gpu": _fact(vllm, "gpu", entity=vllm_entity, kind="constraint", subject="vLLM", parameter="gpu",
                     value="A100", page=8, quote="We evaluate vLLM on NVIDIA A100 GPUs", confidence=0.4),
        "hostile": _fact(vllm, "hostile", subject="vLLM", parameter="max_num_seqs", value="256", value_num=256,
                         quote=f"max 256 sequences {HOSTILE}", confidence=0.3),
        "chunk_a": _fact(sarathi, "chunk", entity=prefill, subject="chunked prefill", parameter="chunk_size",
                         value="512", value_num=512, unit="tokens", quote="a chunk size of 512 tokens"),
        "chunk_b": _fact(distserve, "chunk", entity=prefill, subject="chunked prefill", parameter="chunk_size",
                         value="2048", value_num=2048, unit="tokens", quote="chunks of 2048 tokens"),
    }
    for fact in facts.values():
        FactRevision.objects.create(fact=fact, action="create", actor=fact.extractor, after={"value": fact.value})
    Subscription.objects.create(email=users["owner"].email, status="active", topics=["kv-cache"], min_score=5.0,
                                confirmed_at=timezone.now())
    return WebData(users=users, papers={"vllm": vllm, "sarathi": sarathi, "distserve": distserve}, facts=facts,
                   entities={"vllm": vllm_entity, "prefill": prefill}, repo=repo)


def make_web_data(*, index: bool = False) -> WebData:
    """Users and corpus; with `index`, also the search documents (embeds with the real MiniLM model)."""
    data = make_corpus(make_users())
    if index:
        for paper in data.papers.values():
            index_paper(paper)
        index_facts(list(data.facts.values()))
    return data
