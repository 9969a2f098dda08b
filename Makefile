# InfraWiki: `make run` serves everything on this machine, `make test` runs the whole suite.
# Both bootstrap the virtualenv and the embedded PostgreSQL on first use.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DATA_DIR := $(or $(INFRAWIKI_DATA_DIR),.infrawiki)
PROCFILE ?= Procfile

.PHONY: run test lint bench bench-parse bench-inference bench-advisor bench-memory bench-search bench-search-quality bench-api bench-calibrate bench-perf-accuracy bench-extraction bench-diagnose bench-diagnose-errors stop clean

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(PY) -m infrawiki.bootstrap
	echo $$$$ > $(DATA_DIR)/run.pid; exec $(VENV)/bin/honcho start -f $(PROCFILE)

# one test process per core (pytest-xdist); each process has its own test database; tests that share
# an expensive fixture stay on one process (loadgroup, see tests/conftest.py)
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# ruff over the tree; mypy strict on inference/ and advisor/ (configuration in pyproject.toml)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: bench-parse bench-inference bench-advisor bench-search

bench-parse: $(STAMP)
	$(PY) -m benchmarks.parse

bench-inference: $(STAMP)
	$(PY) -m inference.bench

bench-advisor: $(STAMP)
	$(PY) -m benchmarks.advisor

bench-memory: $(STAMP)
	$(PY) -m benchmarks.memory_model

bench-search: $(STAMP)
	$(PY) -m benchmarks.search

bench-search-quality: $(STAMP)
	$(PY) -m benchmarks.search_quality

bench-api: $(STAMP)
	$(PY) -m benchmarks.api

# minutes: ingests ../shared/corpus/pdfs into a throw-away database, then diagnose's dev and held-out hit rates
bench-diagnose: $(STAMP)
	$(PY) -m benchmarks.diagnose

# seconds: pasted errors from real issue threads (dev and validation splits), top-3 findings name a resolving flag
bench-diagnose-errors: $(STAMP)
	$(PY) -m benchmarks.diagnose --errors

# minutes: our engine against the advisor's performance model (not part of `make bench`)
bench-calibrate: $(STAMP)
	$(PY) -m benchmarks.calibrate

# minutes: the advisor's TTFT/TPOT against aiconfigurator-core's measured serving runs (h200 validation half,
# fit half, other systems) beside aiconfigurator's own estimate and a naive roofline; --fit refits calibration.json
bench-perf-accuracy: $(STAMP)
	$(PY) -m benchmarks.perf_accuracy $(BENCH_ARGS)

# minutes: the extraction workload through the built-in server (batched, no prefix cache, one at a time)
bench-extraction: $(STAMP)
	$(PY) -m benchmarks.extraction $(BENCH_ARGS)

# Ends what `make run` started: the Procfile's processes (pid in run.pid) and the embedded PostgreSQL.
stop:
	$(PY) -m infrawiki.stop

clean: stop
	rm -rf $(DATA_DIR) staticfiles
