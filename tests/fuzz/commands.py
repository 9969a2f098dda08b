"""Running a management command as the shell would, inside the test process: its exit status,
stdout and stderr, and any traceback it would have printed.

`manage.py` itself (`run_from_argv`) closes the database connections when it ends, which would end
the test's transaction; this does the same steps (with manage.py's own edge checks, infrawiki.cli)
without that, so hundreds of fuzz cases cost milliseconds each instead of a Django start-up each.
"""
from __future__ import annotations

import contextlib
import io
import traceback
from dataclasses import dataclass

from django.core.management import get_commands, load_command_class
from django.core.management.base import CommandError, SystemCheckError

from infrawiki.cli import USAGE_EXIT, os_error_message, refuse_argv


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    crash: str | None = None  # the traceback of an exception the command did not turn into an error

    @property
    def clean_error(self) -> bool:
        """Refused with exit status 2 and a message (on stderr, or the JSON error on stdout), no traceback."""
        return self.crash is None and self.code == 2 and bool(self.err.strip() or self.out.strip())


def run_command(name: str, *argv: str) -> Outcome:
    """`python manage.py NAME ARGV...`: the status it would exit with and what it would print."""
    command = load_command_class(get_commands()[name], name)
    out, err = io.StringIO(), io.StringIO()
    code, crash = 0, None
    refused = refuse_argv(list(argv))  # what manage.py does before any command runs
    if refused:
        return Outcome(USAGE_EXIT, "", refused + "\n")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        parser = command.create_parser("manage.py", name)
        parser.called_from_command_line = True  # argparse errors exit 2, as in the shell
        try:
            options = vars(parser.parse_args(list(argv)))
            args = options.pop("args", ())
            command._called_from_command_line = True
            command.execute(*args, stdout=out, stderr=err, **options)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except (CommandError, SystemCheckError) as exc:
            err.write(f"CommandError: {exc}\n")
            code = exc.returncode if isinstance(exc, CommandError) else 1
        except OSError as exc:  # manage.py turns these into one line and exit 2
            err.write(os_error_message(exc) + "\n")
            code = USAGE_EXIT
        except Exception:  # what the shell would show as a traceback with exit status 1
            code, crash = 1, traceback.format_exc()
    return Outcome(code, out.getvalue(), err.getvalue(), crash)
