"""Which stored paper a PDF is. A PDF's own id is its arXiv margin stamp, its DOI, or its title; an id
seen anywhere else (page 1's text, a reference, the file name) is only ever a question for a person.

Runs in `ingest_pdf`, `import_pdfs` and the upload form before anything is stored:
- a person's `--arxiv-id` is trusted (they said so);
- the stamp or DOI names a stored paper: taken when the PDF reads as that paper (titles agree) and
  does not replace a reading it already has;
- a stamp naming no stored paper makes a paper under that id; a title matching a stored paper's
  (TITLE_MATCHES) picks that paper the same way;
- otherwise the PDF is a paper of its own under a local id (`sha256:…`), never a guessed arXiv id.
Every stored paper the PDF named but was not taken for is held as an IdentityConflict (review page,
admin), with both titles. A different PDF for a paper that already has a reading never replaces it
here: the reading stays until an editor accepts the held PDF (`accept_held_pdf`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import transaction

from ontology import selectors as ontology_selectors
from ontology.services import index_paper
from papers.arxiv_ids import NEW_STYLE
from papers.events import record_event
from papers.models import IdentityConflict, Paper, PaperPage, Section, Table
from papers.pdf import ParsedPdf

_IN_FILE_NAME = re.compile(rf"(?<![\d.])({NEW_STYLE})(?:v\d+)?(?![\d])")
_IN_TEXT = re.compile(rf"arXiv\s*:?\s*({NEW_STYLE})(?![\d])", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
TITLE_AGREES = 0.5  # word overlap (Jaccard) above which two titles name the same paper
TITLE_MATCHES = 0.8  # stricter: a title alone, without any id, picks a stored paper
_HEAD_CHARS = 600  # without a found abstract: how much of page 1 counts as its head (title, authors)


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


def _head(parsed: ParsedPdf) -> str:
    """Page 1 above the abstract: where a paper prints its own title. References, which print other
    papers' titles, always come after the abstract."""
    first = parsed.page_texts[0] if parsed.page_texts else ""
    start = first.find(parsed.abstract[:60]) if len(parsed.abstract) >= 60 else -1
    return first[:start] if start > 0 else first[:_HEAD_CHARS]


def titles_agree(stored: Paper, parsed: ParsedPdf) -> bool:
    """Whether the PDF reads as the stored paper: similar titles, or the stored title printed at the
    head of the PDF's first page (title detection can miss; the head of page 1 rarely lies)."""
    if _placeholder(stored.title):
        return True
    if title_overlap(stored.title, parsed.title) >= TITLE_AGREES:
        return True
    return len(_squash(stored.title)) >= 12 and _squash(stored.title) in _squash(_head(parsed))


def local_id(sha: str) -> str:
    """The id of a paper known only by its PDF's bytes (no arXiv stamp, no known title)."""
    return f"sha256:{sha[:16]}"


def has_reading(paper: Paper) -> bool:
    """Whether the paper has a PDF or pages, sections and tables read from one (here or in a pack)."""
    return bool(paper.pdf_sha256) or paper.is_read or paper.pages.exists() or paper.sections.exists()


@dataclass
class Held:
    """A stored paper the PDF named (or resembles) but was not taken for, and why."""

    paper: Paper
    source: str  # "stamp", "doi", "title", "text", "file name"
    reason: str


@dataclass
class Identity:
    """The outcome: the stored paper to update, or the key of a new one; and the papers held apart."""

    source: str  # "explicit", "stamp", "doi", "title", "sha256"
    paper: Paper | None = None
    new_key: str | None = None
    held: list[Held] = field(default_factory=list)

    def note(self) -> str:
        """One line for a person: which stored papers were left unchanged and why ("" when none)."""
        return "; ".join(f"arXiv:{h.paper.arxiv_id} left unchanged ({h.source}: {h.reason})" for h in self.held)


def _titles(parsed: ParsedPdf, stored: Paper) -> str:
    return f"the PDF's title {parsed.title[:120]!r}, the stored title {stored.title[:120]!r}"


def _refusal(stored: Paper, parsed: ParsedPdf, sha: str) -> str | None:
    """Why the PDF cannot simply become the stored paper it names, or None when it can."""
    if stored.pdf_sha256 == sha:
        return None
    if not titles_agree(stored, parsed):
        return f"the titles differ: {_titles(parsed, stored)}"
    if has_reading(stored):
        return ("a different PDF for a paper that already has a reading; its reading stays until an editor "
                f"accepts this one ({_titles(parsed, stored)})")
    return None


def id_in_file_name(name: str) -> str | None:
    """The new-style arXiv id a file name carries ("2309.06180v2.pdf", "vllm-2309.06180.pdf")."""
    named = _IN_FILE_NAME.search(name)
    return named.group(1) if named else None


def _own_ids(parsed: ParsedPdf) -> list[tuple[str, Paper | None, str]]:
    """(source, stored paper or None, id) for the ids the PDF states about itself: stamp, then DOI."""
    own: list[tuple[str, Paper | None, str]] = []
    if parsed.arxiv_id:
        own.append(("stamp", Paper.objects.filter(arxiv_id=parsed.arxiv_id).first(), parsed.arxiv_id))
    if parsed.doi:
        own.append(("doi", Paper.objects.filter(doi__iexact=parsed.doi).first(), parsed.doi))
    return own


def _by_title(parsed: ParsedPdf) -> Paper | None:
    """The stored paper whose title is this PDF's title (TITLE_MATCHES), if any."""
    if _placeholder(parsed.title):
        return None
    first = next(iter(sorted(_words(parsed.title), key=len, reverse=True)), "")
    candidates = Paper.objects.filter(title__icontains=first)
    scored = [(title_overlap(p.title, parsed.title), p) for p in candidates]
    best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    return best[1] if best[0] >= TITLE_MATCHES else None


def _named_elsewhere(parsed: ParsedPdf, file_name: str) -> list[tuple[str, str]]:
    """(source, id) for arXiv ids in page 1's text and the file name: claims, never identities."""
    found = [("text", m.group(1)) for m in _IN_TEXT.finditer(parsed.page_texts[0] if parsed.page_texts else "")]
    named = id_in_file_name(file_name)
    found += [("file name", named)] if named else []
    return list(dict.fromkeys(found))


def identify(parsed: ParsedPdf, sha: str, file_name: str = "", arxiv_id: str | None = None) -> Identity:
    """Decide which paper the parsed PDF is (nothing is written here)."""
    if arxiv_id:
        return Identity("explicit", paper=Paper.objects.filter(arxiv_id=arxiv_id).first(), new_key=arxiv_id)
    held: list[Held] = []
    for source, stored, own_id in _own_ids(parsed):
        if stored is None:
            if source == "stamp":
                return Identity("stamp", new_key=own_id, held=held)
            continue
        reason = _refusal(stored, parsed, sha)
        if reason is None:
            return Identity(source, paper=stored, held=held)
        held.append(Held(stored, source, reason))
    by_title = _by_title(parsed)
    if by_title is not None and all(h.paper.pk != by_title.pk for h in held):
        reason = _refusal(by_title, parsed, sha)
        if reason is None:
            return Identity("title", paper=by_title, held=held)
        held.append(Held(by_title, "title", reason))
    if not held:  # a PDF with no identity of its own: every stored paper it names waits for a person
        for source, named in _named_elsewhere(parsed, file_name):
            stored = Paper.objects.filter(arxiv_id=named).first()
            if stored is not None and all(h.paper.pk != stored.pk for h in held):
                where = "page 1's text" if source == "text" else "the file name"
                held.append(Held(stored, source, f"its id appears only in {where}, not in an arXiv stamp; "
                                                 f"{_titles(parsed, stored)}"))
    return Identity("sha256", new_key=local_id(sha), held=held)


def record_conflicts(paper: Paper, identity: Identity, sha: str) -> list[IdentityConflict]:
    """Keep each held paper for review and say so on both papers' event logs."""
    conflicts = []
    for held in identity.held:
        conflict, _ = IdentityConflict.objects.get_or_create(
            paper=paper, claimed=held.paper,
            defaults={"hint_source": held.source, "reason": held.reason, "pdf_sha256": sha},
        )
        conflicts.append(conflict)
        message = (f"identity conflict: the PDF stored as {paper.arxiv_id} named or resembles "
                   f"{held.paper.arxiv_id} ({held.source}): {held.reason}; {held.paper.arxiv_id} was left "
                   "unchanged; a person decides in the review queue")
        record_event(stage="identity", message=message, paper=paper, error=True)
        record_event(stage="identity", message=message, paper=held.paper, error=True)
    return conflicts


class AcceptRefused(Exception):
    """The held PDF cannot be accepted as it stands; `reason` says what a person can do."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def accept_held_pdf(conflict_id: int, user_name: str) -> Paper:
    """An editor's decision that a held PDF is the paper it claimed: that paper takes the held copy's
    reading (pages, sections, tables, PDF, version) in one transaction and the held copy is removed.
    Its facts are not touched here: the caller queues its extraction, which reads the new pages.

    Refused (nothing changes) when the conflict is gone or resolved, or when a person already reviewed
    facts of the held copy: removing it would lose that work.
    """
    with transaction.atomic():
        conflict = (IdentityConflict.objects.select_for_update().select_related("paper", "claimed")
                    .filter(pk=conflict_id, resolved=False).first())
        if conflict is None:
            raise AcceptRefused("this identity conflict is already decided")
        held, claimed = conflict.paper, conflict.claimed
        reviewed = ontology_selectors.reviewed_facts(held.pk).count()
        if reviewed:
            raise AcceptRefused(f"{reviewed} fact(s) of the held copy {held.arxiv_id} were reviewed by a person; "
                                "keep both papers and mark the conflict resolved in the admin instead")
        for rows in (PaperPage.objects, Section.objects, Table.objects):
            rows.filter(paper=claimed).delete()
            rows.filter(paper=held).update(paper=claimed)
        claimed.pdf_sha256, claimed.pdf_path, claimed.page_count = held.pdf_sha256, held.pdf_path, held.page_count
        claimed.environment, claimed.version = held.environment, max(claimed.version, held.version)
        claimed.status, claimed.failure_stage, claimed.failure_reason = Paper.Status.PARSED, "", ""
        claimed.abstract = claimed.abstract or held.abstract
        held.delete()  # its conflicts and unreviewed facts go with it
        claimed.save()
        record_event(stage="identity", paper=claimed,
                     message=f"{user_name} accepted the PDF held as {held.arxiv_id} (sha256 {claimed.pdf_sha256[:12]}) "
                             "as this paper's reading; its extraction runs again")
        index_paper(claimed)
    return claimed
