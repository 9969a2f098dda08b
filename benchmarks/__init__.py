"""InfraWiki's benchmarks: one `python -m benchmarks.<name>` module and one `make bench-<name>` target each.

Run by hand or in CI's benchmark step, never by the test suite (its tests check the arithmetic on
tiny inputs). Every module times its work with `inference.timing.timings` and reports its figures
next to an anchor measured in the same run, so results from a busy machine stay comparable. The
engine's own benchmark stays with the engine (`python -m inference.bench`).
"""
import os

import django

# The advisor's catalogs read the ontology through its selectors, whose models need Django's app
# registry, so a benchmark run as `python -m benchmarks.<name>` sets Django up before it imports them
# (under pytest, pytest-django has already done so and this changes nothing).
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "infrawiki.settings")
django.setup()
