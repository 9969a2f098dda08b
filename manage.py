#!/usr/bin/env python
"""Django's command-line entry point for InfraWiki (runs every management command).

A command that meets a database which is missing or not migrated says what to run and exits 2
(infrawiki.setup_errors) instead of printing a traceback; so do arguments that are not valid UTF-8
and paths the operating system refuses (infrawiki.cli).
"""
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError, ProgrammingError

    from infrawiki.cli import USAGE_EXIT, os_error_message, refuse_argv

    refused = refuse_argv(sys.argv[1:])
    if refused:
        sys.stderr.write(refused + "\n")
        sys.exit(USAGE_EXIT)
    try:
        execute_from_command_line(sys.argv)
    except OSError as exc:
        sys.stderr.write(os_error_message(exc) + "\n")
        sys.exit(USAGE_EXIT)
    except (OperationalError, ProgrammingError) as exc:
        from infrawiki.setup_errors import SETUP_EXIT, setup_hint

        hint = setup_hint(exc)
        if hint is None:
            raise
        sys.stderr.write(hint + "\n")
        sys.exit(SETUP_EXIT)


if __name__ == "__main__":
    main()
