"""A persistent, versioned, incremental index in SQLite (docs/contract.md §10).

One file (`.explorer/index.db` by default) holds every run, every document version and
the chunks of the *active* versions, with an FTS5 index and float32 vectors for search. It reads as
plan -> apply -> query:

- `schema`: the tables, opening a file (created once, even by two first runs at the same
  time; a foreign one refused untouched), transactions and SQLite's failures as codes;
- `plan`: what a run adds, updates, skips and deletes, decided purely (`Outcome`);
- `apply`: staging, verifying and switching each change, deleting with a receipt, and
  purging deleted text; `lock`: one run at a time;
- `embed`: the embedding stage between staging and verification, and the vector cache
  keyed by (embedder name, chunk text SHA-256);
- `queries`: search (BM25, vector, hybrid) and the typed rows of history and receipts;
  `wire`: the `--json` documents.

Every chunk row is scoped to a tenant (the document's `access_scope`), and search never
crosses tenants. This package does I/O by design; the chunks come from the pure core.
"""

from pathlib import Path

from ..sources.manifest import DEFAULT_SCOPE as DEFAULT_TENANT
from .apply import Checkpoint, Room, RunSummary, no_limit
from .handle import Store
from .plan import Outcome, Plan, plan_run
from .queries import (
    MAX_K,
    MAX_QUERY_TERMS,
    Failure,
    Hit,
    Receipt,
    RunRow,
    RunState,
    SearchMode,
    ServedDocument,
)

DEFAULT_DB = Path(".explorer") / "index.db"

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_TENANT",
    "MAX_K",
    "MAX_QUERY_TERMS",
    "Checkpoint",
    "Failure",
    "Hit",
    "Outcome",
    "Plan",
    "Receipt",
    "Room",
    "RunRow",
    "RunState",
    "RunSummary",
    "SearchMode",
    "ServedDocument",
    "Store",
    "no_limit",
    "plan_run",
]
