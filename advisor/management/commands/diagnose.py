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
        recognised = result["recognised"]
        if recognised["engine"] or recognised["compute_capability"]:
            setup = " ".join(str(v) for v in (recognised["engine"], recognised["version"], recognised["gpu"]) if v)
            cc = f" (compute capability {recognised['compute_capability']})" if recognised["compute_capability"] else ""
            self.stdout.write(f"recognised: {setup}{cc}")
        if not result["findings"]:
            self.stdout.write(result["message"])
            return
        for n, finding in enumerate(result["findings"], start=1):
            if finding["kind"] != "technique":
                self._failure(n, finding)
                continue
            self.stdout.write(f"{n}. {finding['title']} ({finding['technique']})\n   {finding['why']}")
            for action in finding["actions"]:
                since = f" (since {action['since']})" if action["since"] else ""
                self.stdout.write(f"   try: {action['engine']} {action['flag']}{since}")
            for item in finding["evidence"]:
                self.stdout.write(f"   arXiv:{item['paper']} p.{item['page']}: \"{item['quote']}\"")
            self._reports(finding)
        if result["missing"]:
            self.stdout.write(f"to sharpen this answer, add {', '.join(result['missing'])}")

    def _failure(self, n: int, finding: dict[str, Any]) -> None:
        """A recognised failure: each fix (flag, value, arithmetic, why, source), then where the message lives."""
        self.stdout.write(f"{n}. {finding['title']}" + (f" [{finding['signature']}]" if finding["signature"] else ""))
        for a in finding["actions"]:
            where = f" ({a['applies_to']} option)" if a.get("applies_to") else ""
            if a["direction"] in ("upgrade", "downgrade"):  # a release, not a flag: "upgrade to 0.6.4 or later"
                later = " or later" if a["direction"] == "upgrade" else ""
                target = f" to {a['value']}{later}" if a["value"] else ""
                package = f" {a['target']}" if a.get("target") else ""
                self.stdout.write(f"   fix: {a['engine']}: {a['direction']}{package}{target}")
            else:
                value = f" {a['value']}" if a["value"] and "=" not in a["flag"] else ""
                self.stdout.write(f"   fix: {a['engine']}: {a['direction']} {a['flag']}{value}{where}")
            if a["arithmetic"]:
                self.stdout.write(f"        {a['arithmetic']}")
            self.stdout.write(f"        why: {a['why']}" + (f" (source {a['source']})" if a["source"] else ""))
        if finding["source"]:
            self.stdout.write(f"   message source: {finding['source']['url']}")
        self._reports(finding)

    def _reports(self, finding: dict[str, Any]) -> None:
        for report in finding["reports"]:
            self.stdout.write(f"   reported: {report['repo']} {report['issue']} — {report['title']}")
