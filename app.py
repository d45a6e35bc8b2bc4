"""Chunk Boundary Explorer: the Streamlit face of `explorer/` (start it with `make run`).

The page gathers settings, calls the core, and shows what it returns. Every figure, id
and piece of HTML comes from `explorer`; nothing here computes a chunk.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    ChunkConfig,
    Column,
    DirectoryReader,
    DocumentRecord,
    Exploration,
    ExplorerError,
    Index,
    Limits,
    LoadResult,
    Manifest,
    MappingReader,
    ResolvedCheck,
    Settings,
    SpanCheck,
    explore,
    load_documents,
    parse_manifest,
    validate_index_bytes,
)
from explorer.checking.checks import checks_key, new_check
from explorer.checking.chunk_map import build_chunk_map
from explorer.checking.flags import FLAG_WORDS, FLAGS, colour_flags, index_flags, only_flags
from explorer.chunking.config import DEFAULT_GRAMMAR
from explorer.digests import canonical_json, sha
from explorer.jsonio import dump_json
from explorer.limits import DEFAULT_CONVERTED_CHARS
from explorer.pipeline import BuiltColumn, ColumnRunner, build_column, checked_column
from explorer.sources.uploads import (
    MAX_TOTAL_BYTES,
    Bundle,
    bundle_from_uploads,
    bundle_zip,
    latest_uploads,
    manifest_json,
    pasted_bundle,
)
from explorer.view.display import (
    count_words,
    failed_documents_line,
    file_name_part,
    markdown_literal,
    plain_text,
    size_words,
)
from explorer.view.paging import PAGE_CHARS, pages
from explorer.view.render import LEGEND, STYLE, highlights, render_view
from ui.chunk_files import (
    cached_importer,
    chunk_file_uploads,
    live_columns,
    placeable,
    seed_live_columns,
    show_import_notes,
    with_other_pipelines,
)
from ui.columns import GRAMMAR, column_controls, seed_columns
from ui.common import QUOTE_HELP, TAB, TAB_KEPT, TABS, held, show_error
from ui.curve import curve_beside
from ui.detail import show_detail
from ui.diff import diff_section, pair_row, show_diff
from ui.documents import show_documents, show_drafted
from ui.endpoints import embedder_query, link_embedder
from ui.export import show_export
from ui.grammar import apply_pending_grammar, offer_markdown, open_plain_drop
from ui.index_tab import index_page
from ui.layout import LAYOUT
from ui.navigation import OPENED, SPAN_SET, early_navigator, navigator, turn_page
from ui.retrieval import retrieval_page
from ui.scoreboard import show_scoreboard
from ui.work import kept_work, manifest_download

FIXTURE_MANIFEST = Path(__file__).resolve().parent / "fixtures" / "aster" / "manifest.json"
SOURCES = ("Bundled example", "Upload files", "Paste text")
# How the documents load: once, for every column (each column asks if its grammar reads them).
Loader = Callable[[], LoadResult]
SIZE_RANGE = (1, 2000)  # what a size slider offers; the command line takes up to 1,000,000
# What one person can type: a name or label, a quote, a pasted document (its bytes are
# limited again when it loads), and the checks added to one set of documents.
MAX_NAME_CHARS, MAX_QUOTE_CHARS, MAX_PASTE_CHARS = 200, 10_000, DEFAULT_MAX_DOCUMENT_BYTES
PASTE_LABELS = {
    "v1": "Markdown text (under grammar v1, starting with a # heading)",
    "markdown": "Markdown text (CommonMark; a heading is not needed)",
}
PASTE_EXAMPLE = """# Rotating an API key

## Rotate

Call rotate_key(id) to issue a new key for a service account.

Only rotate after the new key is deployed everywhere; the old key stops working at once.

## Revoke

Call revoke_key(id) to disable a key that leaked.
"""


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


# A built column is shared too (no pickled copy of its index on every rerun): it is
# frozen, and nothing changes its index. Keyed without the span checks, which are run on
# it at each rerun (a check added never rebuilds a column).
@st.cache_resource(show_spinner="Chunking…", max_entries=10, ttl=CACHE_TTL)
def built_cached(
    key: str,
    name: str,
    config: str,
    _documents: Sequence[DocumentRecord],
    _config: ChunkConfig,
    _limits: Limits,
) -> BuiltColumn:
    """One column's index, keyed by the documents' and the config's digests."""
    return build_column(name, _documents, _config, _limits)


def cached_runner(key: str) -> ColumnRunner:
    def run(
        name: str,
        documents: Sequence[DocumentRecord],
        checks: Sequence[ResolvedCheck],
        config: ChunkConfig,
        limits: Limits,
    ) -> Column:
        digest = canonical_json(config.as_json())
        built = built_cached(key, name, digest, documents, config, limits)
        return checked_column(name, config, built, checks, limits)

    return run


@st.cache_resource(show_spinner="Flagging…", max_entries=12, ttl=CACHE_TTL)
def flags_cached(
    index_id: str, _exploration: Exploration, _column: Column
) -> list[tuple[str, ...]]:
    """Each chunk's quality flags; the index id names the documents and the config."""
    texts = {source_id: _exploration.text(source_id) for source_id in _exploration.source_ids}
    return index_flags(texts, _column.index["chunks"], _column.config)


@st.cache_data(show_spinner="Drawing…", max_entries=6, ttl=CACHE_TTL)
def view_cached(
    index_id: str,
    name: str,
    checks: str,
    source_id: str,
    shown: frozenset[str],
    colours: tuple[frozenset[str], bool],
    window: tuple[int, int] | None,
    _text: str,
    _column: Column,
    _checks: Sequence[ResolvedCheck],
    _flags: Sequence[tuple[str, ...]],
) -> str:
    marks = highlights(_checks, source_id)
    result, index = _column.result, _column.index
    aside = curve_beside(_column, source_id, _text, window)
    return render_view(_text, source_id, result, index, marks, _flags, shown, window, aside)


# -- settings ---------------------------------------------------------------------------


def settings_from_link() -> None:
    """Once per session, seed the widgets from the URL so a shared link shows the same view."""
    if st.session_state.get("link_read"):
        return
    st.session_state["link_read"] = True
    settings, notes = Settings.from_query(st.query_params.to_dict(), high=SIZE_RANGE[1])
    seed_columns(settings)
    seed_live_columns(settings)
    if "doc" in st.query_params:
        st.session_state["doc"] = st.session_state["link_doc"] = st.query_params["doc"]
    st.session_state["link_notes"] = [markdown_literal(note) for note in notes]
    st.session_state["link_notes"] += link_embedder(st.query_params.to_dict())


def choose_source(
    sidebar: DeltaGenerator,
) -> tuple[str, Loader, Manifest, Mapping[str, bytes], bool] | None:
    """The documents to explore: (cache key, how to load them, the manifest, the bytes
    that came for each path, whether the manifest was built here for plain files)."""
    chosen = held("source", SOURCES[0])
    source = sidebar.radio(
        "Documents", SOURCES, SOURCES.index(chosen) if chosen in SOURCES else 0, key="source"
    )
    if source == SOURCES[0]:
        data = FIXTURE_MANIFEST.read_bytes()
        manifest = parse_manifest(data)
        reader = DirectoryReader(FIXTURE_MANIFEST.parent)
        sidebar.caption("The seed's synthetic Aster API contracts, two versions.")
        return sha(data.decode()), _loader(manifest, reader), manifest, {}, False
    if source == SOURCES[1]:
        uploads = sidebar.file_uploader(
            "manifest.json with its files, one .zip, or plain .md / .txt / .pdf / .docx / "
            f".html files: each document up to {DEFAULT_MAX_DOCUMENT_BYTES // 2**20} MiB, "
            f"a .zip up to {MAX_TOTAL_BYTES // 2**20} MiB",
            accept_multiple_files=True,
            key="upload",
            max_upload_size=MAX_TOTAL_BYTES // 2**20,  # the .zip's limit, shown below
            help=f"Each document may hold up to {DEFAULT_MAX_DOCUMENT_BYTES // 2**20} MiB here, "
            f"and a PDF, Word or HTML file may convert to {DEFAULT_CONVERTED_CHARS:,} "
            "characters of text; a .zip of documents may hold "
            f"{MAX_TOTAL_BYTES // 2**20} MiB in all (the command line reads larger documents "
            "with --max-document-bytes and --max-converted-chars).",
        )
        if uploads:
            st.session_state["first_dropped"] = uploads[0].name
        else:
            st.info(
                "Drop .md / .txt / .pdf / .docx / .html files in the sidebar (a manifest is "
                "built for them; PDF, Word and HTML are converted to Markdown), or a "
                "manifest.json with the files it lists, or one .zip. Every file is checked "
                "against its SHA-256 before it is read."
            )
            return None
        uploads, doubled = latest_uploads(uploads)
        if doubled:
            st.warning(
                "Dropped more than once: "
                + ", ".join(markdown_literal(name) for name in doubled)
                + ". The last one dropped of each is used; remove the others from the list "
                "under the uploader (✕)."
            )
        bundle = bundle_from_uploads(uploads)
        if bundle.drafted:
            show_drafted(bundle)
            open_plain_drop(bundle)
    else:
        text = sidebar.text_area(
            PASTE_LABELS[st.session_state.get(GRAMMAR, DEFAULT_GRAMMAR)],
            PASTE_EXAMPLE,
            height=260,
            max_chars=MAX_PASTE_CHARS,
            key="paste",
        )
        bundle = pasted_bundle(text)
        sidebar.download_button(
            "Download this manifest",
            manifest_json(bundle.manifest),
            "manifest.json",
            "application/json",
            key="dl_paste_manifest",
            on_click="ignore",
        )
        sidebar.download_button(
            "Download manifest and text (.zip)",
            bundle_zip(bundle),
            "pasted.zip",
            "application/zip",
            key="dl_paste_zip",
            on_click="ignore",
        )
    return bundle.key, bundle_loader(bundle), bundle.manifest, bundle.files, bundle.drafted


def _loader(manifest: Manifest, reader: DirectoryReader | MappingReader) -> Loader:
    return lambda: load_documents(manifest, reader)


def bundle_loader(bundle: Bundle) -> Loader:
    return _loader(bundle.manifest, MappingReader(bundle.files))


# -- span checks ----------------------------------------------------------------------------


def span_form(text: str, source_id: str, taken: set[str], added: list[dict[str, object]]) -> None:
    """Add a check by quoting the document, or by offsets (text selected in a view fills
    them); it is evaluated at once."""
    just_added = st.session_state.pop("check_added", None)
    if just_added is not None:  # the next check starts empty (assigned: the browser empties it)
        clear_check_form(taken)
        st.success(
            f"Added the check {markdown_literal(just_added)}: its verdict in each column is "
            "in the matrix above."
        )
    mode = st.radio("Mark each span by", ["Quote", "Offsets"], horizontal=True, key="check_mode")
    with st.form("add_check", border=True):
        name = st.text_input("Check name", "my-check", MAX_NAME_CHARS, key="check_id")
        spans: list[dict[str, object]] = []
        for side, label in (("a", "first"), ("b", "second")):
            columns = st.columns([1, 3] if mode == "Quote" else [1, 1, 1])
            span_label = columns[0].text_input(
                f"Span {side.upper()} label", label, MAX_NAME_CHARS, key=f"check_{side}_label"
            )
            if mode == "Quote":
                quote = columns[1].text_area(
                    f"Span {side.upper()} quote (occurs once in the document)",
                    max_chars=MAX_QUOTE_CHARS,
                    key=f"check_{side}_quote",
                    height=68,
                    help=QUOTE_HELP,
                )
                if quote:
                    spans.append({"label": span_label, "quote": quote})
            else:  # empty at first; a selection in a view may have set them
                for part in ("start", "end"):
                    st.session_state.setdefault(f"check_{side}_{part}", None)
                start = columns[1].number_input(
                    f"Span {side.upper()} start", min_value=0, key=f"check_{side}_start"
                )
                end = columns[2].number_input(
                    f"Span {side.upper()} end", min_value=0, key=f"check_{side}_end"
                )
                if start is not None or end is not None:
                    spans.append({"label": span_label, "start": start, "end": end})
        if not st.form_submit_button("Add check"):
            return
    raw: dict[str, object] = {"id": name, "source_id": source_id, "spans": spans}
    try:
        new_check(raw, text, taken, len(added))
    except ExplorerError as error:
        show_error(error)
    else:
        added.append(raw)
        st.session_state["check_added"] = name
        st.rerun()


def clear_check_form(taken: set[str]) -> None:
    """The check form as it first opens, with a name no check has yet."""
    st.session_state["check_id"] = next(
        name for n in range(1, len(taken) + 2) if (name := f"my-check-{n}") not in taken
    )
    for side, label in (("a", "first"), ("b", "second")):
        st.session_state[f"check_{side}_label"] = label
        st.session_state[f"check_{side}_quote"] = ""
        st.session_state[f"check_{side}_start"] = st.session_state[f"check_{side}_end"] = None


def show_checks(added: list[dict[str, object]], manifest_ids: Sequence[str]) -> None:
    if manifest_ids:
        st.markdown("From the manifest: " + ", ".join(markdown_literal(i) for i in manifest_ids))
    for position, raw in enumerate(added):
        left, right = st.columns([5, 1])
        left.markdown(
            f"Added here: {markdown_literal(str(raw['id']))} on "
            f"{markdown_literal(str(raw['source_id']))}"
        )
        if right.button("Remove", key=f"remove_check_{position}"):
            del added[position]
            st.rerun()


# -- the page --------------------------------------------------------------------------------


def downloads(exploration: Exploration, document: DocumentRecord) -> None:
    """Each column's index and the document's chunk map, and the whole report."""
    places = st.columns(len(exploration.columns) + 1)
    for place, column in zip(places, exploration.columns, strict=False):
        name = file_name_part(column.name)
        if column.config.chunk_file is None:  # an imported column's chunks are in its index
            place.download_button(
                f"{column.name} chunk map",
                partial(chunk_map_json, document, column.config),
                f"chunk-map-{name}-{file_name_part(document['source_id'])}.json",
                "application/json",
                key=f"dl_map_{column.name}",
                on_click="ignore",
                icon=":material/download:",
                help="Where each chunk of the chosen document lies, without its text.",
            )
        place.download_button(
            f"{column.name} index",
            partial(dump_json, column.index),
            f"index-{name}.json",
            "application/json",
            key=f"dl_index_{column.name}",
            on_click="ignore",
            icon=":material/download:",
        )
    places[-1].download_button(
        "comparison report",
        partial(report_json, exploration),
        "report.json",
        "application/json",
        key="dl_report",
        on_click="ignore",
        icon=":material/download:",
    )


def chunk_map_json(document: DocumentRecord, config: ChunkConfig) -> str:
    return dump_json(build_chunk_map(document, config))


def report_json(exploration: Exploration) -> str:
    return dump_json(exploration.report)


def validate_upload(load: LoadResult) -> None:
    upload = st.file_uploader("Validate an index JSON", type=["json"], key="validate_upload")
    if upload is None:
        return
    try:
        index = validate_index_bytes(upload.getvalue())
    except ExplorerError as error:
        show_error(error)
        return
    st.success(validation_words(index, load))


def validation_words(index: Index, load: LoadResult) -> str:
    """What a valid index is, and what it was checked against: the text it carries (its
    chunks are what its config rebuilds from it), and whether that text is the text of
    the documents loaded here."""
    documents = index["documents"]
    here = {d["source_id"]: d["normalized_text_sha256"] for d in load.documents}
    same = sum(1 for d in documents if here.get(d["source_id"]) == d["normalized_text_sha256"])
    chunks = len(index["chunks"])
    what = (
        f"**valid** `{index['index_id']}` · {index['config']['strategy']} "
        f"({size_words(index['config'])}) · {count_words(len(documents), 'document')} · "
        f"{count_words(chunks, 'chunk')}. Checked against itself: every chunk is what its "
        "config rebuilds from the text the index carries"
    )
    if same == len(documents):
        return what + ", which is the text of the documents loaded here."
    if same == 0:
        return what + ". None of its documents is loaded here, so it says nothing about them."
    return (
        what + f"; {same:,} of its {len(documents):,} documents are loaded here with the "
        "same text, the others are not."
    )


def page() -> None:
    began = time.perf_counter()
    st.set_page_config(page_title="Chunk Boundary Explorer", page_icon="✂️", layout="wide")
    st.html(STYLE + LAYOUT)
    early_navigator()  # first, so that it listens before the views are drawn
    st.title("Chunk Boundary Explorer")
    st.caption(
        "The same document cut by several chunking policies, side by side, and a check of "
        "whether spans that belong together (an instruction and its qualifier) stay in one "
        "chunk."
    )
    settings_from_link()
    apply_pending_grammar()
    for note in st.session_state.get("link_notes", []):
        st.warning(note)
    sources = st.sidebar.container()
    st.sidebar.divider()
    # The columns are drawn on every run, before anything can stop it, so they keep their values.
    ours = column_controls(st.sidebar, SIZE_RANGE[1])
    live = live_columns(st.sidebar)
    try:
        chosen = choose_source(sources)
        if chosen is None:
            return
        key, loader, manifest, files, drafted = chosen
        uploads = chunk_file_uploads(sources)
        load = load_cached(key, loader)
        settings = with_other_pipelines(ours, live, placeable(key, uploads, load.documents))
    except ExplorerError as error:
        show_error(error)
        return
    # The Explore tab is drawn in every run; the other two only while open (a switch of
    # tab reruns the page), so a step on the Explore tab ranks no question and opens no
    # index: it costs the same with or without questions.
    if TAB not in st.session_state:
        st.session_state[TAB] = st.session_state.get(TAB_KEPT, TABS[0])
    explore_tab, index_tab, retrieval_tab = st.tabs(list(TABS), key=TAB, on_change="rerun")
    st.session_state[TAB_KEPT] = st.session_state[TAB]
    with explore_tab:
        explore_page(key, manifest, load, files, settings, drafted)
    if index_tab.open:
        with index_tab:
            index_page(manifest, load, settings, drafted)
    if retrieval_tab.open:
        with retrieval_tab:
            retrieval_page(key, manifest, load, settings, cached_runner(key))
    st.caption(f"Server time for this view: {time.perf_counter() - began:.3f} s")


def page_picker(bounds: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """A long document is drawn a page at a time (whole sections, `PAGE_CHARS` at most;
    `bounds` are its `pages`), the same page in every view; None when it fits on one."""
    if len(bounds) == 1:
        st.caption(f"The whole document fits on one page ({bounds[-1][1]:,} characters).")
        return None
    if not 1 <= st.session_state.get("page", 1) <= len(bounds):
        st.session_state["page"] = 1
    number = st.number_input(
        f"Page (1 to {len(bounds):,}), the same in every view",
        min_value=1,
        max_value=len(bounds),
        step=1,
        key="page",
        help=f"The document has {bounds[-1][1]:,} characters; a page holds whole sections, "
        f"{PAGE_CHARS:,} characters at most. Arrow keys step through the pages.",
    )
    return bounds[int(number) - 1]


def explore_page(
    key: str,
    manifest: Manifest,
    load: LoadResult,
    files: Mapping[str, bytes],
    settings: Settings,
    drafted: bool = False,
) -> None:
    """The document and the views of it first, then the chunk detail, the scoreboard,
    checks and downloads. `drafted`: the manifest was built here for the files."""
    failed = load.failures
    if failed:
        st.warning(failed_documents_line(len(failed), len(load.statuses)))
    offer_markdown(load)
    if not load.documents:
        show_documents(load, files, drafted=drafted)
        return
    source_ids = [d["source_id"] for d in load.documents]
    first_document(key, manifest, source_ids)
    linked = st.session_state.pop("link_doc", None)
    if linked is not None and linked not in source_ids:
        st.warning(
            f"The link names the document {markdown_literal(repr(linked[:80]))}, which is not "
            f"among these documents: showing {markdown_literal(repr(source_ids[0]))}. A link "
            "keeps the settings, not uploaded or pasted text: upload or paste it again."
        )
    doc_place, page_place = st.columns([3, 2], vertical_alignment="bottom")
    doc = doc_place.selectbox(
        f"Document ({count_words(len(source_ids), 'document')} loaded)",
        source_ids,
        source_ids.index(st.session_state["doc"]),
        key="doc",
        format_func=plain_text,
    )
    wanted = {"doc": doc, **settings.to_query(), **embedder_query()}
    if st.query_params.to_dict() != wanted:  # rewrite the link only when it changes
        st.query_params.from_dict(wanted)

    added = kept_work(key, manifest).checks
    try:
        checks = [*manifest.span_checks, *(SpanCheck.model_validate(raw) for raw in added)]
        exploration = explore(
            load, checks, settings, run=cached_runner(key), run_import=cached_importer(key)
        )
    except ExplorerError as error:
        show_error(error)
        return

    columns = exploration.columns
    flagged = {c.name: flags_cached(c.result["index_id"], exploration, c) for c in columns}
    show_import_notes(columns)
    shown_names = views_shown([c.name for c in columns])
    colours, shown = flag_choices()
    coloured = {
        c.name: only_flags(flagged[c.name], colour_flags(c.config, *colours)) for c in columns
    }
    st.html(LEGEND)
    text, marks_key = exploration.text(doc), checks_key(exploration.checks)
    bounds = pages(text)
    pair, pair_diff = diff_section(exploration, manifest)
    differences = {pair.name: pair.marks(exploration, doc).differences} if pair else {}
    turn_page(doc, len(text), bounds, columns, coloured, shown, differences)
    with page_place:
        window = page_picker(bounds)
    drawn = [column for column in columns if column.name in shown_names]
    if not drawn:
        st.info("Every view is hidden: choose the views to show above.")
    for place, column in zip(st.columns(max(len(drawn), 1)), drawn, strict=False):
        with place:
            st.html(
                view_cached(
                    column.result["index_id"],
                    column.name,
                    marks_key,
                    doc,
                    shown,
                    colours,
                    window,
                    text,
                    column,
                    exploration.checks,
                    coloured[column.name],
                )
            )
    show_diff(exploration, doc, pair, pair_diff, window)
    detail_part(exploration, doc, flagged, bounds)
    show_scoreboard(exploration, [pair_row(pair, pair_diff)] if pair and pair_diff else [])
    st.subheader("Span checks")
    show_checks(added, [c.id for c in manifest.span_checks])
    span_form(text, doc, {c.id for c in exploration.checks}, added)
    manifest_download(manifest, added)
    st.subheader("Documents")
    show_documents(load, files, exploration.skipped, drafted)
    st.subheader("Download and validate")
    downloads(exploration, exploration.document(doc))
    show_export(exploration)
    validate_upload(load)


@st.fragment
def detail_part(
    exploration: Exploration,
    doc: str,
    flagged: Mapping[str, Sequence[tuple[str, ...]]],
    bounds: Sequence[tuple[int, int]],
) -> None:
    """The views' script and the chunk detail: a click on a chunk, or a pick in the
    detail, reruns only this part. A jump or a selected span changes the views or the
    check form, so it reruns the page."""
    began = time.perf_counter()
    if "nav_request" in st.session_state or st.session_state.pop(SPAN_SET, False):
        st.rerun(scope="app")
    navigator()
    opened = st.session_state.pop(OPENED, None)
    if opened is not None:
        st.toast(opened)
    st.subheader("Chunk detail")
    show_detail(exploration, doc, flagged, bounds)
    st.caption(f"Server time for this part: {time.perf_counter() - began:.3f} s")


def first_document(key: str, manifest: Manifest, source_ids: Sequence[str]) -> None:
    """New documents open on the first one dropped (a manifest's first, otherwise); the
    same documents keep the one chosen, and a link's document is kept."""
    if st.session_state.get("doc_key") != key:
        st.session_state["doc_key"] = key
        if "link_doc" not in st.session_state or st.session_state.get("doc") not in source_ids:
            dropped = st.session_state.get("first_dropped")
            paths = {d["path"]: d["source_id"] for d in manifest.documents}
            first = paths.get(dropped) if isinstance(dropped, str) else None
            st.session_state["doc"] = first if first in source_ids else source_ids[0]
    if st.session_state.get("doc") not in source_ids:
        st.session_state["doc"] = source_ids[0]


def views_shown(names: Sequence[str]) -> list[str]:
    """The views to draw: every column but those the user hid (a new or renamed column
    shows). The scoreboard, the matrix and the detail keep every column."""
    hidden = set(st.session_state.get("views_hidden", ()))
    st.session_state["views_shown"] = [name for name in names if name not in hidden]
    return st.multiselect(
        "Views shown (hide some to give the others room; the scoreboard keeps every column)",
        list(names),
        key="views_shown",
        format_func=plain_text,
        on_change=_hide_views,
        args=(list(names),),
    )


def _hide_views(names: list[str]) -> None:
    """The multiselect's callback: the views left out are hidden until shown again."""
    shown = set(st.session_state["views_shown"])
    st.session_state["views_hidden"] = [name for name in names if name not in shown]


def flag_choices() -> tuple[tuple[frozenset[str], bool], frozenset[str]]:
    """Which flags colour the badges (and whether what a policy does by design is left
    out), and the flags the filter dims the other chunks by."""
    left, middle, right = st.columns([4, 2, 3], vertical_alignment="bottom")
    chosen = left.multiselect(
        "Flags that colour the badges",
        FLAGS,
        default=list(FLAGS),
        format_func=FLAG_WORDS.__getitem__,
        key="flag_colours",
        help="The scoreboard counts every flag, each in its own column.",
    )
    by_design = middle.toggle(
        "Not what a policy does by design",
        value=True,
        key="flag_by_design",
        help="A fixed-char window cuts wherever its size ends: its cuts mid-sentence and "
        "inside code blocks are left out of its badges. Under grammar v1, heading-aware "
        "keeps a paragraph longer than the size whole: that is left out of its badges.",
    )
    shown = right.multiselect(
        "Highlight chunks flagged",
        FLAGS,
        format_func=FLAG_WORDS.__getitem__,
        key="flag_filter",
        placeholder="any flag: choose to dim the other chunks",
    )
    return (frozenset(chosen), by_design), frozenset(shown)


page()
