"""Chunk Boundary Explorer: the Streamlit face of `explorer/` (start it with `make run`).

The page gathers settings, calls the core, and shows what it returns. Every figure, id
and piece of HTML comes from `explorer`; nothing here computes a chunk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    POLICIES,
    DirectoryReader,
    DocumentRecord,
    ErrorCode,
    ExplorerError,
    Index,
    LoadResult,
    Manifest,
    MappingReader,
    ResolvedCheck,
    SpanCheck,
    load_documents,
    make_config,
    parse_config,
    parse_manifest,
    resolve_check,
    validate_index_bytes,
)
from explorer.chunk_map import build_chunk_map
from explorer.digests import canonical_json, sha
from explorer.display import file_name_part, markdown_literal, markdown_rows
from explorer.explore import Column, assemble_report, run_column
from explorer.explore import resolve_checks as resolve_manifest_checks
from explorer.jsonio import dump_json
from explorer.models import validated
from explorer.render import LEGEND, STYLE, containment_rows, highlights, render_view
from explorer.report import PolicyResult, SkippedCheck
from explorer.uploads import Bundle, bundle_from_uploads, bundle_zip, manifest_json, pasted_bundle
from ui.common import show_error
from ui.index_tab import index_page

FIXTURE_MANIFEST = Path(__file__).resolve().parent / "fixtures" / "aster" / "manifest.json"
SOURCES = ("Bundled example", "Upload a manifest", "Paste text")
LIMITS = {"fixed": (1, 1_000_000), "target": (20, 2000)}
LINK_ECHO = 40  # characters of a refused link value that its warning repeats
# What one person can type: a name or label, a quote, a pasted document (its bytes are
# limited again when it loads), and the checks added to one set of documents.
MAX_NAME_CHARS, MAX_QUOTE_CHARS, MAX_PASTE_CHARS = 200, 10_000, DEFAULT_MAX_DOCUMENT_BYTES
MAX_ADDED_CHECKS = 50
DEFAULTS = {"fixed": 80, "target": 220}
PASTE_EXAMPLE = """# Rotating an API key

## Rotate

Call rotate_key(id) to issue a new key for a service account.

Only rotate after the new key is deployed everywhere; the old key stops working at once.

## Revoke

Call revoke_key(id) to disable a key that leaked.
"""

Evaluated = tuple[PolicyResult, Index]


# -- cached core calls: keyed by content digests and configs -------------------------------
# Every cache is bounded in entries and in time, so what closed sessions left behind is
# freed; each entry is bounded by the upload limits, the core's chunk limits and
# `MAX_DRAWN_PIECES`. A few entries cover the sessions of one person moving a slider.
CACHE_TTL = "10m"


# Loaded documents are shared, not copied: `cache_data` would pickle up to 64 MiB of text
# and unpickle a copy on every rerun. A LoadResult is frozen and nothing changes it.
@st.cache_resource(show_spinner=False, max_entries=2, ttl=CACHE_TTL)
def load_cached(key: str, _load: Callable[[], LoadResult]) -> LoadResult:
    return _load()


@st.cache_data(show_spinner="Chunking…", max_entries=6, ttl=CACHE_TTL)
def evaluate_cached(
    key: str, checks_key: str, strategy: str, size: int | None, _load: LoadResult,
    _checks: Sequence[ResolvedCheck],
) -> Evaluated:  # fmt: skip
    """One policy's index and checks, validated before anything is offered for download."""
    column = run_column(strategy, _load.documents, _checks, make_config(strategy, size))
    return column.result, column.index


@st.cache_data(show_spinner="Drawing…", max_entries=6, ttl=CACHE_TTL)
def view_cached(
    index_id: str, checks_key: str, source_id: str, _text: str, _evaluated: Evaluated,
    _checks: Sequence[ResolvedCheck],
) -> str:  # fmt: skip
    result, index = _evaluated
    return render_view(_text, source_id, result, index, highlights(_checks, source_id))


# -- settings ---------------------------------------------------------------------------


def settings_from_link() -> None:
    """Once per session, seed the widgets from the URL so a shared link shows the same view."""
    if st.session_state.get("link_read"):
        return
    st.session_state["link_read"] = True
    notes = []
    for key, (low, high) in LIMITS.items():
        raw = st.query_params.get(key)
        if raw is None:
            continue
        value = link_number(raw, low, high)
        if value is not None:
            st.session_state[key] = value
        else:
            shown = raw if len(raw) <= LINK_ECHO else raw[:LINK_ECHO] + "…"
            notes.append(f"Ignored {key}={markdown_literal(repr(shown))} from the link: it "
                         f"must be a whole number from {low:,} to {high:,}.")  # fmt: skip
    if "doc" in st.query_params:
        st.session_state["doc"] = st.query_params["doc"]
    st.session_state["link_notes"] = notes


def link_number(raw: str, low: int, high: int) -> int | None:
    """A link's size, or None: ASCII digits only (`str.isdigit` takes '²'), and no
    longer than the bound itself (`int` refuses more than 4,300 digits)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > len(str(high)):
        return None
    value = int(raw)
    return value if low <= value <= high else None


def choose_source(
    sidebar: DeltaGenerator,
) -> tuple[str, Callable[[], LoadResult], Manifest] | None:
    """The documents to explore: (cache key, how to load them, the manifest)."""
    source = sidebar.radio("Documents", SOURCES, key="source")
    if source == SOURCES[0]:
        data = FIXTURE_MANIFEST.read_bytes()
        manifest = parse_manifest(data)
        reader = DirectoryReader(FIXTURE_MANIFEST.parent)
        sidebar.caption("The seed's synthetic Aster API contracts, two versions.")
        return sha(data.decode()), lambda: load_documents(manifest, reader), manifest
    if source == SOURCES[1]:
        uploads = sidebar.file_uploader(
            "manifest.json with its files, or one .zip holding them",
            accept_multiple_files=True,
            key="upload",
        )
        if not uploads:
            st.info("Upload a manifest and the files it lists (or one .zip) in the sidebar. "
                    "Every file is checked against its SHA-256 before it is read.")  # fmt: skip
            return None
        bundle = bundle_from_uploads(uploads)
    else:
        text = sidebar.text_area("Markdown, starting with a # heading", PASTE_EXAMPLE,
                                 height=260, max_chars=MAX_PASTE_CHARS, key="paste")  # fmt: skip
        bundle = pasted_bundle(text)
        sidebar.download_button("Download this manifest", manifest_json(bundle.manifest),
                                "manifest.json", "application/json", key="dl_paste_manifest",
                                on_click="ignore")  # fmt: skip
        sidebar.download_button("Download manifest and text (.zip)", bundle_zip(bundle),
                                "pasted.zip", "application/zip", key="dl_paste_zip",
                                on_click="ignore")  # fmt: skip
    return bundle.key, bundle_loader(bundle), bundle.manifest


def bundle_loader(bundle: Bundle) -> Callable[[], LoadResult]:
    return lambda: load_documents(bundle.manifest, MappingReader(bundle.files))


# -- span checks ----------------------------------------------------------------------------


def user_checks(key: str) -> list[dict[str, object]]:
    """The checks added to these documents; those of documents left behind are dropped."""
    checks: dict[str, list[dict[str, object]]] = st.session_state.get("user_checks", {})
    kept = checks.get(key, [])
    st.session_state["user_checks"] = {key: kept}
    return kept


def span_form(text: str, source_id: str, taken: set[str], added: list[dict[str, object]]) -> None:
    """Add a check by quoting the document, or by offsets; it is evaluated at once."""
    mode = st.radio("Mark each span by", ["Quote", "Offsets"], horizontal=True, key="check_mode")
    with st.form("add_check", border=True):
        name = st.text_input("Check name", "my-check", MAX_NAME_CHARS, key="check_id")
        spans: list[dict[str, object]] = []
        for side, label in (("a", "first"), ("b", "second")):
            columns = st.columns([1, 3] if mode == "Quote" else [1, 1, 1])
            span_label = columns[0].text_input(f"Span {side.upper()} label", label, MAX_NAME_CHARS,
                                               key=f"check_{side}_label")  # fmt: skip
            if mode == "Quote":
                quote = columns[1].text_input(f"Span {side.upper()} quote (exact text, once)",
                                              max_chars=MAX_QUOTE_CHARS,
                                              key=f"check_{side}_quote")  # fmt: skip
                if quote:
                    spans.append({"label": span_label, "quote": quote})
            else:
                start = columns[1].number_input(f"Span {side.upper()} start", min_value=0,
                                                value=None, key=f"check_{side}_start")  # fmt: skip
                end = columns[2].number_input(f"Span {side.upper()} end", min_value=0,
                                              value=None, key=f"check_{side}_end")  # fmt: skip
                if start is not None or end is not None:
                    spans.append({"label": span_label, "start": start, "end": end})
        if not st.form_submit_button("Add check"):
            return
    raw: dict[str, object] = {"id": name, "source_id": source_id, "spans": spans}
    try:
        if name in taken:
            raise ExplorerError(ErrorCode.INVALID_MANIFEST, f"a check named {name!r} exists")
        if not spans:
            raise ExplorerError(ErrorCode.INVALID_MANIFEST, "give at least one span")
        if len(added) >= MAX_ADDED_CHECKS:
            raise ExplorerError(ErrorCode.INVALID_MANIFEST, f"at most {MAX_ADDED_CHECKS} checks "
                                "can be added here: remove one first")  # fmt: skip
        check = validated(SpanCheck.model_validate, raw, ErrorCode.INVALID_MANIFEST)
        resolve_check(check, text)
    except ExplorerError as error:
        show_error(error)
    else:
        added.append(raw)
        st.rerun()


def show_checks(added: list[dict[str, object]], manifest_ids: Sequence[str]) -> None:
    if manifest_ids:
        st.markdown("From the manifest: " + ", ".join(markdown_literal(i) for i in manifest_ids))
    for position, raw in enumerate(added):
        left, right = st.columns([5, 1])
        left.markdown(f"Added here: {markdown_literal(str(raw['id']))} on "
                      f"{markdown_literal(str(raw['source_id']))}")  # fmt: skip
        if right.button("Remove", key=f"remove_check_{position}"):
            del added[position]
            st.rerun()


# -- the page --------------------------------------------------------------------------------


def documents_table(load: LoadResult) -> list[dict[str, str]]:
    return [
        {"Source": s.source_id, "Path": s.path, "Status": s.status, "Detail": s.detail}
        for s in load.statuses
    ]


def downloads(
    load: LoadResult,
    skipped: Sequence[SkippedCheck],
    evaluated: list[Evaluated],
    document: DocumentRecord,
) -> None:
    """Each policy's index and the document's chunk map, and the whole report."""
    columns = st.columns(len(evaluated) + 1)
    for column, (result, index) in zip(columns, evaluated, strict=False):
        size = result["config"]["max_chars"]
        column.download_button(
            f"{result['name']} chunk map", partial(chunk_map_json, document, result["config"]),
            f"chunk-map-{result['name']}-{file_name_part(document['source_id'])}.json",
            "application/json",
            key=f"dl_map_{result['name']}", on_click="ignore", icon=":material/download:",
            help="Where each chunk of the chosen document lies, without its text.",
        )  # fmt: skip
        column.download_button(
            f"{result['name']} index", partial(dump_json, index),
            f"index-{result['name']}-{size if size is not None else 'paragraphs'}.json",
            "application/json", key=f"dl_index_{result['name']}", on_click="ignore",
            icon=":material/download:",
        )  # fmt: skip
    columns[-1].download_button(
        "comparison report", partial(report_json, load, skipped, evaluated),
        "report.json", "application/json", key="dl_report", on_click="ignore",
        icon=":material/download:",
    )  # fmt: skip


def chunk_map_json(document: DocumentRecord, config: dict[str, str | int | None]) -> str:
    return dump_json(build_chunk_map(document, parse_config(config)))


def report_json(
    load: LoadResult, skipped: Sequence[SkippedCheck], evaluated: list[Evaluated]
) -> str:
    return dump_json(assemble_report(load, skipped, [Column(*item) for item in evaluated]))


def validate_upload() -> None:
    upload = st.file_uploader("Validate an index JSON", type=["json"], key="validate_upload")
    if upload is None:
        return
    try:
        index = validate_index_bytes(upload.getvalue())
    except ExplorerError as error:
        show_error(error)
        return
    config = index["config"]
    st.success(
        f"**valid** `{index['index_id']}` · {config['strategy']} "
        f"(max_chars {config['max_chars']}) · {len(index['documents'])} documents · "
        f"{len(index['chunks'])} chunks"
    )


def page() -> None:
    began = time.perf_counter()
    st.set_page_config(page_title="Chunk Boundary Explorer", page_icon="✂️", layout="wide")
    st.html(STYLE)
    st.title("Chunk Boundary Explorer")
    st.caption(
        "The same document cut by three chunking policies, side by side, and a check of "
        "whether spans that belong together (an instruction and its qualifier) stay in one "
        "chunk."
    )
    settings_from_link()
    for note in st.session_state.get("link_notes", []):
        st.warning(note)
    sources = st.sidebar.container()
    st.sidebar.divider()
    # The sizes are drawn on every run, before anything can stop it, so they keep their values.
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    fixed = st.sidebar.number_input("fixed-char size (characters)", *LIMITS["fixed"], step=10,
                                    key="fixed")  # fmt: skip
    target = st.sidebar.slider("heading-aware target (characters)", *LIMITS["target"],
                               key="target")  # fmt: skip
    try:
        chosen = choose_source(sources)
        if chosen is None:
            return
        key, loader, manifest = chosen
        load = load_cached(key, loader)
    except ExplorerError as error:
        show_error(error)
        return
    explore_tab, index_tab = st.tabs(["Explore boundaries", "Persistent index"])
    with explore_tab:
        explore(key, manifest, load, int(fixed), int(target))
    with index_tab:
        index_page(manifest, load, int(target))
    st.caption(f"Server time for this view: {time.perf_counter() - began:.3f} s")


def explore(key: str, manifest: Manifest, load: LoadResult, fixed: int, target: int) -> None:
    """The three views of one document, the containment table, checks and downloads."""
    manifest_checks = manifest.span_checks
    failed = load.failures
    if failed:
        st.warning(f"{len(failed)} of {len(load.statuses)} documents failed to load; they are "
                   "listed under Documents below, and the others can be explored.")  # fmt: skip
    if not load.documents:
        st.table(markdown_rows(documents_table(load)))
        return
    texts = {d["source_id"]: d["text"] for d in load.documents}
    if st.session_state.get("doc") not in texts:
        st.session_state["doc"] = next(iter(texts))
    doc = st.sidebar.selectbox("Document", list(texts), key="doc")
    st.query_params.from_dict({"doc": doc, "fixed": str(fixed), "target": str(target)})

    added = user_checks(key)
    try:
        from_manifest, skipped = resolve_manifest_checks(load, manifest_checks)
        added_checks = [resolve_check(SpanCheck.model_validate(raw), texts[str(raw["source_id"])])
                        for raw in added]  # fmt: skip
        resolved = [*from_manifest, *added_checks]
        checks_key = sha(canonical_json([[c.id, c.source_id, [[s.label, s.start, s.end]
                                          for s in c.spans]] for c in resolved]))  # fmt: skip
        sizes = {"fixed-char": fixed, "heading-aware": target}
        evaluated = [evaluate_cached(key, checks_key, name, sizes.get(name), load, resolved)
                     for name in POLICIES]  # fmt: skip
    except ExplorerError as error:
        show_error(error)
        return

    st.subheader("Do the spans stay together?")
    st.table(markdown_rows(containment_rows(evaluated)))
    st.html(LEGEND)
    for column, item in zip(st.columns(len(evaluated)), evaluated, strict=True):
        with column:
            st.html(view_cached(item[0]["index_id"], checks_key, doc, texts[doc], item, resolved))

    st.subheader("Span checks")
    show_checks(added, [c.id for c in manifest_checks])
    span_form(texts[doc], doc, {c.id for c in resolved}, added)
    st.subheader("Documents")
    st.table(markdown_rows(documents_table(load)))
    st.subheader("Download and validate")
    downloads(load, skipped, evaluated, next(d for d in load.documents if d["source_id"] == doc))
    validate_upload()


page()
