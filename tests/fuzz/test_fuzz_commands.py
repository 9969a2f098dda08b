"""Every management command of the project's apps (found from Django's command list, so new ones
are covered), with hostile arguments, option values and input files. Property: exit status 0, or 2
with a message — never a traceback, a hang, a stored file no paper points to, or rows changed by
a run that failed without reporting anything done (commands over many inputs do the good ones).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from django.apps import apps
from django.core.management import get_commands, load_command_class

from tests.fuzz.commands import run_command
from tests.fuzz.conftest import time_limit, tried
from tests.fuzz.inputs import STRINGS, rng

pytestmark = pytest.mark.django_db
APPS = ("papers", "ontology", "advisor", "frontend", "infrawiki")
CASES_PER_COMMAND = 8
# What a shell can pass: no NUL; undecodable bytes arrive as lone surrogates (surrogateescape).
ARGV_STRINGS = [s for s in STRINGS if "\x00" not in s and "\ud800" not in s] + ["\udcff\udcfe", "-", "--"]


def _project_commands() -> list[str]:
    return sorted(name for name, app in get_commands().items() if app in APPS)


def _input_files(root: Path) -> list[str]:
    """Files a careless or hostile user hands a command."""
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "empty.pdf": b"", "text.pdf": b"not a pdf at all", "truncated.pdf": b"%PDF-1.7\n1 0 obj <<",
        "binary.pdf": bytes(range(256)) * 64, "invalid-utf8.json": b'{"gpu": "\xff\xfe"}',
        "nan.json": b'{"gpu": "A100-SXM4-40GB", "model": "m-7B", "gpu_count": NaN}',
        "deep.json": b"[" * 50_000 + b"]" * 50_000, "list.json": b"[1, 2]", "nul.json": b'{"gpu": "a\\u0000"}',
        "huge-number.json": b'{"gpu": "A100", "model": "m-7B", "gpu_count": 1' + b"0" * 400 + b"}",
        "atom.xml": b"<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>x</id></entry></feed>",
        "xxe.xml": b"<?xml version='1.0'?><!DOCTYPE f [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><f>&e;</f>",
        "recorded.json": json.dumps({"url": "x", "status_code": "abc", "body": 5}).encode(),
    }
    for name, content in files.items():
        (root / name).write_bytes(content)
    (root / "folder").mkdir(exist_ok=True)
    (root / "folder" / "inner.pdf").write_bytes(b"%PDF-")
    return [str(root / name) for name in files] + [str(root / "folder"), str(root / "missing.pdf")]


def _argv_cases(name: str, files: list[str]) -> list[list[str]]:
    command = load_command_class(get_commands()[name], name)
    parser = command.create_parser("manage.py", name)
    actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)
               and a.dest not in {"verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color",
                                  "skip_checks", "version"}]
    positionals = [a for a in actions if not a.option_strings]
    options = [a for a in actions if a.option_strings]
    r = rng(f"command:{name}")
    pool = ARGV_STRINGS + files
    cases: list[list[str]] = [[], ["--no-such-option"]]
    while len(cases) < CASES_PER_COMMAND:
        argv = [r.choice(pool) for _ in positionals]
        for option in r.sample(options, min(len(options), r.randint(0, 2))):
            argv.append(option.option_strings[-1])
            if option.nargs != 0:
                argv.append(r.choice(pool))
        cases.append(argv)
    return cases


def _row_counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for app in ("papers", "ontology", "advisor")
            for model in apps.get_app_config(app).get_models()}


def _orphan_files(data_dir: Path) -> set[str]:
    """Stored PDFs no paper row points to (what a half-done ingest leaves behind)."""
    from papers.models import Paper

    stored = {str(p.resolve()) for p in data_dir.rglob("*.pdf")} if data_dir.exists() else set()
    kept = {str(Path(path).resolve()) for path in Paper.objects.exclude(pdf_path="").values_list("pdf_path", flat=True)}
    kept |= {str((data_dir / path).resolve()) for path in Paper.objects.exclude(pdf_path="").values_list("pdf_path",
                                                                                                         flat=True)}
    return stored - kept


def test_no_command_crashes_or_leaves_a_partial_write_on_hostile_input(tmp_path, settings):
    settings.DATA_DIR = tmp_path / "data"
    files = _input_files(tmp_path / "inputs")
    failures = []
    for name in _project_commands():
        for argv in _argv_cases(name, files):
            before = _row_counts()
            with time_limit(f"{name} {argv!r}"[:120]):
                outcome = run_command(name, *argv)
            tried(f"command {name}")
            case = f"manage.py {name} {' '.join(a[:60] for a in argv)}"
            if outcome.crash:
                failures.append(f"{case}: traceback\n{outcome.crash[-800:]}")
            elif outcome.code not in (0, 2):
                failures.append(f"{case}: exit {outcome.code}: {outcome.err.strip()[-300:]}")
            elif outcome.code == 2 and not outcome.clean_error:
                failures.append(f"{case}: exit 2 without a message")
            if _orphan_files(settings.DATA_DIR):
                failures.append(f"{case}: left stored files no paper points to")
            if outcome.code != 0 and not outcome.out.strip() and _row_counts() != before:
                failures.append(f"{case}: failed, reported nothing done, yet changed rows")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:30])
