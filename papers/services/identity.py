"""Which stored paper a PDF is: the arXiv id a PDF names is a hint to check, never a key to trust.

Runs in `ingest_pdf`, `import_pdfs` and the upload form before anything is stored. An id comes from
the person (trusted: they said so), from the arXiv stamp or the first page, from the file name, or
from a stored paper with the same title. A hinted paper that is already stored is only taken when
the PDF agrees with it (same PDF, or a title that matches and no other PDF stored); otherwise the
PDF becomes a paper of its own and an IdentityConflict waits for a person (admin, review page).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from papers.models import IdentityConflict, Paper
from papers.pdf import ParsedPdf
from papers.services.events import record_event

_IN_FILE_NAME = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_WORD = re.compile(r"[a-z0-9]+")
TITLE_AGREES = 0.5  # word overlap (Jaccard) above which two titles name the same paper
TITLE_MATCHES = 0.8  # stricter: a title alone, without any id, picks a stored paper
_TITLE_HEAD_CHARS = 1500  # where a first page prints its title


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def title_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two titles' words (0 when either has none)."""
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def _squash(text: str) -> str:
    return "".join(_WORD.findall(text.casefold()))


def _placeholder(title: str) -> bool:
    return not title.strip() or title.startswith("(untitled")


def titles_agree(stored: Paper, parsed: ParsedPdf) -> bool:
    """Whether the PDF reads as the stored paper: similar titles, or the stored title printed at the
    top of the PDF's first page (title detection can miss; the first page rarely lies)."""
    if _placeholder(stored.title):
        return True
    if title_overlap(stored.title, parsed.title) >= TITLE_AGREES:
        return True
    head = _squash(parsed.page_texts[0][:_TITLE_HEAD_CHARS]) if parsed.page_texts else ""
    return len(_squash(stored.title)) >= 12 and _squash(stored.title) in head


@dataclass
class Identity:
    """The outcome: the stored paper to update, or the key of a new one; and any conflict found."""

    source: str  # "explicit", "stamp", "file name", "title", "sha256"
    paper: Paper | None = None
    new_key: str | None = None
    conflict: Paper | None = None
    reason: str = ""


def _conflict_reason(stored: Paper, parsed: ParsedPdf, sha: str) -> str | None:
    """Why the PDF cannot be the stored paper, or None when it can."""
    if stored.pdf_sha256 == sha:
        return None
    if not titles_agree(stored, parsed):
        return (f"the PDF's title {parsed.title[:120]!r} is not the stored title {stored.title[:120]!r}")
    if stored.pdf_sha256 and not (parsed.arxiv_version and parsed.arxiv_version > stored.version):
        return (f"another PDF (sha256 {stored.pdf_sha256[:12]}) is stored for it and this one is not a newer "
                "arXiv version")
    return None


def id_in_file_name(name: str) -> str | None:
    """The new-style arXiv id a file name carries ("2309.06180v2.pdf", "vllm-2309.06180.pdf")."""
    named = _IN_FILE_NAME.search(name)
    return named.group(1) if named else None


def _hints(parsed: ParsedPdf, file_name: str) -> list[tuple[str, str]]:
    hints = [("stamp", parsed.arxiv_id)] if parsed.arxiv_id else []
    named = id_in_file_name(file_name)
    if named and named != parsed.arxiv_id:
        hints.append(("file name", named))
    return hints


def _by_title(parsed: ParsedPdf, sha: str) -> Paper | None:
    """A stored paper without a PDF (or with this one) whose title is this PDF's title."""
    if _placeholder(parsed.title):
        return None
    first = next(iter(sorted(_words(parsed.title), key=len, reverse=True)), "")
    candidates = Paper.objects.filter(title__icontains=first).filter(pdf_sha256__in=["", sha])
    scored = [(title_overlap(p.title, parsed.title), p) for p in candidates.only("pk", "title", "arxiv_id")]
    best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return best[1] if best[0] >= TITLE_MATCHES else None


def identify(parsed: ParsedPdf, sha: str, file_name: str = "", arxiv_id: str | None = None) -> Identity:
    """Decide which paper the parsed PDF is (nothing is written here)."""
    if arxiv_id:
        return Identity("explicit", paper=Paper.objects.filter(arxiv_id=arxiv_id).first(), new_key=arxiv_id)
    first_conflict: Identity | None = None
    for source, hint in _hints(parsed, file_name):
        stored = Paper.objects.filter(arxiv_id=hint).first()
        if stored is None:
            return Identity(source, new_key=hint)
        reason = _conflict_reason(stored, parsed, sha)
        if reason is None:
            return Identity(source, paper=stored)
        first_conflict = first_conflict or Identity(source, new_key=f"sha256:{sha[:16]}", conflict=stored,
                                                    reason=f"arXiv:{hint} ({source}): {reason}")
    if first_conflict:
        return first_conflict
    by_title = _by_title(parsed, sha)
    if by_title is not None:
        return Identity("title", paper=by_title)
    return Identity("sha256", new_key=f"sha256:{sha[:16]}")


def record_conflict(paper: Paper, identity: Identity, sha: str) -> IdentityConflict | None:
    """Keep the conflict for review and say so on both papers' event logs."""
    if identity.conflict is None:
        return None
    conflict, _ = IdentityConflict.objects.get_or_create(
        paper=paper, claimed=identity.conflict,
        defaults={"hint_source": identity.source, "reason": identity.reason, "pdf_sha256": sha},
    )
    message = (f"identity conflict: {identity.reason}; the PDF was stored as {paper.arxiv_id} and "
               f"{identity.conflict.arxiv_id} was left unchanged; a person decides in the review queue")
    record_event(stage="identity", message=message, paper=paper, error=True)
    record_event(stage="identity", message=message, paper=identity.conflict, error=True)
    return conflict
