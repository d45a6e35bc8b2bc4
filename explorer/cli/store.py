"""The commands of the persistent index: `ingest`, `search`, `documents` and `history`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..jsonio import dump_json
from ..retrieval.embedding import DEFAULT_EMBEDDER, EMBEDDER_FAILURES
from ..store import DEFAULT_DB, Failure, Receipt, RunRow, SearchMode, Store
from ..store.wire import documents_output, history_output, ingest_output, search_output
from .files import _load
from .options import (
    EMBEDDER_HELP,
    Commands,
    _column_options,
    _embedder,
    _endpoint_options,
    _one_config,
    _positive,
    _print_usage,
    with_manifest,
)


def _existing_store(path: Path) -> Store:
    return Store(path, create=False)


def add_ingest(commands: Commands) -> None:
    ingest = with_manifest(
        commands, "ingest", "Ingest the manifest as a run into a persistent index."
    )
    ingest.add_argument("--db", type=Path, default=DEFAULT_DB, help=f"default: {DEFAULT_DB}")
    _column_options(ingest, repeatable=False, embedder=False)
    ingest.add_argument("--embedder", default=DEFAULT_EMBEDDER, help=EMBEDDER_HELP)
    _endpoint_options(ingest, embeds=True)
    ingest.add_argument("--json", action="store_true", help="print the run as one JSON document")


def _ingest(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    config = _one_config(args, default="heading-aware")
    manifest, load = _load(args, stderr)
    embedder = _embedder(args)  # refused before the index is touched
    with Store(args.db) as store:
        try:
            summary = store.ingest(
                manifest,
                load,
                config,
                embedder=embedder,
                on_wait=lambda message: print(message, file=stderr),
            )
        finally:
            _print_usage(stderr, embedder)
        statuses = store.document_statuses(summary.run_id)
    if args.json:
        stdout.write(dump_json(ingest_output(summary, statuses).model_dump(mode="json")))
        return 0
    print(summary.line(), file=stdout)
    print(summary.vectors_line(), file=stdout)
    for row in statuses:
        if row.status in EMBEDDER_FAILURES:  # load failures were warned about already
            print(f"warning: {row.status}: {row.tenant}/{row.source_id}: {row.detail}", file=stderr)
    return 0


def add_search(commands: Commands) -> None:
    find = commands.add_parser("search", help="Search one tenant's active chunks, with citations.")
    find.add_argument("query")
    find.add_argument("--tenant", required=True, help="the access_scope to search within")
    find.add_argument("--db", type=Path, default=DEFAULT_DB)
    find.add_argument("-k", type=_positive, default=5, help="how many hits (default 5)")
    find.add_argument(
        "--mode",
        choices=[mode.value for mode in SearchMode],
        default=SearchMode.HYBRID.value,
        help="bm25, vector, or hybrid (default: both, fused by reciprocal rank)",
    )
    find.add_argument("--embedder", default=DEFAULT_EMBEDDER, help=EMBEDDER_HELP)
    _endpoint_options(find, embeds=True)
    find.add_argument("--json", action="store_true", help="print the hits as one JSON document")


def _search(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    mode = SearchMode(args.mode)
    embedder = None if mode is SearchMode.BM25 else _embedder(args)
    with _existing_store(args.db) as store:
        try:
            hits = store.search(args.query, args.tenant, args.k, mode, embedder)
        finally:
            _print_usage(stderr, embedder)
    if args.json:
        name = embedder.name if embedder is not None else None
        found = search_output(args.query, args.tenant, mode, name, args.k, hits)
        stdout.write(dump_json(found.model_dump(mode="json")))
        return 0
    for hit in hits:
        cells = hit.cells()
        pages = f" {cells['Pages']}" if cells["Pages"] else ""
        print(
            f"{hit.source_id} v{hit.version} lines {cells['Lines']}{pages} {cells['Offsets']} "
            f"{cells['Chunk']} {cells['Score']} §{cells['Section']!r}  {cells['Snippet']}",
            file=stdout,
        )
    return 0


def add_documents(commands: Commands) -> None:
    served = commands.add_parser(
        "documents",
        help="What the index serves to one tenant: each document's active version.",
    )
    served.add_argument("--tenant", required=True, help="the access_scope to list")
    served.add_argument("--db", type=Path, default=DEFAULT_DB)
    served.add_argument("--json", action="store_true", help="print them as one JSON document")


def _documents(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    with _existing_store(args.db) as store:
        documents = store.documents(args.tenant)
    if args.json:
        stdout.write(dump_json(documents_output(args.tenant, documents).model_dump(mode="json")))
        return 0
    stdout.write(_table([document.cells() for document in documents], _DOCUMENT_WIDTHS))
    if not documents:
        print(f"the index serves no document to tenant {args.tenant!r}", file=stderr)
    return 0


_DOCUMENT_WIDTHS = {
    "Source": -24,
    "Version": -10,
    "Revision": -12,
    "Chunks": 7,
    "Embedder": -20,
    "Run": 4,
}


def _table(rows: list[dict[str, str]], widths: dict[str, int]) -> str:
    """Rows of cells as aligned columns under a header of their names (a negative width
    aligns left)."""

    def row(cells: dict[str, str]) -> str:
        return " ".join(
            cells[name].ljust(-width) if width < 0 else cells[name].rjust(width)
            for name, width in widths.items()
        ).rstrip()

    return "\n".join([row({name: name.lower() for name in widths}), *map(row, rows)]) + "\n"


def add_history(commands: Commands) -> None:
    runs = commands.add_parser("history", help="Runs before and after, and deletion receipts.")
    runs.add_argument("--db", type=Path, default=DEFAULT_DB)
    runs.add_argument("--json", action="store_true", help="print the history as one JSON document")


def _history(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    with _existing_store(args.db) as store:
        runs, failures, receipts = store.history(), store.failures(), store.receipts()
    if args.json:
        stdout.write(dump_json(history_output(runs, failures, receipts).model_dump(mode="json")))
        return 0
    stdout.write(_history_table(runs, failures, receipts))
    return 0


def _history_table(runs: list[RunRow], failures: list[Failure], receipts: list[Receipt]) -> str:
    """Before and after per run (the cells the app shows too), then every document a
    run did not write, then every receipt."""
    widths = {
        "Run": 4,
        "Started": -25,
        "Added": 6,
        "Updated": 8,
        "Unchanged": 10,
        "Failed": 7,
        "Deleted": 8,
        "Documents": 18,
        "Chunks": 18,
        "Vectors": 22,
    }

    lines = [_table([run.cells() for run in runs], widths)]
    lines += [failure.line() + "\n" for failure in failures]
    lines += [receipt.line() + "\n" for receipt in receipts]
    return "".join(lines)
