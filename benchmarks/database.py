"""A database of its own for one benchmark run, so a benchmark never touches the instance's data.

Used by the benchmarks that load or generate a corpus (search latency, search quality, diagnose):
Django is set up, a throw-away database is created beside the configured one (or a kept one reused),
and it is dropped afterwards unless the caller keeps it for a later `--reuse`.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def throwaway_database(name: str, *, reuse: bool, keep: bool) -> Iterator[None]:
    """Run the body on database `name`: created afresh, or reused as it was left when `reuse`."""
    from django.db import connection

    original_name = connection.settings_dict["NAME"]
    connection.settings_dict["TEST"] = {**connection.settings_dict.get("TEST", {}), "NAME": name}
    connection.creation.create_test_db(verbosity=0, autoclobber=not reuse, keepdb=reuse)
    try:
        yield
    finally:
        if keep:
            print(f"kept database {connection.settings_dict['NAME']}")
        else:
            connection.creation.destroy_test_db(original_name, verbosity=0)
