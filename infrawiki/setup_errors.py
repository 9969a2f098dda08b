"""What to tell a person whose command met a database that is not there or not migrated yet.

Used by manage.py around every management command: on a fresh clone `ingest_pdf` (or any other
command) run before `make run` would otherwise print a raw `relation "papers_paper" does not exist`
traceback. Exit status 2 marks it as something the user fixes, not a crash.
"""
from __future__ import annotations

from django.db.utils import OperationalError, ProgrammingError

SETUP_EXIT = 2
_HOW = "run `make run` once (it creates and migrates the database), or `python manage.py migrate`"


def setup_hint(exc: BaseException) -> str | None:
    """The message for a missing or unmigrated database, or None when `exc` is some other error."""
    cause = exc.__cause__
    detail = str(cause or exc).strip().splitlines()[0] if str(cause or exc).strip() else type(exc).__name__
    if isinstance(exc, ProgrammingError) and type(cause).__name__ in ("UndefinedTable", "UndefinedColumn"):
        return f"error: the database is not set up for this version of InfraWiki ({detail}); {_HOW}"
    if isinstance(exc, OperationalError) and type(cause).__name__ in ("OperationalError", "ConnectionTimeout"):
        return (f"error: cannot reach the database ({detail}); {_HOW}, or point DATABASE_URL at a running "
                "PostgreSQL with pgvector")
    return None
