# The two commands of the README: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Above the consumers' own limits (1 MiB frames, 25 MiB with attachment data), so an
# oversized frame gets our error message instead of a dropped connection.
# A Debian package, as root or through sudo (shell text for the recipes below).
APT_INSTALL = SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); $$SUDO apt-get update -qq \
	&& DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq
DAPHNE_LIMITS := --websocket-max-message-size 33554432 --websocket-max-frame-size 33554432

.PHONY: run test install compiler browser lint clean

# The C fast path of link detection is compiled by the (editable) install: rebuild on change.
$(STAMP): pyproject.toml setup.py enrichment/pipeline/links/_linkscan.c enrichment/pipeline/links/_linkscan_scan.h | compiler
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Sets everything up (virtualenv, packages, database, demo login and data) and serves
# the dashboard with daphne on http://127.0.0.1:8000.
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py bootstrap_demo
	$(BIN)/daphne $(DAPHNE_LIMITS) -b 127.0.0.1 -p 8000 controlui.asgi:application

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

# Sets up and runs the whole test suite.
test: $(STAMP) browser
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file .ci/mypy-apps.ini enrichment controlui
	$(CC) -fsyntax-only -Wall -Wextra -Werror -I"$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" enrichment/pipeline/links/_linkscan.c

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache build enrichment/pipeline/links/*.so
