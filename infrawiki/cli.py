"""What every management command gets at the shell's edge (manage.py), before and after it runs:
arguments that are not text are refused, and a path the operating system refuses (too long, no
permission, not there) is a one-line error — both with exit status 2, never a traceback."""
from __future__ import annotations

USAGE_EXIT = 2


def refuse_argv(argv: list[str]) -> str | None:
    """The reason to refuse `argv`, or None. Bytes the terminal's encoding could not decode arrive
    as lone surrogates (PEP 383), which no database or file API accepts later."""
    for arg in argv:
        if any("\ud800" <= ch <= "\udfff" for ch in arg):
            shown = arg.encode("utf-8", "backslashreplace").decode()[:80]
            return f"error: argument {shown!r} is not valid UTF-8; retype it or fix the terminal's encoding"
    return None


def os_error_message(exc: OSError) -> str:
    """One line for a path the operating system refused."""
    where = f": {str(exc.filename)[:120]}" if exc.filename else ""
    return f"error: {exc.strerror or exc}{where}"
