"""Identity hijack: PDFs built here that name stored papers every way a citing or hostile file can (an id
in the references, a stamp-like line in the text, a rotated id off the margin, a stamp on page 2, the
file name, the stored DOI or title in a reference, the stored title in the metadata), imported with
`ingest_pdf` and uploaded at /upload/. Property: no stored paper changes (title, version, PDF,
pages, sections, facts), and no id read from such a file becomes a paper's key: each is stored under
its own local id.
"""
from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client

from infrawiki.permissions import EDITORS_GROUP
from papers.models import Paper
from papers.services.pdfs import ingest_pdf_file
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import rng
from tests.papers.pdfs import SERVING_TEXT, text_pdf

pytestmark = pytest.mark.django_db
CASES = 6
STARTER = ("2309.06180", "Efficient Memory Management for Large Language Model Serving with PagedAttention",
           "10.1145/3600006.3613165")
READ = ("2401.00005", "Sys: fast serving")
UNSTORED = "2501.09999"  # named in the files, stored nowhere: must not become a key either
WORDS = ["garden", "irrigation", "tomato", "schedules", "queueing", "drip", "soil", "survey", "lattice", "orchard"]


def _body_tricks(arxiv_id: str, title: str, doi: str) -> list[str]:
    return [
        f"References. [1] W. Kwon et al. {title}. arXiv:{arxiv_id}, 2023.",
        f"Preprint. arXiv:{arxiv_id}v2 [cs.DC] 12 Sep 2023. Under review.",
        f"[7] {title}. In SOSP 2023. https://doi.org/{doi}",
        f"This work builds on {title} and on arXiv:{UNSTORED}.",
        f"DOI: {doi}",
    ]


def _hostile_pdf(path: Path, own_title: str, body: str, placements: list[str], target: tuple[str, str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text_pdf(path, "Abstract. " + body + " " + SERVING_TEXT, "Page two. " + SERVING_TEXT, title=own_title)
    doc = pymupdf.open(path)
    stamp = f"arXiv:{target[0]}v3  [cs.LG]  1 Mar 2024"
    if "rotated in the body" in placements:
        doc[0].insert_text((300, 600), stamp, fontsize=10, rotate=90)
    if "stamp on page 2" in placements:
        doc[1].insert_text((30, 560), stamp, fontsize=20, rotate=90)
    if "horizontal in the margin" in placements:
        doc[0].insert_text((2, 820), stamp, fontsize=3)
    if "metadata title" in placements:
        doc.set_metadata({"title": target[1]})
    doc.saveIncr()
    return path


def _snapshot() -> dict[str, tuple]:
    return {p.arxiv_id: (p.title, p.version, p.pdf_sha256, p.status, p.pages.count(), p.sections.count(),
                         p.facts.count())
            for p in Paper.objects.filter(arxiv_id__in=[STARTER[0], READ[0]])}


def test_no_pdf_naming_a_stored_paper_takes_it_over_or_gets_a_guessed_id(tmp_path, settings) -> None:
    settings.DATA_DIR = tmp_path / "data"
    Paper.objects.create(arxiv_id=STARTER[0], version=0, title=STARTER[1], doi=STARTER[2])
    ingest_pdf_file(text_pdf(tmp_path / "read.pdf", SERVING_TEXT, title=READ[1],
                             stamp=f"arXiv:{READ[0]}v1  [cs.DC]  1 Jan 2024"))
    call_command("extract_papers", READ[0], "--no-llm")
    before = _snapshot()
    user = User.objects.create_user("editor")
    user.groups.add(Group.objects.get_or_create(name=EDITORS_GROUP)[0])
    client = Client()
    client.force_login(user)
    r = rng("identity")
    placements = ["rotated in the body", "stamp on page 2", "horizontal in the margin", "metadata title", "file name"]
    failures = []
    for case in range(CASES):
        target = STARTER if r.random() < 0.5 else (*READ, "10.1000/none")
        own_title = " ".join(r.sample(WORDS, 4)).title()
        body = " ".join(r.sample(_body_tricks(*target), r.randint(1, 3)))
        chosen = r.sample(placements, r.randint(0, 2))
        name = f"{target[0]}v2.pdf" if "file name" in chosen else f"case-{case}.pdf"
        pdf = _hostile_pdf(tmp_path / f"case-{case}" / name, own_title, body, chosen, target)
        label = f"case {case}: {own_title!r}, {chosen}, {body[:80]!r}"
        with time_limit(label):
            if case % 2:
                response = client.post("/upload/", {"pdf": SimpleUploadedFile(name, pdf.read_bytes())})
                if response.status_code != 302:
                    failures.append(f"{label}: upload answered {response.status_code}")
            else:
                try:
                    call_command("ingest_pdf", str(pdf))
                except CommandError as exc:
                    failures.append(f"{label}: ingest_pdf failed: {exc}")
        tried("identity hijack PDF")
        if _snapshot() != before:
            failures.append(f"{label}: changed a stored paper: {before} -> {_snapshot()}")
            before = _snapshot()
        stored = Paper.objects.filter(title=own_title).first()
        if stored is None or not stored.arxiv_id.startswith("sha256:"):
            failures.append(f"{label}: stored as {stored.arxiv_id if stored else 'nothing'}")
    assert not Paper.objects.filter(arxiv_id=UNSTORED).exists()
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures)
