"""InfraWiki's benchmarks: one `python -m benchmarks.<name>` module and one `make bench-<name>` target each.

Run by hand or in CI's benchmark step, never by the test suite (its tests check the arithmetic on
tiny inputs). Every module times its work with `inference.timing.timings` and reports its figures
next to an anchor measured in the same run, so results from a busy machine stay comparable. The
engine's own benchmark stays with the engine (`python -m inference.bench`).

Importing this package sets Django up (settings from DJANGO_SETTINGS_MODULE, else infrawiki.settings):
the benchmarks read the apps' selectors and services, whose modules define models, so Django must be
ready before any benchmark module's own imports run. Setting up touches no database.
"""
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
django.setup()
