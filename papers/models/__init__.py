"""Models of the papers app, one module per concern (papers and parsing; scoring; digest)."""
from papers.models.paper import Author, CodeRepo, Paper, PaperAuthor, PaperRepo, PipelineEvent, Section, Table

__all__ = ["Author", "CodeRepo", "Paper", "PaperAuthor", "PaperRepo", "PipelineEvent", "Section", "Table"]
