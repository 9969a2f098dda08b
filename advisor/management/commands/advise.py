"""`python manage.py advise --request FILE.json` (or flags): print the advisor's answer as JSON.

Runs from a shell or a script (the eval harness calls it per case). Invalid input prints
`{"error": ..., "hint": ...}` and exits with status 2, so scripts can tell bad input from a real answer.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from advisor.profiles import engine_names
from advisor.services import recommend
from advisor.validation import AdvisorInputError

WORKLOAD_FLAGS = ("prompt_tokens", "output_tokens", "concurrency")
SLA_FLAGS = ("p95_ttft_ms", "p95_tpot_ms", "p95_latency_ms", "min_throughput_tok_s")


def _value(text: str) -> Any:
    """Flag values on the command line: JSON when they parse (numbers, true/false), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class Command(BaseCommand):
    help = "Recommend engine, version and flags for a GPU, model, workload and SLA (prints JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--request", help="advisor request as a JSON file ('-' reads stdin)")
        parser.add_argument("--gpu")
        parser.add_argument("--gpu-count", type=int)
        parser.add_argument("--cuda", help="CUDA version the driver supports (nvidia-smi)")
        parser.add_argument("--model", help="Hugging Face model id")
        parser.add_argument("--engine", help="one of: " + ", ".join(engine_names()))
        parser.add_argument("--engine-version")
        parser.add_argument("--max-context", type=int)
        for name in WORKLOAD_FLAGS:
            parser.add_argument(f"--{name.replace('_', '-')}", type=int)
        for name in SLA_FLAGS:
            parser.add_argument(f"--{name.replace('_', '-')}", type=float)
        parser.add_argument("--flag", action="append", default=[], metavar="KEY=VALUE",
                            help="an engine flag you have fixed, e.g. --flag max_model_len=8192 (repeatable)")

    def _request(self, opts: dict[str, Any]) -> dict[str, Any]:
        if opts["request"]:
            text = sys.stdin.read() if opts["request"] == "-" else Path(opts["request"]).read_text(encoding="utf-8")
            try:
                raw = json.loads(text)
            except ValueError as exc:
                raise AdvisorInputError(f"the request file is not valid JSON: {exc}", "check the file with `python -m json.tool FILE`") from exc
            if not isinstance(raw, dict):
                raise AdvisorInputError("the request must be a JSON object", 'e.g. {"gpu": "A100-SXM4-40GB", "model": "..."}')
        else:
            raw = {}
        for key in ("gpu", "gpu_count", "cuda", "model", "engine", "engine_version", "max_context"):
            if opts.get(key) is not None:
                raw[key] = opts[key]
        for group, names in (("workload", WORKLOAD_FLAGS), ("sla", SLA_FLAGS)):
            given = {n: opts[n] for n in names if opts.get(n) is not None}
            if given:
                raw[group] = {**raw.get(group, {}), **given}
        for item in opts["flag"]:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise AdvisorInputError(f"--flag '{item}' is not KEY=VALUE", "e.g. --flag max_model_len=8192")
            raw.setdefault("flags", {})[key] = _value(value)
        return raw

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            answer = recommend(self._request(opts))
        except AdvisorInputError as exc:
            self.stdout.write(json.dumps(exc.as_dict(), indent=2))
            sys.exit(2)
        except OSError as exc:
            self.stdout.write(json.dumps({"error": f"cannot read the request: {exc}", "hint": "check the path"}, indent=2))
            sys.exit(2)
        self.stdout.write(json.dumps(answer, indent=2))
