# Tapis: `make run` (the demo) and `make test` (everything CI checks). See README.md.

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

# The test suite runs against real PostgreSQL and Redis; override either from the environment.
TEST_DATABASE_URL ?= $(or $(DATABASE_URL),postgresql://postgres@127.0.0.1:5432/tapis)
TEST_BROKER_URL ?= $(or $(CELERY_BROKER_URL),redis://127.0.0.1:6379/1)
PYTEST_ARGS ?= -n 2

# Python packages checked by mypy: the ones that exist (others are added as they appear).
PACKAGES := $(patsubst %/__init__.py,%,$(wildcard config/__init__.py games/__init__.py \
	judge/__init__.py tournaments/__init__.py api/__init__.py))
# Reinstall when the dependencies change or a package appears (an editable install maps the
# packages it found when it was made).
INSTALL_INPUTS := pyproject.toml $(wildcard */__init__.py)

.PHONY: help run test install install-dev bubblewrap toolchains faulttools chromium services lint format \
	typecheck pytest compile clean

help:
	@echo "make run        the demo: web server on http://$(HOST):$(PORT)/ and one Celery worker"
	@echo "make test       lint, format check, type check and tests (needs PostgreSQL and Redis)"
	@echo "make lint | typecheck | pytest | format   one step of make test (format rewrites files)"
	@echo "make toolchains install the bot runtimes (gcc, g++, rustc, go, java, node) when missing"
	@echo "make compile    build the compiled engine (mypyc; optional: pure Python without it)"

$(PY):
	python3 -m venv $(VENV)

$(VENV)/.installed: $(INSTALL_INPUTS) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e .
	@touch $@

$(VENV)/.installed-dev: $(INSTALL_INPUTS) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install compile
	$(PY) -m config.run --host $(HOST) --port $(PORT)

test: install-dev compile bubblewrap toolchains faulttools chromium services lint typecheck pytest

# The judge runs bots under bubblewrap: install it when missing and we may.
bubblewrap:
	@if ! command -v bwrap >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "Installing bubblewrap..."; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap; \
		else \
			echo "warning: bubblewrap (bwrap) is missing: sudo apt-get install bubblewrap" >&2; \
		fi; \
	fi

# The fault-injection suite (tests/faults) starts its own PostgreSQL cluster and redis-server and
# puts a worker in a network namespace (ip): install what is missing when we may.
FAULT_TOOLS := postgresql redis-server iproute2 util-linux

faulttools:
	@missing="$$(for p in $(FAULT_TOOLS); do \
		dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q '^install ok installed' \
			|| echo "$$p"; done)"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "Installing $$missing..."; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
		else \
			echo "warning: missing for tests/faults: $$missing" >&2; \
		fi; \
	fi

# The bot runtimes beside python3 (docs/protocol.md, "Runtimes"), all Debian's packages: gcc and
# g++ with cJSON and nlohmann-json, rustc and cargo with Debian's packaged crates (serde_json, used offline
# from /usr/share/cargo/registry), Go, OpenJDK 17 with Gson, Node.js. docker/Dockerfile installs
# the same list (tests/test_docker_files.py checks it). Only the missing ones are installed.
TOOLCHAINS := gcc g++ libc6-dev libcjson-dev nlohmann-json3-dev rustc cargo librust-serde-json-dev golang-go \
	openjdk-17-jdk-headless libgoogle-gson-java nodejs

toolchains:
	@missing="$$(for p in $(TOOLCHAINS); do \
		dpkg-query -W -f='$${Status}\n' "$$p" 2>/dev/null | grep -q '^install ok installed' \
			|| echo "$$p"; done)"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "Installing the bot runtimes:" $$missing; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing; \
		else \
			echo "warning: bot runtimes missing (their tests fail): sudo apt-get install" \
				$$missing >&2; \
		fi; \
	fi

# The site's browser tests drive Debian's Chromium through Playwright (Playwright's own browser
# download cannot work offline): install it when missing and we may.
chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "Installing chromium..."; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; \
		else \
			echo "warning: chromium is missing (the browser tests need it): sudo apt-get install chromium" >&2; \
		fi; \
	fi

services: install-dev
	@DATABASE_URL='$(TEST_DATABASE_URL)' CELERY_BROKER_URL='$(TEST_BROKER_URL)' \
		$(PY) -m config.preflight

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

typecheck: install-dev
	$(VENV)/bin/mypy $(PACKAGES) manage.py

# The engine's hot modules compiled by mypyc into games/_compiled/ (games/_native.py). Optional:
# without mypyc (the dev extra), a C compiler or the Python headers it warns in one line and the
# engine runs in pure Python. Rebuilt only when a games/*.py changed; import games checks the
# sources' hashes itself and never runs a stale build.
compile: install
	@TAPIS_PURE_PYTHON=1 $(PY) -m games.compile

# The suite runs against the compiled engine (when it could be built), then the engine's tests
# once more in pure Python, the fallback and the source of truth (not the Dutch random rounds,
# the slowest, which run no compiled code but card helpers, nor the build's own tests, which
# run their own interpreters).
pytest: install-dev compile
	DATABASE_URL='$(TEST_DATABASE_URL)' CELERY_BROKER_URL='$(TEST_BROKER_URL)' \
		$(PY) -m pytest $(PYTEST_ARGS)
	TAPIS_PURE_PYTHON=1 $(PY) -m pytest $(PYTEST_ARGS) -p no:cacheprovider tests/games \
		tests/test_doctests.py --ignore=tests/games/test_dutch_random.py \
		--ignore=tests/games/test_compiled.py

clean:
	rm -rf var .mypy_cache .ruff_cache .pytest_cache .hypothesis games/_compiled games/_compiled.*
