# Two commands: `make run` starts the app, `make test` checks everything.
# Both create .venv and install the pinned requirements on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-requirements
DEV_STAMP := $(VENV)/.installed-requirements-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PORT ?= 8501

.PHONY: run test lint typecheck pytest chromium schemas docs docs-build bench bench-app bench-store screenshot clean

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

test: lint typecheck pytest docs-build

# The documentation: docs/cli.md written from the argument parser, then the site built into
# site/; --strict fails on a broken link or anchor (tests/test_docs.py fails on a stale cli.md).
docs: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/cli_docs.py
	$(MAKE) docs-build

docs-build: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

schemas: $(DEV_STAMP)
	$(BIN)/python -m explorer.schema

# Ray is timed against a running cluster (docs/performance.md#ray), started beforehand:
#   RAY_AUTH_MODE=disabled .venv/bin/ray start --head --port 6379 --num-cpus 2
# and skipped with a note when none answers at RAY_BENCH_ADDRESS.
RAY_BENCH_ADDRESS ?= 127.0.0.1:6379
RAY_BENCH_CORPUS ?= /tmp/explorer-bench-c104
bench: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_peers.py
	PYTHONPATH=. $(BIN)/python scripts/bench.py
	PYTHONPATH=. $(BIN)/python scripts/bench_convert.py
	PYTHONPATH=. $(BIN)/python scripts/bench_decide.py --app
	test -f $(RAY_BENCH_CORPUS)/manifest.json || \
	  $(BIN)/python scripts/make_corpus.py $(RAY_BENCH_CORPUS) --size-gb 0.0969
	RAY_AUTH_MODE=disabled PYTHONPATH=. $(BIN)/python scripts/bench_ray.py \
	  $(RAY_BENCH_CORPUS)/manifest.json --path fast --runs 3 --address $(RAY_BENCH_ADDRESS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis site

# The screenshots of the README and docs/: five columns on 1 MiB of the Rust book (real Markdown).
FIVE_COLUMNS := ?columns=fixed-char:500;paragraph;heading-aware:220;heading-aware:1000&semchunk=300
MEBIBYTE := $(VENV)/one-mebibyte.md

screenshot: $(DEV_STAMP) chromium
	PYTHONPATH=. $(BIN)/python -c "from scripts.bench_app import one_mebibyte_document as d; \
	  open('$(MEBIBYTE)', 'w', encoding='utf-8').write(d())"
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot.png "$(FIVE_COLUMNS)" 1680 \
	  --upload $(MEBIBYTE)
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot-narrow.png "$(FIVE_COLUMNS)" \
	  900 --upload $(MEBIBYTE)
	PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot-tokens.png \
	  "?grammar=markdown&columns=fixed-char:64t,16;heading-aware:64t,16" 1680 --full \
	  --clip 370,820,1310,1080 --upload ../shared/corpora/markdown-docs/fastapi/docs/en/docs/tutorial/debugging.md
	@dir=$$(mktemp -d) && PYTHONPATH=. $(BIN)/python scripts/make_documents.py $$dir && \
	  PYTHONPATH=. $(BIN)/python scripts/screenshot.py docs/screenshot-pdf.png "?grammar=markdown" \
	  1680 --full --clip 370,900,1250,1120 --upload $$dir/guide.pdf; status=$$?; rm -rf $$dir; exit $$status

bench-app: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_app.py

bench-store: $(DEV_STAMP)
	PYTHONPATH=. $(BIN)/python scripts/bench_store.py
