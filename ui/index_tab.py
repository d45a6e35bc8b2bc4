"""The app's *Persistent index* tab: runs into the versioned index, history, search.

Widgets and layout only; the store (`explorer.store`) does the work.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import streamlit as st

from explorer import ExplorerError, LoadResult, Manifest, make_config
from explorer.store import DEFAULT_DB, Hit, Store, storage_errors

from .common import show_error

DB_VARIABLE = "EXPLORER_DB"  # where the persistent index lives (tests point it elsewhere)


def index_path() -> Path:
    return Path(os.environ.get(DB_VARIABLE, str(DEFAULT_DB)))


def index_page(manifest: Manifest, load: LoadResult, target: int) -> None:
    """Runs into the persistent index, its history, tenant-scoped search, and receipts."""
    db = index_path()
    st.markdown(
        f"A versioned index in `{db}`. Each run skips unchanged documents, swaps changed ones "
        "in whole, keeps serving a document that failed, and deletes what the manifest "
        "removes (`deleted`, or `complete: true`), with a receipt."
    )
    config = make_config("heading-aware", target)
    if st.button(f"Ingest these documents as a run (heading-aware, target {target})",
                 key="ingest", type="primary"):  # fmt: skip
        try:
            with storage_errors(db), Store(db) as store:
                st.success(store.ingest(manifest, load, config).line())
        except ExplorerError as error:
            show_error(error)
    if not db.is_file():
        st.info("No run yet: ingest the documents to start the index.")
        return
    try:
        with storage_errors(db), Store(db) as store:
            runs, receipts, tenants = store.history(), store.receipts(), store.tenants()
            st.subheader("Runs: before and after")
            st.table(run_rows(runs))
            st.subheader("Search the active versions")
            if tenants:
                left, middle, right = st.columns([2, 5, 1])
                tenant = left.selectbox("Tenant", tenants, key="tenant")
                query = middle.text_input("Query", key="query")
                k = right.number_input("Hits", 1, 50, 5, key="hits")
                if query:
                    hits = store.search(query, tenant, int(k))
                    if hits:
                        st.table([hit_row(hit) for hit in hits])
                    else:
                        st.info(f"No active chunk of tenant {tenant!r} matches.")
            st.subheader("Deletion receipts")
            if receipts:
                st.table(receipts)
            else:
                st.caption("No document has been deleted.")
    except ExplorerError as error:
        show_error(error)


def run_rows(runs: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [
        {
            "Run": str(run["run_id"]),
            "Started": run["started"],
            "Added": str(run["added"]),
            "Updated": str(run["updated"]),
            "Unchanged": str(run["unchanged"]),
            "Failed": str(run["failed"]),
            "Deleted": str(run["deleted"]),
            "Documents": f"{run['documents_before']} → {run['documents_after']}",
            "Chunks": f"{run['chunks_before']} → {run['chunks_after']}",
        }
        for run in runs
    ]


def hit_row(hit: Hit) -> dict[str, str]:
    return {
        "Source": hit.source_id,
        "Version": hit.version,
        "Lines": f"{hit.start_line}-{hit.end_line}",
        "Offsets": f"[{hit.start}, {hit.end})",
        "Chunk": hit.chunk_id[:12],
        "Snippet": " ".join(hit.snippet.split()),
    }
