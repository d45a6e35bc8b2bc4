"""The app's *Persistent index* tab: runs into the versioned index, history, search.

Which index, which tenants and whether deletions are allowed are the server's settings
(environment, or `.streamlit/secrets.toml`), never a visitor's widgets. By default each
browser session works on its own scratch index. Widgets and layout only; the store
(`explorer.store`) does the work.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import streamlit as st

from explorer import ChunkConfig, ErrorCode, ExplorerError, LoadResult, Manifest, Settings
from explorer.retrieval.embedding import DEFAULT_EMBEDDER, load_embedder
from explorer.store import SearchMode, Store, no_limit
from explorer.store.scratch import default_root, new_session, require_room
from explorer.view.display import count_words, markdown_literal, markdown_rows

from .common import show_error

INGEST_POLICY = "heading-aware"  # the policy a run chunks with
DB_VARIABLE = "EXPLORER_DB"  # a shared index on the server; unset: a scratch index per session
TENANTS_VARIABLE = "EXPLORER_TENANTS"  # comma-separated, or "*"; shared default: "default"
DELETIONS_VARIABLE = "EXPLORER_ALLOW_DELETIONS"  # "true"/"false"; shared default: false
SHARED_DEFAULT_TENANTS = frozenset({"default"})
SCRATCH_ROOT = default_root()
_TRUTH = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


@dataclass(frozen=True)
class IndexSettings:
    db: Path | None  # None: this session's own scratch index
    tenants: frozenset[str] | None  # None: every tenant
    allow_deletions: bool


def index_settings(values: Mapping[str, str]) -> IndexSettings:
    """The server's settings, from environment-like `values`; a bad value is refused."""
    db = values.get(DB_VARIABLE, "").strip()
    if not db:  # the session's own index: every tenant in it is the visitor's own
        return IndexSettings(None, None, True)
    listed = values.get(TENANTS_VARIABLE, "").strip()
    tenants: frozenset[str] | None = SHARED_DEFAULT_TENANTS
    if listed == "*":
        tenants = None
    elif listed:
        tenants = frozenset(t.strip() for t in listed.split(",") if t.strip())
    flag = values.get(DELETIONS_VARIABLE, "false").strip().lower()
    if flag not in _TRUTH:
        raise ExplorerError(
            ErrorCode.USAGE, f"{DELETIONS_VARIABLE} must be true or false, not {flag!r}"
        )
    return IndexSettings(Path(db), tenants, _TRUTH[flag])


def server_values() -> dict[str, str]:
    """The settings' variables from `.streamlit/secrets.toml`, then the environment."""
    names = (DB_VARIABLE, TENANTS_VARIABLE, DELETIONS_VARIABLE)
    values: dict[str, str] = {}
    with suppress(FileNotFoundError):  # no secrets file: the environment alone
        values.update({name: str(st.secrets[name]) for name in names if name in st.secrets})
    values.update({name: os.environ[name] for name in names if name in os.environ})
    return values


def scratch_index() -> Path:
    """This browser session's own index, in a scratch folder made at its first run (not
    at a page view), with room left for the run (`explorer.store.scratch`: stale
    folders swept, a size cap per session and in all)."""
    known = st.session_state.get("scratch_index")
    if known is None or not Path(known).parent.is_dir():  # new, or swept while idle
        st.session_state["scratch_index"] = str(new_session(SCRATCH_ROOT) / "index.db")
    db = Path(st.session_state["scratch_index"])
    require_room(SCRATCH_ROOT, db.parent)
    return db


def index_page(
    manifest: Manifest, load: LoadResult, explored: Settings, drafted: bool = False
) -> None:
    """Runs into the persistent index, its history, tenant-scoped search, and receipts.
    `drafted`: the manifest was built here for plain files, which cannot say `complete`
    themselves, so the page offers it."""
    try:
        settings = index_settings(server_values())
    except ExplorerError as error:
        show_error(error)
        return
    known = st.session_state.get("scratch_index")
    db = settings.db or (Path(known) if known is not None else None)
    where = "this session's own scratch index" if settings.db is None else "the server's index"
    st.markdown(
        f"A versioned index ({where}). Each run skips unchanged documents, swaps changed "
        "ones in whole (chunks embedded with WordLlama, from the package, offline; a text "
        "embedded before is reused), keeps serving a document that failed, and deletes what "
        "the manifest removes (`deleted`, or `complete: true`), with a receipt."
        + ("" if settings.allow_deletions else " Deletions are turned off on this server.")
    )
    preview: Callable[[Path | None], None] | None = None
    if drafted:
        manifest, preview = whole_set(manifest, settings.allow_deletions, settings.tenants)
    config = explored.config_for(INGEST_POLICY)  # at the size the views show
    if st.button(
        f"Ingest these documents as a run ({config.label()})", key="ingest", type="primary"
    ):
        try:
            embedder = load_embedder(DEFAULT_EMBEDDER)
            db = settings.db or scratch_index()
            # a scratch index stops at its cap before each document, not only before a run
            room = no_limit if settings.db else partial(require_room, SCRATCH_ROOT, db.parent)
            with Store(db) as store:
                summary = store.ingest(
                    manifest,
                    load,
                    config,
                    embedder=embedder,
                    on_wait=st.info,
                    tenants=settings.tenants,
                    allow_deletions=settings.allow_deletions,
                    room=room,
                )
            st.success(summary.line())
            st.caption(summary.vectors_line())
        except ExplorerError as error:
            show_error(error)
    if preview is not None:  # after the run: what a run would delete now
        preview(db)
    if db is None or not db.is_file():
        st.info("No run yet: ingest the documents to start the index.")
        return
    try:
        with Store(db, create=False) as store:
            deleting = (config, settings.tenants) if settings.allow_deletions else None
            show_index(store, settings.tenants, deleting)
    except ExplorerError as error:
        show_error(error)


def whole_set(
    manifest: Manifest, allow_deletions: bool, tenants: frozenset[str] | None
) -> tuple[Manifest, Callable[[Path | None], None] | None]:
    """Plain files dropped: a run adds and updates them, and deletes nothing unless the
    visitor says this upload is the whole set (`complete: true`); then what a run would
    delete, said in its place once the page's run (if any) is done, so a run that
    deleted leaves no warning of what it already did."""
    complete = st.checkbox(
        "This upload is the whole set: delete from the index every document it does not "
        "list (the manifest's `complete: true`)",
        key="whole_set",
        persist_state="session",
        disabled=not allow_deletions,
        help="Without it, a file dropped before and not now stays served."
        + ("" if allow_deletions else " Deletions are turned off on this server."),
    )
    if not complete or not allow_deletions:
        st.caption(
            "A run adds and updates these files; documents ingested before and not dropped "
            "now stay served."
        )
        return manifest, None
    whole = manifest.model_copy(update={"complete": True})
    place = st.empty()

    def preview(db: Path | None) -> None:
        doomed: list[tuple[str, str]] = []
        if db is not None and db.is_file():
            with Store(db) as store:
                doomed = store.would_delete(whole, tenants)
        if doomed:
            place.warning(
                f"The run will delete {count_words(len(doomed), 'document')}: "
                + ", ".join(markdown_literal(f"{source} ({tenant})") for tenant, source in doomed)
            )
        else:
            place.caption("The run will delete nothing: the index serves no other document.")

    return whole, preview


def delete_actions(store: Store, tenant: str, sources: list[str], deleting: Deleting) -> None:
    """A delete action per served document: the first click asks, the second deletes it
    in a run of its own, with its receipt below (as a manifest's `deleted` does)."""
    done = st.session_state.pop(DONE, None)
    if done is not None:
        st.success(done)
    asked = st.session_state.get(ASKED)
    with st.expander(
        f"Delete a document of tenant {markdown_literal(repr(tenant))} "
        f"({count_words(len(sources), 'document')})",
        expanded=asked is not None,
    ):
        for source in sources:
            name, action = st.columns([4, 1], vertical_alignment="center")
            name.markdown(markdown_literal(source))
            if asked == [tenant, source]:
                if action.button("Confirm: delete", key=f"delete_yes_{tenant}_{source}"):
                    st.session_state.pop(ASKED)
                    config, tenants = deleting
                    try:
                        summary = store.delete(
                            [(tenant, source)], config, tenants=tenants, on_wait=st.info
                        )
                    except ExplorerError as error:
                        show_error(error)
                        return
                    st.session_state[DONE] = summary.line()
                    st.rerun()
            elif action.button("Delete", key=f"delete_{tenant}_{source}", icon=":material/delete:"):
                st.session_state[ASKED] = [tenant, source]
                st.rerun()


def visible(tenants: frozenset[str] | None) -> Callable[[str], bool]:
    return lambda tenant: tenants is None or tenant in tenants


MODE_HELP = {
    SearchMode.HYBRID: "hybrid: BM25 and vectors fused by reciprocal rank",
    SearchMode.BM25: "bm25: the query's words (FTS5)",
    SearchMode.VECTOR: "vector: cosine to the query's WordLlama vector",
}


# What a delete action runs with: the run's recorded config, and the tenants it may touch.
Deleting = tuple[ChunkConfig, frozenset[str] | None]
ASKED = "delete_asked"  # [tenant, source_id] whose delete awaits its confirmation
DONE = "delete_done"  # what the last delete action did, said once


def show_index(store: Store, seen: frozenset[str] | None, deleting: Deleting | None) -> None:
    """History, served documents (each with a delete action where deletions are allowed),
    search and receipts; `seen`: the tenants the session may see (None: every tenant)."""
    may_see = visible(seen)
    st.subheader("Runs: before and after")
    st.caption(
        "Vectors: computed by the embedder in that run, and reused from the cache."
        + ("" if seen is None else " Only runs limited to the tenants you see are listed.")
    )
    st.table(markdown_rows([run.cells() for run in store.history(seen)]))
    failures = [f.cells() for f in store.failures() if may_see(f.tenant)]
    if failures:
        st.caption("Documents a run did not write (their previous version stayed served):")
        st.table(markdown_rows(failures))
    st.subheader("Served documents and search")
    tenants = [tenant for tenant in store.tenants() if may_see(tenant)]
    if tenants:
        left, middle, right = st.columns([2, 5, 1])
        tenant = left.selectbox("Tenant", tenants, key="tenant", persist_state="session")
        st.caption(
            f"What tenant {markdown_literal(repr(tenant))} is served: each document's active "
            "version, and the run that made it active (`explorer documents`)."
        )
        documents = store.documents(tenant)
        st.table(markdown_rows([document.cells() for document in documents]))
        if deleting is not None and documents:
            delete_actions(store, tenant, [d.source_id for d in documents], deleting)
        query = middle.text_input("Query", key="query", persist_state="session")
        k = right.number_input("Hits", 1, 50, 5, key="hits", persist_state="session")
        mode = (
            st.radio(
                "Search mode",
                list(SearchMode),
                format_func=MODE_HELP.__getitem__,
                horizontal=True,
                key="search_mode",
                persist_state="session",
            )
            or SearchMode.HYBRID
        )
        if query:
            embedder = None if mode is SearchMode.BM25 else load_embedder(DEFAULT_EMBEDDER)
            hits = store.search(query, tenant, int(k), mode, embedder)
            if hits:
                st.caption(
                    f"{mode.value}: each hit cites its source, version, lines, "
                    "[start, end) and section"
                )
                with st.container(key="search_hits"):
                    st.table(markdown_rows([hit.cells() for hit in hits]))
            else:
                st.info(f"No active chunk of tenant {markdown_literal(repr(tenant))} matches.")
    else:
        st.caption("No tenant of this index is open to this session.")
    st.subheader("Deletion receipts")
    receipts = [r.cells() for r in store.receipts() if may_see(r.tenant)]
    if receipts:
        st.table(markdown_rows(receipts))
    else:
        st.caption("No document has been deleted.")
