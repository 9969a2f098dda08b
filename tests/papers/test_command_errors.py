"""Commands meet bad input and a database that is not ready with a clean error and exit 2, never a traceback."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import psycopg
import pymupdf
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from infrawiki.runtime import database_url
from tests.papers.pdfs import SERVING_TEXT, text_pdf

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, database: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def empty_database(db) -> str:
    """A database that exists on the test server but was never migrated (a fresh clone before `make run`)."""
    params = dict(connection.settings_dict)
    name = f"h15a_unmigrated_{os.getpid()}"
    admin = psycopg.connect(database_url({**params, "NAME": "postgres"}), autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url({**params, "NAME": name})
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def test_commands_before_migrate_say_what_to_run(tmp_path, empty_database) -> None:
    pdf = text_pdf(tmp_path / "sys.pdf", SERVING_TEXT, title="Sys: fast serving")
    for args in (("ingest_pdf", str(pdf)), ("extract_papers", "--all"), ("load_seed",)):
        result = _manage(*args, database=empty_database)
        assert result.returncode == 2, (args, result.stderr[-2000:])
        assert "Traceback" not in result.stderr and "make run" in result.stderr and "migrate" in result.stderr


def test_a_database_that_cannot_be_reached_is_said_plainly() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = _manage("load_seed", database=f"postgresql://nobody@127.0.0.1:{port}/infrawiki")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cannot reach the database" in result.stderr and "DATABASE_URL" in result.stderr


def test_extract_pdf_on_an_encrypted_pdf_is_a_clean_user_error(tmp_path) -> None:
    locked = tmp_path / "locked.pdf"
    plain = text_pdf(tmp_path / "plain.pdf", SERVING_TEXT, title="Sys: fast serving")
    pymupdf.open(plain).save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    with pytest.raises(CommandError, match="password-protected") as error:
        call_command("extract_pdf", str(locked), "--json", "--no-llm")
    assert error.value.returncode == 2


@pytest.mark.django_db
def test_ingest_pdf_of_something_that_is_not_a_pdf_exits_2_and_stores_nothing(tmp_path, data_dir) -> None:
    page = tmp_path / "paper.pdf"
    page.write_text("<html>captcha</html>")
    with pytest.raises(CommandError, match="not a PDF") as error:
        call_command("ingest_pdf", str(page))
    assert error.value.returncode == 2 and not list(data_dir.glob("**/*.pdf"))
