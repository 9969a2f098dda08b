"""The one format of knowledge files (JSON Lines): a header line, then one line per paper.

Written by `export_knowledge` and `build_knowledge_pack`, read by `import_knowledge` and the pack
loader in `make run`. A paper line carries its metadata, outline (section titles and page ranges),
table captions, environment fingerprint, latest scorecard and facts with their review status and
revision history — never the PDF or its text. Every line is validated here before anything is
stored, so a hand-edited or truncated file fails with the line number and the field at fault.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ontology.selectors import MAX_QUOTE, revision_actions

FORMAT = "infrawiki-knowledge"
FORMAT_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Header(_Record):
    type: Literal["header"] = "header"
    format: Literal["infrawiki-knowledge"] = FORMAT
    version: Literal[1] = FORMAT_VERSION
    origin: str = Field(max_length=200, description="who wrote the file: 'knowledge pack v1', 'export of <host>'")
    as_of: datetime | None = None
    notice: str = Field(default="", max_length=2000)


class RevisionRecord(_Record):
    action: str = Field(max_length=20)
    actor: str = Field(max_length=150)
    user: str | None = Field(default=None, max_length=150, description="username of the person, if one")
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    note: str = Field(default="", max_length=5000)
    created_at: datetime

    @field_validator("action")
    @classmethod
    def _known_action(cls, action: str) -> str:
        known = revision_actions()
        if action not in known:
            raise ValueError(f"unknown revision action {action!r}; one of {', '.join(known)}")
        return action


class FactRecord(_Record):
    kind: Literal["constraint", "parameter", "trade_off"]
    subject: str = Field(max_length=200)
    parameter: str = Field(max_length=120)
    value: str | None = Field(default=None, max_length=200)
    unit: str | None = Field(default=None, max_length=30)
    condition: str | None = Field(default=None, max_length=1000)
    effect: str | None = Field(default=None, max_length=1000)
    page: int | None = Field(default=None, ge=1)
    quote: str = Field(min_length=1, max_length=MAX_QUOTE)
    confidence: float = Field(ge=0.0, le=1.0)
    extractor: str = Field(max_length=40)
    status: Literal["extracted", "verified", "rejected"] = "extracted"
    fingerprint: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    revisions: list[RevisionRecord] = Field(default_factory=list)
    techniques: list[str] = Field(default_factory=list, description="techniques a person linked (the extractor's are recomputed)")

    def fact_data(self) -> dict[str, Any]:
        """The fields ontology.schema validates (the extractor output shape)."""
        return self.model_dump(exclude={"status", "fingerprint", "revisions", "techniques"})

    @property
    def reviewed(self) -> bool:
        return self.status != "extracted" or any(revision.user for revision in self.revisions)


class SectionRecord(_Record):
    number: str = Field(default="", max_length=20)
    title: str = Field(max_length=1000)
    page_start: int = Field(ge=1)
    page_end: int = Field(ge=1)


class TableRecord(_Record):
    page: int = Field(ge=1)
    caption: str = Field(default="", max_length=2000)
    n_rows: int = Field(ge=0)
    n_cols: int = Field(ge=0)


class ScoreRecord(_Record):
    total: float = Field(ge=0, le=10)
    code_availability: float
    experimental_realism: float
    parameter_transparency: float
    community_feedback: float
    tier: Literal["recommended", "to_verify"]
    evidence: dict[str, Any]
    screening: dict[str, Any]
    production_value: float
    implementation_cost: float
    quadrant: Literal["quick_win", "major_project", "fill_in", "thankless"]
    value_matrix: dict[str, Any]
    flags: list[Any]
    topics: list[str]
    fingerprint: str = Field(max_length=64)
    scored_at: datetime


class PaperRecord(_Record):
    type: Literal["paper"] = "paper"
    arxiv_id: str = Field(min_length=1, max_length=40)
    version: int = Field(ge=0)
    title: str = Field(min_length=1, max_length=2000)
    abstract: str = Field(default="", max_length=20000)
    authors: list[str] = Field(default_factory=list)
    published: datetime | None = None
    updated: datetime | None = None
    primary_category: str = Field(default="", max_length=40)
    categories: list[str] = Field(default_factory=list)
    doi: str = Field(default="", max_length=200)
    pdf_url: str = Field(default="", max_length=500)
    code_urls: list[str] = Field(default_factory=list)
    page_count: int | None = Field(default=None, ge=0)
    environment: dict[str, Any] = Field(default_factory=dict)
    read_from_pdf: bool = Field(default=False, description="the writer had the PDF: outline, scores and facts come from it")
    pdf_source: dict[str, str] = Field(
        default_factory=dict, description="where the PDF came from (pack): file, listed_in, repository, path, commit, "
                                          "identified_by (arXiv stamp | title | local id)")
    sections: list[SectionRecord] = Field(default_factory=list)
    tables: list[TableRecord] = Field(default_factory=list)
    score: ScoreRecord | None = None
    facts: list[FactRecord] = Field(default_factory=list)


class KnowledgeFileError(ValueError):
    """A knowledge file that cannot be read at all (not JSON Lines, wrong format or version)."""


def _reader(path: Path) -> IO[str]:
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def dump_line(record: BaseModel) -> str:
    """One record as a canonical JSON line (sorted keys), so equal knowledge gives equal bytes."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_file(path: Path, header: Header, papers: Iterable[PaperRecord]) -> int:
    """Write `header` and `papers` to `path` (gzip when it ends in .gz); returns how many papers.

    Written to a temporary file and renamed, so a failed export never leaves half a file behind.
    """
    lines = [dump_line(header)] + [dump_line(paper) for paper in papers]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=9, mtime=0)  # mtime=0: equal knowledge, equal bytes
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    partial.replace(path)
    return len(lines) - 1


def read_file(path: Path) -> tuple[Header, Iterator[tuple[int, PaperRecord | str]]]:
    """The header, and each later line as (line number, PaperRecord) or (line number, error text).

    A bad paper line is reported and skipped by the caller; a bad header stops the whole file.
    """
    try:
        handle = _reader(path)
        first = handle.readline()
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise KnowledgeFileError(f"cannot read {path}: {exc}") from exc
    try:
        header = Header.model_validate_json(first)
    except ValidationError as exc:
        handle.close()
        raise KnowledgeFileError(
            f"{path} is not an InfraWiki knowledge file (line 1 must be a header of format {FORMAT!r} "
            f"version {FORMAT_VERSION}): {exc.errors()[0]['msg']}") from exc

    def lines() -> Iterator[tuple[int, PaperRecord | str]]:
        with handle:
            try:
                for number, line in enumerate(handle, start=2):
                    if not line.strip():
                        continue
                    try:
                        yield number, PaperRecord.model_validate_json(line)
                    except ValidationError as exc:
                        where = ".".join(str(p) for p in exc.errors()[0]["loc"])
                        yield number, f"line {number}: {where or 'record'}: {exc.errors()[0]['msg']}"
            except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
                yield 0, f"{path} is truncated or damaged after the last good line: {exc}"

    return header, lines()
