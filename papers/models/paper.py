"""Papers and what hangs off them: authors, page-anchored sections and tables, code repositories.

Written by the crawl and parse services; read through papers.selectors. A paper row is keyed on
its arXiv id (without version); `version` only ever moves forward.
"""
from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from papers.models.fields import CleanCharField, CleanJSONField, CleanTextField


class Author(models.Model):
    name = CleanCharField(max_length=300, unique=True)

    def __str__(self) -> str:
        return self.name


class Paper(models.Model):
    class Status(models.TextChoices):
        # In pipeline order (READ_STATUSES below derives from it); FAILED last, off the line.
        NEW = "new", "new"
        DOWNLOADED = "downloaded", "PDF downloaded"
        PARSED = "parsed", "parsed"
        EXTRACTING = "extracting", "extracting facts"
        WAITING = "waiting", "waiting for the LLM server"
        EXTRACTED = "extracted", "facts extracted"
        FAILED = "failed", "failed"

    arxiv_id = models.CharField(max_length=40, unique=True, help_text="arXiv id without version, e.g. 2309.06180")
    version = models.PositiveIntegerField(default=1)
    title = CleanTextField()
    abstract = CleanTextField(blank=True)
    authors = models.ManyToManyField(Author, through="PaperAuthor", related_name="papers")
    published = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(null=True, blank=True)
    primary_category = models.CharField(max_length=40, blank=True)
    categories = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    comment = CleanTextField(blank=True)
    journal_ref = CleanTextField(blank=True)
    doi = models.CharField(max_length=200, blank=True)
    pdf_url = models.URLField(max_length=500, blank=True)
    code_urls = ArrayField(models.URLField(max_length=500), default=list, blank=True)
    pdf_sha256 = models.CharField(max_length=64, blank=True, db_index=True)
    pdf_path = models.CharField(max_length=500, blank=True)
    page_count = models.PositiveIntegerField(null=True, blank=True)
    environment = CleanJSONField(default=dict, blank=True, help_text="hardware/software the paper reports")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.NEW, db_index=True)
    failure_stage = models.CharField(max_length=40, blank=True)
    failure_reason = CleanTextField(blank=True)
    pdf_queued_at = models.DateTimeField(null=True, blank=True, help_text="when a download of the PDF was last queued")
    first_crawled_at = models.DateTimeField(
        null=True, blank=True,
        help_text="when an arXiv crawl first stored this paper; empty for rows the seed list, the pack or an upload made")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-published", "arxiv_id"]

    def __str__(self) -> str:
        return f"{self.arxiv_id}v{self.version} {self.title[:60]}"

    @property
    def is_read(self) -> bool:
        """Its PDF has been parsed (here, or by the pipeline that built an imported knowledge file);
        until then a score judges the title and abstract only, so pages say "not read yet" instead."""
        return self.status in READ_STATUSES


_PIPELINE = [status for status in Paper.Status if status != Paper.Status.FAILED]
# The statuses of a paper whose PDF has been parsed: PARSED and every later stage.
READ_STATUSES = tuple(_PIPELINE[_PIPELINE.index(Paper.Status.PARSED):])


class PaperAuthor(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE)
    author = models.ForeignKey(Author, on_delete=models.CASCADE)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["paper", "author"], name="unique_paper_author")]

    def __str__(self) -> str:
        return f"{self.author} #{self.position} on {self.paper_id}"


class CodeRepo(models.Model):
    """A GitHub repository, with the health signals the scorecard uses."""

    full_name = models.CharField(max_length=200, unique=True, help_text="owner/name")
    html_url = models.URLField(max_length=300, blank=True)
    description = CleanTextField(blank=True)
    stars = models.PositiveIntegerField(null=True, blank=True)
    forks = models.PositiveIntegerField(null=True, blank=True)
    open_issues = models.PositiveIntegerField(null=True, blank=True)
    pushed_at = models.DateTimeField(null=True, blank=True)
    license_spdx = models.CharField(max_length=80, blank=True)
    default_branch = models.CharField(max_length=100, blank=True)
    archived = models.BooleanField(default=False)
    has_ci = models.BooleanField(null=True, blank=True)
    workflows = models.JSONField(default=list, blank=True)
    production_signals = models.JSONField(default=list, blank=True, help_text="issues that report production use")
    etags = models.JSONField(default=dict, blank=True, help_text="ETag per API path, for conditional requests")
    fetched_at = models.DateTimeField(null=True, blank=True)
    failure_reason = CleanTextField(blank=True)
    papers = models.ManyToManyField(Paper, through="PaperRepo", related_name="repos")

    def __str__(self) -> str:
        return self.full_name


class PaperRepo(models.Model):
    class Source(models.TextChoices):
        ABSTRACT = "abstract", "link in the abstract or comments"
        SEED = "seed", "seed list"
        README = "readme", "README mentions the arXiv id"
        PDF = "pdf", "link in the PDF"

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE)
    repo = models.ForeignKey(CodeRepo, on_delete=models.CASCADE)
    source = models.CharField(max_length=20, choices=Source.choices)
    official = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["paper", "repo"], name="unique_paper_repo")]

    def __str__(self) -> str:
        return f"{self.paper_id} -> {self.repo_id} ({self.source})"


class Section(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="sections")
    order = models.PositiveIntegerField()
    number = CleanCharField(max_length=20, blank=True, help_text="e.g. 4.2")
    title = CleanTextField()
    page_start = models.PositiveIntegerField()
    page_end = models.PositiveIntegerField()
    text = CleanTextField(blank=True)

    class Meta:
        ordering = ["paper", "order"]
        constraints = [models.UniqueConstraint(fields=["paper", "order"], name="unique_section_order")]

    def __str__(self) -> str:
        return f"{self.number} {self.title}".strip()


class Table(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="tables")
    order = models.PositiveIntegerField()
    page = models.PositiveIntegerField()
    caption = CleanTextField(blank=True)
    n_rows = models.PositiveIntegerField()
    n_cols = models.PositiveIntegerField()
    cells = CleanJSONField(default=list, help_text="rows of cell text")

    class Meta:
        ordering = ["paper", "order"]
        constraints = [models.UniqueConstraint(fields=["paper", "order"], name="unique_table_order")]

    def __str__(self) -> str:
        return f"table {self.order} p.{self.page}: {self.caption[:60]}"


class PaperPage(models.Model):
    """The text of one PDF page in quote form (whitespace collapsed), stored once per parse: what
    extraction reads and quotes are checked against, and what search cuts page passages from."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="pages")
    number = models.PositiveIntegerField(help_text="1-based page number")
    text = CleanTextField(blank=True)

    class Meta:
        ordering = ["paper", "number"]
        constraints = [models.UniqueConstraint(fields=["paper", "number"], name="unique_paper_page")]

    def __str__(self) -> str:
        return f"{self.paper_id} p.{self.number}"


class IdentityConflict(models.Model):
    """A PDF whose text named an arXiv id that belongs to a different stored paper.

    The id read from a PDF is only a hint: when the paper stored under it has another title or PDF,
    the new PDF is stored as its own paper (`paper`) and this row waits for a person to decide.
    """

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="identity_conflicts",
                              help_text="the paper the PDF was stored as")
    claimed = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="claimed_by",
                                help_text="the stored paper whose arXiv id the PDF named")
    hint_source = models.CharField(max_length=20, help_text="where the id was read: stamp, file name, title")
    reason = CleanTextField()
    pdf_sha256 = models.CharField(max_length=64)
    resolved = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["resolved", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["paper", "claimed"], name="unique_identity_conflict")]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id} claims {self.claimed.arxiv_id}: {self.reason[:60]}"


class PipelineEvent(models.Model):
    """One recorded step outcome (success or failure) of a paper or repo, for the status pages."""

    class Level(models.TextChoices):
        INFO = "info", "info"
        ERROR = "error", "error"

    paper = models.ForeignKey(Paper, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    repo = models.ForeignKey(CodeRepo, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    stage = models.CharField(max_length=40)
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.INFO)
    message = CleanTextField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"[{self.level}] {self.stage}: {self.message[:80]}"
