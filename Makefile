# Two commands: `make run` starts the app, `make test` checks everything.
# Both create .venv and install the pinned requirements on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-requirements
DEV_STAMP := $(VENV)/.installed-requirements-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8501

.PHONY: run test lint typecheck pytest chromium schemas bench bench-app bench-store screenshot clean

# make run installs what the app needs; make test adds the test tools.
$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP) requirements-dev.txt requirements-ray.txt
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt -r requirements-ray.txt
	@touch $(DEV_STAMP)

# Browser tests drive Debian's Chromium (no browser can be downloaded here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium; }

run: $(STAMP)
	$(BIN)/python -m streamlit run app.py --server.port $(PORT)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

pytest: $(DEV_STAMP) chromium
	$(BIN)/python -m pytest

test: lint typecheck pytest

schemas: $(DEV_STAMP)
	$(BIN)/python -m explorer.schema

bench: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_peers.py
	PYTHONPATH=. $(BIN)/python scripts/bench.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

screenshot: $(DEV_STAMP) chromium
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot.png "" 1680
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot-narrow.png "" 900
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot-tokens.png \
	  "?grammar=markdown&columns=fixed-char:64t,16;heading-aware:64t,16" 1680 --full \
	  --clip 370,820,1310,1080 --upload ../shared/corpora/markdown-docs/fastapi/docs/en/docs/tutorial/debugging.md

bench-app: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_app.py

bench-store: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_store.py
