"""Other pipelines beside ours: chunk files uploaded beside the manifest, and live columns
of the chunking libraries (docs/contract.md §5c). Widgets only: `explorer.chunking.imports` and
`explorer.chunking.policies` place, build and check; the page shows them as further columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePosixPath

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explorer import (
    ChunkConfig,
    Column,
    DocumentRecord,
    ErrorCode,
    ExplorerError,
    Limits,
    ResolvedCheck,
    Settings,
)
from explorer.checking.checks import checks_key
from explorer.chunking.imports import MAX_NAME_CHARS, ChunkFile, place
from explorer.chunking.policies import LIBRARY_POLICIES, make_config, require_stoppable
from explorer.jsonio import json_or_text
from explorer.pipeline import ImportRunner, import_column
from explorer.view.display import markdown_literal
from ui.common import held, show_error

MAX_CHUNK_FILES = 4
SIZE_LIMIT = 100_000  # what a live column's size field offers; the command line takes more


def column_name(file_name: str, taken: Sequence[str]) -> str:
    """A chunk file's column name: its file name without the extension, shortened, and
    made unique among `taken`."""
    stem = "".join(c for c in PurePosixPath(file_name).stem if c.isprintable()).strip()
    name = stem[: MAX_NAME_CHARS - 4].strip() or "chunks"
    number = 2
    unique = name
    while unique in taken:
        unique, number = f"{name} ({number})", number + 1
    return unique


def chunk_file_uploads(sidebar: DeltaGenerator) -> tuple[ChunkFile, ...]:
    """Your pipeline's chunks, each file a column named after it."""
    uploads = sidebar.file_uploader(
        "Your pipeline's chunks (optional): JSON or JSON Lines",
        type=["json", "jsonl"],
        accept_multiple_files=True,
        key="chunk_files",
        help="LangChain Documents, LlamaIndex nodes, Chonkie chunks, or "
        "{source_id, text, start, end}: each file becomes a column, checked like ours.",
    )
    skip = sidebar.checkbox("Skip chunks that cannot be placed", key="chunk_files_skip")
    files: list[ChunkFile] = []
    for upload in (uploads or [])[:MAX_CHUNK_FILES]:
        name = column_name(upload.name, [f.name for f in files] + list(Settings.default().names))
        files.append(ChunkFile(name, upload.getvalue(), skip_failed=skip))
    if uploads and len(uploads) > MAX_CHUNK_FILES:
        sidebar.warning(f"Only the first {MAX_CHUNK_FILES} chunk files are shown.")
    return tuple(files)


@st.cache_data(show_spinner="Placing your chunks…", max_entries=8, ttl="10m")
def _refusal_cached(
    key: str,
    sha256: str,
    skip_failed: bool,
    _chunk_file: ChunkFile,
    _documents: Sequence[DocumentRecord],
) -> tuple[str, str] | None:
    """Why a chunk file cannot be placed in the documents of cache key `key` (its code
    and sentence), or None when it can."""
    try:
        place(_chunk_file, _documents)
    except ExplorerError as error:
        return error.code.value, error.detail
    return None


def placeable(
    key: str, files: Sequence[ChunkFile], documents: Sequence[DocumentRecord]
) -> tuple[ChunkFile, ...]:
    """The chunk files that can be placed in the documents. Each other one is named with
    its refusal and left out, so that one bad file (or one whose document was removed)
    never hides the page's other columns."""
    kept: list[ChunkFile] = []
    for chunk_file in files:
        refused = _refusal_cached(
            key, chunk_file.sha256, chunk_file.skip_failed, chunk_file, documents
        )
        if refused is None:
            kept.append(chunk_file)
            continue
        code, detail = refused
        st.error(
            f"**{code}**: your chunks {markdown_literal(repr(chunk_file.name))} are left out: "
            f"{markdown_literal(detail)}"
        )
    return tuple(kept)


@st.cache_data(show_spinner="Placing your chunks…", max_entries=4, ttl="10m")
def _import_cached(
    key: str,
    checks: str,
    name: str,
    sha256: str,
    skip_failed: bool,
    _chunk_file: ChunkFile,
    _documents: Sequence[DocumentRecord],
    _checks: Sequence[ResolvedCheck],
    _limits: Limits,
) -> Column:
    """One chunk file's column, keyed by the documents', the checks' and the file's digests."""
    return import_column(_chunk_file, _documents, _checks, _limits)


def cached_importer(key: str) -> ImportRunner:
    """`explore`'s `run_import` for the documents of cache key `key`."""

    def run(
        chunk_file: ChunkFile,
        documents: Sequence[DocumentRecord],
        checks: Sequence[ResolvedCheck],
        limits: Limits,
    ) -> Column:
        return _import_cached(
            key,
            checks_key(checks),
            chunk_file.name,
            chunk_file.sha256,
            chunk_file.skip_failed,
            chunk_file,
            documents,
            checks,
            limits,
        )

    return run


def _key(name: str, part: str) -> str:
    return f"live_{name}_{part}"


def seed_live_columns(settings: Settings) -> None:
    """A link's live columns, as the widgets' first values."""
    chosen = []
    for config in settings.configs:
        library = config.library
        if library is None or config.strategy in chosen:
            continue
        chosen.append(config.strategy)
        st.session_state[_key(config.strategy, "tokens")] = config.unit is not None
        if config.sized:  # a library may take no size (langchain-semantic)
            st.session_state[_key(config.strategy, "size")] = config.size()
        st.session_state[_key(config.strategy, "overlap")] = config.overlap or 0
        st.session_state[_key(config.strategy, "parameters")] = json.dumps(library.parameters)
        st.session_state[_key(config.strategy, "on")] = True


def live_columns(sidebar: DeltaGenerator) -> tuple[ChunkConfig, ...]:
    """The library columns chosen, each with its size, overlap and parameters."""
    sidebar.caption(
        "Chunking libraries: your splitter, with your parameters, beside heading-aware. "
        "The library itself is called; its name, version and every parameter are recorded."
    )
    chosen = [
        name
        for name in LIBRARY_POLICIES
        if sidebar.checkbox(name, held(_key(name, "on"), False), key=_key(name, "on"))
    ]
    configs: list[ChunkConfig] = []
    for name in chosen:
        policy = LIBRARY_POLICIES[name]
        parameters = json.dumps(policy.default_parameters())
        with sidebar.expander(name, expanded=False):
            sized = policy.default_max_chars is not None
            tokens = sized and st.toggle(
                "Size in cl100k_base tokens",
                held(_key(name, "tokens"), False),
                _key(name, "tokens"),
            )
            first = policy.default_max_chars or 1
            size = (
                st.number_input(
                    "Size", 1, SIZE_LIMIT, held(_key(name, "size"), first), key=_key(name, "size")
                )
                if sized
                else 0
            )
            overlap = (
                st.number_input(
                    "Overlap",
                    0,
                    SIZE_LIMIT,
                    held(_key(name, "overlap"), 0),
                    key=_key(name, "overlap"),
                )
                if policy.takes_overlap
                else 0
            )
            raw = st.text_area(
                "Parameters (JSON)",
                held(_key(name, "parameters"), parameters),
                key=_key(name, "parameters"),
                height=90,
                help="The library's other keywords. One that would make it run a regular "
                "expression (is_separator_regex: true) is refused here, as it could hold "
                "the server; the command line runs it under a time limit.",
            )
            try:
                configs.append(
                    _config(name, int(size or 1) if sized else 0, int(overlap or 0), tokens, raw)
                )
            except ExplorerError as error:
                show_error(error)
    return tuple(configs)


def _config(name: str, size: int, overlap: int, tokens: bool, raw: str) -> ChunkConfig:
    """A live column's config; `size` 0 for a library that takes none."""
    parameters = json_or_text(raw)
    if not isinstance(parameters, dict):
        raise ExplorerError(
            ErrorCode.USAGE, f"the parameters of {name} are a JSON object, not {raw[:40]!r}"
        )
    if not size:
        config = make_config(name, parameters=parameters)
    elif tokens:
        config = make_config(name, max_tokens=size, overlap=overlap, parameters=parameters)
    else:
        config = make_config(name, size, overlap=overlap, parameters=parameters)
    require_stoppable(config)  # a visitor's parameters: no regex in the server
    return config


def with_other_pipelines(
    ours: Sequence[ChunkConfig], live: Sequence[ChunkConfig], files: Sequence[ChunkFile]
) -> Settings:
    """Our policies' columns, then the live columns, then the chunk files."""
    return Settings((*ours, *live), tuple(files))


def show_import_notes(columns: Sequence[Column]) -> None:
    """What placing each chunk file had to say: chunks found loosely, converted, skipped."""
    for column in columns:
        for note in column.result.get("notes", []):
            st.info(f"{markdown_literal(column.name)}: {markdown_literal(note)}")
