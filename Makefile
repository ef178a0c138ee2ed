# The two commands of the README: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
PORT ?= 8000
VENV := .venv
BIN := $(VENV)/bin
# Above the consumers' own limits (1 MiB frames, 25 MiB with attachment data), so an
# oversized frame gets our error message instead of a dropped connection.
DAPHNE_LIMITS := --websocket-max-message-size 33554432 --websocket-max-frame-size 33554432
# A Debian package, as root or through sudo (shell text for the recipes below).
APT_INSTALL = SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -qq \
	&& DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq

# Installs are locked: uv.lock holds every version (`make lock` renews it from the ranges in
# pyproject.toml), and requirements/*.txt are the same sets exported with hashes for pip.
# The installer is uv at the version requirements/uv.txt pins: the `uv` on PATH when it is
# that version, otherwise a copy installed from PyPI into .tools/. Where uv cannot be had
# (or with INSTALLER=pip) pip installs the same locked versions, only slower.
INSTALLER ?= uv
UV_VERSION := $(shell sed -n 's/^uv==\([0-9.]*\).*/\1/p' requirements/uv.txt)
UV_BOOT := .tools/uv-$(UV_VERSION)
ifeq ($(shell uv --version 2>/dev/null | cut -d' ' -f2),$(UV_VERSION))
UV := uv
else
UV := $(UV_BOOT)/bin/uv
endif
# uv uses this machine's Python for .venv and never downloads one of its own.
export UV_PYTHON := $(PYTHON)
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(VENV)
# Where Python may not write bytecode (PYTHONDONTWRITEBYTECODE), every process would compile
# the packages it imports again (each test's daphne, each extraction worker, ~2 s of CPU):
# uv compiles them once at install then, as pip always does.
ifneq ($(PYTHONDONTWRITEBYTECODE),)
export UV_COMPILE_BYTECODE := 1
endif
LOCKED := uv.lock requirements/run.txt requirements/test.txt requirements/dev.txt
EXPORT := $(UV) export --locked --no-emit-project --quiet

.PHONY: run test lint install lock relock requirements lock-check audit installer compiler browser clean

# Sets everything up (virtualenv, runtime packages, database, demo login and data) and serves
# the dashboard with daphne on http://127.0.0.1:8000 (PORT=8001 for another port).
run: $(VENV)/.installed-run
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py bootstrap_demo --port $(PORT)
	$(BIN)/daphne $(DAPHNE_LIMITS) -b 127.0.0.1 -p $(PORT) controlui.asgi:application

# Sets up (the test tools too, and Debian's chromium) and runs the whole test suite.
test: $(VENV)/.installed-test browser
	$(BIN)/python -m pytest

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file .ci/mypy-apps.ini accounts common controlui enrichment richoutput server
	$(CC) -fsyntax-only -Wall -Wextra -Werror -I"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" enrichment/pipeline/links/_linkscan.c

install: $(VENV)/.installed-dev

# The package sets: `run` the runtime dependencies, `test` adds the test tools, `dev` the lint
# and profiling tools (and the test tools). A venv keeps the largest set it was given, so
# `make run` after `make test` takes no tools away; that set is installed exactly as locked
# (uv removes what the lock does not list). The editable install of the project compiles the
# C fast path of link detection; uv rebuilds it when its sources change (tool.uv.cache-keys).
$(VENV)/.installed-%: pyproject.toml setup.py $(LOCKED) enrichment/pipeline/links/_linkscan.c enrichment/pipeline/links/_linkscan_scan.h | compiler
	@$(MAKE) --no-print-directory installer
	@set -e; want=$*; have=$$(cat $(VENV)/.package-set 2>/dev/null || true); \
	case "$$have:$$want" in dev:*|test:run) want=$$have;; esac; \
	if [ "$(INSTALLER)" != pip ] && [ -x "$$(command -v $(UV))" ]; then \
	  $(UV) lock --check --quiet || { echo "uv.lock does not match pyproject.toml: run 'make relock' (or 'make lock' to upgrade everything), then the whole suite, or undo the change to pyproject.toml." >&2; exit 1; }; \
	  echo "Installing the locked '$$want' set with uv $(UV_VERSION)..."; \
	  $(UV) sync --locked --quiet $$( [ $$want = run ] || echo --extra $$want ); \
	else \
	  echo "Installing the locked '$$want' set with pip (requirements/$$want.txt)..."; \
	  [ -x $(BIN)/pip ] || $(PYTHON) -m venv $(VENV); \
	  $(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/$$want.txt; \
	  $(BIN)/python -m pip install --quiet --no-deps -e .; \
	fi; \
	echo $$want > $(VENV)/.package-set; \
	touch $(VENV)/.installed-run; \
	case $$want in test|dev) touch $(VENV)/.installed-test;; esac; \
	case $$want in dev) touch $(VENV)/.installed-dev;; esac

# uv itself, when the pinned version is not on PATH: from PyPI with pip (hashes checked), into
# .tools/ (with this Python's pip, else a small venv's). If that fails, installs use pip.
installer:
ifneq ($(INSTALLER),pip)
	@[ -x "$$(command -v $(UV))" ] || { \
	  echo "Installing uv $(UV_VERSION) (the installer) from PyPI into $(UV_BOOT)..."; \
	  rm -rf $(UV_BOOT); \
	  pip_install="--quiet --disable-pip-version-check --require-hashes --no-deps -r requirements/uv.txt"; \
	  $(PYTHON) -m pip install $$pip_install --target $(UV_BOOT) 2>/dev/null \
	  || { rm -rf $(UV_BOOT) && $(PYTHON) -m venv $(UV_BOOT) && $(UV_BOOT)/bin/python -m pip install $$pip_install; } \
	  || { rm -rf $(UV_BOOT); echo "uv $(UV_VERSION) could not be installed: installing with pip instead (the same locked versions, slower)." >&2; }; }
endif

# Renews the lock on purpose: the newest versions the ranges of pyproject.toml allow, and the
# hashed exports for pip. Then run the whole suite (see the README's "Upgrading").
lock: installer
	$(UV) lock --upgrade
	$(MAKE) --no-print-directory requirements

# After a change to pyproject.toml: the lock follows it and keeps every other version.
relock: installer
	$(UV) lock
	$(MAKE) --no-print-directory requirements

# The exports for pip, from the lock as it is.
requirements: installer
	$(EXPORT) -o requirements/run.txt
	$(EXPORT) --extra test -o requirements/test.txt
	$(EXPORT) --extra dev -o requirements/dev.txt

# CI: the lock matches pyproject.toml, and the exports match the lock.
lock-check: installer
	@$(UV) lock --check --quiet || { echo "uv.lock does not match pyproject.toml (uv lock --check): run 'make relock' (keeps every other version) or 'make lock' (upgrades everything), run the whole suite, and commit uv.lock and requirements/." >&2; exit 1; }
	@exported=$$(mktemp); trap 'rm -f $$exported' EXIT; for set in run test dev; do \
	  $(EXPORT) --no-header $$( [ $$set = run ] || echo --extra $$set ) -o $$exported; \
	  grep -v '^#' requirements/$$set.txt | cmp -s - $$exported || { \
	    echo "requirements/$$set.txt does not match uv.lock: run 'make requirements' and commit it." >&2; exit 1; }; \
	done
	@echo "uv.lock matches pyproject.toml; requirements/*.txt match uv.lock."

# Known vulnerabilities in the locked versions (every set), from the OSV database (or another
# service speaking its protocol: OSV_URL=...); skipped with a message where it cannot be reached.
OSV_URL ?= https://api.osv.dev/
audit: installer
	@if $(PYTHON) -c 'import socket, sys, urllib.parse as p; u = p.urlsplit(sys.argv[1]); socket.create_connection((u.hostname, u.port or (443 if u.scheme == "https" else 80)), timeout=5).close()' '$(OSV_URL)' 2>/dev/null; then \
	  $(UV) audit --locked --preview-features audit-command --service-url '$(OSV_URL)'; \
	else \
	  echo "Skipping the known-vulnerability audit: its service ($(OSV_URL)) cannot be reached from this machine. Run 'make audit' where it can." >&2; \
	fi

# A C compiler for that fast path: Debian's gcc when none is there (without one the install
# still works and link detection uses its pure-Python path).
compiler:
	@command -v cc >/dev/null 2>&1 || { \
	  echo "Installing Debian's gcc for the link-detection fast path..."; \
	  $(APT_INSTALL) gcc >/dev/null || echo "No C compiler: link detection will use its slower pure-Python path."; }

# Debian's chromium drives the browser tests (never a downloaded browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing Debian's chromium for the browser tests..."; \
	  $(APT_INSTALL) chromium >/dev/null; }

clean:
	rm -rf $(VENV) .tools var .pytest_cache .mypy_cache .ruff_cache build enrichment/pipeline/links/*.so
