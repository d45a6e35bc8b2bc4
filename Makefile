# Two commands: `make run` starts the app, `make test` checks everything.
# Both create .venv and install the pinned requirements on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-requirements
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8501

.PHONY: run test lint typecheck pytest chromium schemas bench bench-app bench-store screenshot clean

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# Browser tests drive Debian's Chromium (no browser can be downloaded here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

run: $(STAMP)
	$(BIN)/python -m streamlit run app.py --server.port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) chromium
	$(BIN)/python -m pytest

test: lint typecheck pytest

schemas: $(STAMP)
	$(BIN)/python -m explorer.schema

bench: $(STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

screenshot: $(STAMP) chromium
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py

bench-app: $(STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_app.py

bench-store: $(STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_store.py
