"""`python manage.py diagnose "TEXT" [--json]`: what a production symptom or error message points at.

Prints the findings (technique, why, engine flags, paper evidence, GitHub reports), best first; with
--json the shape of DESIGN.md. Text diagnose cannot use prints `{"error", "hint"}` and exits 2.
"""
from __future__ import annotations

import json
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from advisor.diagnose import DiagnoseInputError, diagnose


class Command(BaseCommand):
    help = "Diagnose a serving symptom or error message from the literature and production reports."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text", nargs="+", help="the symptom in plain words, or the error message")
        parser.add_argument("--json", action="store_true", dest="as_json")

    def handle(self, *args: Any, text: list[str], as_json: bool, **options: Any) -> None:
        try:
            result = diagnose(" ".join(text))
        except DiagnoseInputError as exc:
            self.stdout.write(json.dumps(exc.as_dict()))
            sys.exit(2)
        if as_json:
            self.stdout.write(json.dumps(result, indent=1, ensure_ascii=False))
            return
        if not result["findings"]:
            self.stdout.write(result["message"])
            return
        for n, finding in enumerate(result["findings"], start=1):
            self.stdout.write(f"{n}. {finding['title']} ({finding['technique']})\n   {finding['why']}")
            for action in finding["actions"]:
                since = f" (since {action['since']})" if action["since"] else ""
                self.stdout.write(f"   try: {action['engine']} {action['flag']}{since}")
            for item in finding["evidence"]:
                self.stdout.write(f"   arXiv:{item['paper']} p.{item['page']}: \"{item['quote']}\"")
            for report in finding["reports"]:
                self.stdout.write(f"   reported: {report['repo']} {report['issue']} — {report['title']}")
