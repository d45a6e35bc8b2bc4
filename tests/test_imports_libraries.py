"""Chunk files written by the libraries themselves import at the library's own offsets,
and the same files without offsets locate every chunk at the same place."""

from __future__ import annotations

import json
from typing import Any

import pytest
from chonkie import RecursiveChunker
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from explorer.chunking.imports import ChunkFile, place
from explorer.errors import ErrorCode, ExplorerError
from explorer.sources.loading import DirectoryReader, LoadResult, load_documents
from explorer.sources.manifest import parse_manifest

from .conftest import ROOT

CORPUS = ROOT / "fixtures" / "markdown-docs" / "manifest.json"
LIBRARY = ROOT / "fixtures" / "library" / "manifest.json"
LLAMAINDEX = ROOT / "fixtures" / "chunk-files" / "llamaindex-library.json"

Spans = dict[str, list[tuple[int, int]]]


def _load(manifest: Any) -> LoadResult:
    return load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(manifest.parent))


def _file(chunks: list[dict[str, Any]]) -> ChunkFile:
    return ChunkFile("theirs", "\n".join(map(json.dumps, chunks)).encode())


def _sorted(spans: Spans) -> Spans:
    return {source_id: sorted(found) for source_id, found in spans.items()}


def test_a_langchain_file_imports_at_its_offsets_and_locates_without_them() -> None:
    load = _load(CORPUS)
    documents = [
        Document(
            page_content=d["text"], metadata={"source": d["path"], "source_id": d["source_id"]}
        )
        for d in load.documents
    ]
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=400, chunk_overlap=60, add_start_index=True
    )
    chunks = [c.model_dump() for c in splitter.split_documents(documents)]
    assert all(c["metadata"]["start_index"] >= 0 for c in chunks)
    want: Spans = {}
    for c in chunks:
        start = c["metadata"]["start_index"]
        want.setdefault(c["metadata"]["source_id"], []).append(
            (start, start + len(c["page_content"]))
        )
    with_offsets = place(_file(chunks), load.documents)
    assert with_offsets.spans == _sorted(want)
    assert with_offsets.notes == ()
    for c in chunks:
        c["metadata"] = {"source": c["metadata"]["source"]}  # no start_index, no source_id
    assert place(_file(chunks), load.documents).spans == with_offsets.spans


def test_a_chonkie_file_imports_at_its_offsets_and_locates_without_them() -> None:
    load = _load(LIBRARY)
    chunker = RecursiveChunker(chunk_size=120)
    chunks: list[dict[str, Any]] = []
    want: Spans = {}
    for d in load.documents:
        for c in chunker.chunk(d["text"]):
            chunks.append({**c.to_dict(), "metadata": {"source_id": d["source_id"]}})
            want.setdefault(d["source_id"], []).append((c.start_index, c.end_index))
    with_offsets = place(_file(chunks), load.documents)
    assert with_offsets.spans == _sorted(want)
    plain = [{"source_id": c["metadata"]["source_id"], "text": c["text"]} for c in chunks]
    assert place(_file(plain), load.documents).spans == with_offsets.spans


def test_a_llamaindex_file_imports_at_its_offsets_and_locates_without_them() -> None:
    load = _load(LIBRARY)
    nodes = json.loads(LLAMAINDEX.read_text("utf-8"))
    by_path = {d["path"]: d["source_id"] for d in load.documents}
    want: Spans = {}
    for node in nodes:
        source_id = by_path[node["metadata"]["file_path"]]
        want.setdefault(source_id, []).append((node["start_char_idx"], node["end_char_idx"]))
    with_offsets = place(ChunkFile("llama", LLAMAINDEX.read_bytes()), load.documents)
    assert with_offsets.spans == _sorted(want)
    assert with_offsets.config.chunk_file is not None
    assert with_offsets.config.chunk_file.shape == "llamaindex"
    for node in nodes:
        node["start_char_idx"] = node["end_char_idx"] = None
    assert place(_file(nodes), load.documents).spans == with_offsets.spans


def test_a_tampered_library_file_is_refused_by_chunk_and_document() -> None:
    load = _load(LIBRARY)
    nodes = json.loads(LLAMAINDEX.read_text("utf-8"))
    nodes[2]["start_char_idx"] += 3
    with pytest.raises(ExplorerError) as caught:
        place(ChunkFile("llama", json.dumps(nodes).encode()), load.documents)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_FILE
    assert caught.value.detail.startswith("chunk 3 of ")
