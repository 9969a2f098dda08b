#!/usr/bin/env python
"""Django's command-line entry point for InfraWiki (runs every management command).

A command that meets a database which is missing or not migrated says what to run and exits 2
(infrawiki.setup_errors) instead of printing a traceback.
"""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError, ProgrammingError

    try:
        execute_from_command_line(sys.argv)
    except (OperationalError, ProgrammingError) as exc:
        from infrawiki.setup_errors import SETUP_EXIT, setup_hint

        hint = setup_hint(exc)
        if hint is None:
            raise
        sys.stderr.write(hint + "\n")
        sys.exit(SETUP_EXIT)


if __name__ == "__main__":
    main()
