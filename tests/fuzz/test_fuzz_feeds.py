"""Answers from arXiv and GitHub, damaged: the recorded responses (../shared/corpus), mutated with a
fixed seed — fields deleted, retyped, swapped for hostile values, bodies truncated — then imported
over loopback the way the crawlers read them. Property: each answer is stored or reported as an
error; no exception escapes, no entry is stored half (every stored paper has its title and authors).
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from papers.clients.github import RateLimited
from papers.models import CodeRepo, Paper
from papers.services import import_atom_files
from papers.services.github import sync_repo
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import rng, values

pytestmark = pytest.mark.django_db
ATOM_CASES = 120
GITHUB_CASES = 80
GITHUB_REPO = "PyGithub/PyGithub"


def _mutate_text(r, text: str) -> str:
    """One damage to an Atom body: a field's text replaced, an element dropped or repeated, a cut."""
    pool = [str(v) for v in values(r, 60)]
    choice = r.randrange(6)
    tags = re.findall(r"<((?:arxiv:)?[a-z_]+)[ >]", text)
    tag = r.choice(tags) if tags else "title"
    if choice == 0:  # a field's text replaced by a hostile value (XML-escaped, so it still parses)
        value = r.choice(pool).replace("&", "&amp;").replace("<", "&lt;")
        return re.sub(rf"(<{tag}(?: [^>]*)?>)[^<]*(</{tag}>)", lambda m: m.group(1) + value + m.group(2), text, count=1)
    if choice == 1:  # an element removed
        return re.sub(rf"<{tag}(?: [^>]*)?>[^<]*</{tag}>", "", text, count=1)
    if choice == 2:  # an entry repeated
        entries = re.findall(r"<entry>.*?</entry>", text, re.S)
        return text.replace("</feed>", "".join(entries[:1] * r.randint(2, 5)) + "</feed>") if entries else text
    if choice == 3:  # the body cut short
        return text[: r.randint(0, len(text))]
    if choice == 4:  # a raw control character (not allowed in XML)
        at = r.randint(0, len(text))
        return text[:at] + r.choice(["\x00", "\x01", "\ufffe"]) + text[at:]
    return text.replace("<published>", "<published>" + r.choice(pool).replace("<", "")[:40], 1)


def test_damaged_arxiv_answers_are_stored_whole_or_reported(corpus_dir: Path, tmp_path):
    recorded = [json.loads(p.read_text()) for p in sorted((corpus_dir / "arxiv_atom" / "arxiv_py_2026_recorded")
                                                           .glob("*.json"))]
    bodies = [record["body"] for record in recorded if record["status_code"] == 200]
    r = rng("atom")
    failures = []
    for case in range(ATOM_CASES):
        text = r.choice(bodies)
        for _ in range(r.randint(1, 3)):
            text = _mutate_text(r, text)
        path = tmp_path / f"answer-{case}.xml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            with time_limit(f"atom case {case}"):
                report = import_atom_files([path])
        except Exception as exc:  # noqa: BLE001  any escape is the finding
            failures.append(f"case {case}: {type(exc).__name__}: {str(exc)[:200]}")
            continue
        finally:
            tried("atom responses")
        stored = set(Paper.objects.values_list("arxiv_id", flat=True))
        if not set(report.new) <= stored:
            failures.append(f"case {case}: reported new {report.new} but stored {sorted(stored)[:5]}")
    half = Paper.objects.filter(title="").count() + Paper.objects.filter(authors=None).count()
    assert not failures and not half, f"{half} half-stored papers; " + "\n".join(failures[:20])


def _mutate_json(r, data):
    """The decoded body with one node replaced by a hostile value (or the wrong type)."""
    pool = [*values(r, 40), [], {}, [1, 2], {"a": None}, "x" * 100_000]
    if isinstance(data, dict) and data:
        key = r.choice(list(data))
        data = dict(data)
        data[key] = r.choice(pool) if r.random() < 0.6 else _mutate_json(r, data[key])
        return data
    if isinstance(data, list) and data:
        data = list(data)
        index = r.randrange(len(data))
        data[index] = r.choice(pool) if r.random() < 0.6 else _mutate_json(r, data[index])
        return data
    return r.choice(pool)


def test_damaged_github_answers_are_recorded_as_failures_not_crashes(github_replay):
    r = rng("github")
    routes = {path: record for path, record in github_replay.routes.items()
              if path.startswith(f"/repos/{GITHUB_REPO}") or path == "/search/issues"}
    assert routes, "the recorded GitHub traffic has no routes for the fuzzed repository"
    originals = {path: record["body"] for path, record in routes.items()}
    failures = []
    for case in range(GITHUB_CASES):
        path = r.choice(sorted(routes))
        try:
            decoded = json.loads(originals[path])
        except ValueError:
            decoded = originals[path]
        damage = r.randrange(4)
        if damage == 0:
            body = originals[path][: r.randint(0, len(originals[path]))]
        elif damage == 1:
            body = r.choice(["", "null", "[]", "{}", '"text"', "NaN", "\x00", "{" * 10_000])
        else:
            body = json.dumps(_mutate_json(r, decoded))
        routes[path]["body"] = body
        CodeRepo.objects.all().delete()  # no stored ETag, so every answer is read afresh
        try:
            with time_limit(f"github case {case}"):
                sync_repo(GITHUB_REPO)
        except RateLimited:
            pass
        except Exception as exc:  # noqa: BLE001  any escape is the finding
            failures.append(f"case {case} ({path}, damage {damage}): {type(exc).__name__}: {str(exc)[:200]}")
        finally:
            routes[path]["body"] = originals[path]
            tried("github responses")
    assert not failures, f"{len(failures)} crashes:\n" + "\n".join(failures[:20])
