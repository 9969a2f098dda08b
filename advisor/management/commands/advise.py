"""`python manage.py advise --request FILE.json` (or flags): print the advisor's answer as JSON.

Runs from a shell or a script (the eval harness calls it per case). The flags are the fields of the
advisor request model (`advisor.request.AdviceRequest`, workload and SLA fields included), so the CLI
takes exactly what the API takes. Whatever happens, stdout is one valid JSON document: the answer
(exit 0), or `{"error": ..., "hint": ...}` with exit status 2 for input a person must fix.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from advisor.profiles import engine_names
from advisor.request import AdviceRequest, SlaIn, WorkloadIn
from advisor.services import recommend
from advisor.validation import AdvisorInputError

SCALARS = [name for name in AdviceRequest.model_fields if name not in ("workload", "sla", "flags", "hf_config")]
GROUPS = {"workload": list(WorkloadIn.model_fields), "sla": list(SlaIn.model_fields)}


def _value(text: str) -> Any:
    """Flag values on the command line: JSON when they parse (numbers, true/false), else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _help(model: type[AdviceRequest] | type[WorkloadIn] | type[SlaIn], name: str) -> str:
    info = model.model_fields[name]
    text = info.description or ""
    if name == "engine":
        text += " — one of: " + ", ".join(engine_names())
    return text


class Command(BaseCommand):
    help = "Recommend engine, version and flags for a GPU, model, workload and SLA (prints JSON)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--request", help="advisor request as a JSON file ('-' reads stdin)")
        for name in SCALARS:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name, help=_help(AdviceRequest, name))
        for group, names in GROUPS.items():
            model = WorkloadIn if group == "workload" else SlaIn
            for name in names:
                parser.add_argument(f"--{name.replace('_', '-')}", dest=name, help=f"{group}: {_help(model, name)}")
        parser.add_argument("--model-config", dest="model_config", metavar="CONFIG_JSON",
                            help="the model's config.json file, for a model neither the catalog nor the Hub has "
                                 "(the request's \"model_config\"); a model folder can also be given as --model PATH")
        parser.add_argument("--flag", action="append", default=[], metavar="KEY=VALUE",
                            help="an engine flag you have fixed, e.g. --flag max_model_len=8192 (repeatable)")

    @staticmethod
    def _json_file(path: str, what: str) -> dict[str, Any]:
        """One JSON object from a file ('-' reads stdin), at most DATA_UPLOAD_MAX_MEMORY_SIZE characters."""
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if path == "-":
            text = sys.stdin.read(limit + 1)
        else:
            with Path(path).open(encoding="utf-8") as file:
                text = file.read(limit + 1)
        if len(text) > limit:
            raise AdvisorInputError(f"{what} is longer than {limit:,} characters",
                                    "an advisor request is a flat object of a few fields")
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise AdvisorInputError(f"{what} file is not valid JSON: {exc}", "check the file with `python -m json.tool FILE`") from exc
        except RecursionError:
            raise AdvisorInputError(f"{what} file nests too deeply to read", "an advisor request is a flat object of a few fields") from None
        if not isinstance(parsed, dict):
            raise AdvisorInputError(f"{what} must be a JSON object", 'e.g. {"gpu": "A100-SXM4-40GB", "model": "..."}')
        return parsed

    def _request(self, opts: dict[str, Any]) -> dict[str, Any]:
        raw: dict[str, Any] = self._json_file(opts["request"], "the request") if opts["request"] else {}
        if opts.get("model_config"):
            raw["model_config"] = self._json_file(opts["model_config"], "the model config")
        for key in SCALARS:
            if opts.get(key) is not None:
                raw[key] = opts[key] if key in ("gpu", "model", "engine", "engine_version", "cuda") else _value(opts[key])
        for group, names in GROUPS.items():
            given = {n: _value(opts[n]) for n in names if opts.get(n) is not None}
            if given:
                section = raw.get(group)
                raw[group] = {**(section if isinstance(section, dict) else {}), **given}
        for item in opts["flag"]:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise AdvisorInputError(f"--flag '{item}' is not KEY=VALUE", "e.g. --flag max_model_len=8192")
            flags = raw.setdefault("flags", {})
            if not isinstance(flags, dict):
                raise AdvisorInputError("'flags' must be an object of engine flags", 'e.g. {"max_model_len": 8192}')
            flags[key] = _value(value)
        return raw

    def _fail(self, error: str, hint: str) -> NoReturn:
        self.stdout.write(json.dumps({"error": error, "hint": hint}, indent=2))
        sys.exit(2)

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            answer = recommend(self._request(opts), any_path=True)
        except AdvisorInputError as exc:
            self._fail(exc.error, exc.hint)
        except OSError as exc:
            self._fail(f"cannot read the request: {exc}", "check the path")
        try:
            text = json.dumps(answer, indent=2, allow_nan=False)
        except ValueError as exc:  # a non-finite number in the answer: never print invalid JSON
            self._fail(f"the answer could not be written as JSON: {exc}", "report this request as a bug")
        self.stdout.write(text)
