"""Models of the papers app, one module per concern (papers and parsing; scoring; digest)."""
from papers.models.digest import DigestDelivery, Subscription
from papers.models.network import SourceHealth
from papers.models.paper import (
    Author,
    CodeRepo,
    IdentityConflict,
    Paper,
    PaperAuthor,
    PaperPage,
    PaperRepo,
    PipelineEvent,
    Section,
    Table,
)
from papers.models.scoring import Score

__all__ = [
    "Author", "CodeRepo", "DigestDelivery", "IdentityConflict", "Paper", "PaperAuthor", "PaperPage", "PaperRepo",
    "PipelineEvent", "Score", "Section", "SourceHealth", "Subscription", "Table",
]
