# make run   - start web, worker and scheduler (embedded SQLite + file broker unless DATABASE_URL / REDIS_URL are set)
# make test  - create the virtual environment, install, run every test on PostgreSQL and Redis
# make test-fast - the engine and unit tests only (no worker, browser or server processes)
# make manage ARGS="svcx org create --name Acme" - a management command with the venv's Python and settings
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# `make run` installs what the service needs (requirements.txt); `make test` and the tools add the
# test, lint and type-check tools (requirements-dev.txt) to the same environment.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed

# Tests run on the real PostgreSQL and Redis of this machine unless overridden, in TEST_PROCESSES
# parallel processes (pytest-xdist; each with its own test database, Redis database and var
# folder: tests/isolation.py), a test file to a process. Most of the suite waits on servers and
# workers it started (about 1.2 cores busy with two processes on two cores), so a third process
# overlaps those waits: 6 min 59 s of tests against 8 min 05 s with two (clean clone, 2 cores);
# a fourth gains nothing (session 44: 7 min 51 s against 7 min 45 s, bench/results/suite.md).
# TEST_PROCESSES=0: one process.
TEST_DATABASE_URL ?= $(or $(DATABASE_URL),postgresql://postgres@127.0.0.1:5432/svcx)
TEST_REDIS_URL ?= $(or $(REDIS_URL),redis://127.0.0.1:6379/15)
TEST_PROCESSES ?= 3

# The PDFium text source's C helper (conversion/engine/_pdfium_chars.c): every character of a
# text page copied in one call, and the page's glyph boxes and lines made from them. Needs
# only a C compiler (no PDFium header or library: it calls the functions of pypdfium2's PDFium
# by the addresses it is given). Without a compiler the source reads the characters and makes
# the lines in Python, slower, with the same answers.
# -ffp-contract=off: no fused multiply-add, so the boxes are Python's to the last bit.
HELPER := conversion/engine/_pdfium_chars.so

.PHONY: run test test-fast lint format typecheck check bench migrate manage clean helpers

$(HELPER): conversion/engine/_pdfium_chars.c
	$(CC) -O2 -ffp-contract=off -shared -fPIC -o $@ $< || echo "$@ not built (no C compiler?): the PDFium source reads from Python"

helpers: $(HELPER)

$(RUN_STAMP): requirements.txt | $(HELPER)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

run: $(RUN_STAMP)
	$(PY) -m svcx.run

test: $(STAMP)
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile $(PYTEST_ARGS)

# The engine and the unit tests: no worker, browser or server processes (markers set by
# tests/conftest.py).
test-fast: $(STAMP)
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(PY) -m pytest -n $(TEST_PROCESSES) --dist loadfile -m "not worker and not browser and not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: $(STAMP)
	$(VENV)/bin/mypy .

migrate: $(RUN_STAMP)
	$(PY) manage.py migrate

# The same interpreter, settings and SVCX_VAR_DIR (from the environment) as `make run`.
manage: $(RUN_STAMP)
	$(PY) manage.py $(ARGS)

check: lint typecheck
	$(PY) manage.py makemigrations --check --dry-run
	$(MAKE) test

bench: $(STAMP)
	$(PY) -m bench setup
	$(PY) -m bench quality
	$(PY) -m bench real
	$(PY) -m bench speed
	$(PY) -m bench service

clean:
	rm -rf $(VENV) var $(HELPER)
