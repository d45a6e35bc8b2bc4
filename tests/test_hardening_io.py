"""Issue #23, the file side: imported chunks located in linear time, files counted
before they are parsed, the scratch folder, tenants that cannot see each other, and the
smaller refusals. Each test fails on the code before the fix (sizes chosen so the old
quadratic work takes tens of seconds, the new a fraction of one)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from explorer.chunking.imports import ChunkFile, place
from explorer.errors import ErrorCode, ExplorerError
from explorer.sources.documents import DocumentRecord, document_record


def _document(text: str, source_id: str = "d", path: str = "d.md") -> DocumentRecord:
    fields = {"source_id": source_id, "version": "1", "path": path, "sha256": "0" * 64}
    return document_record(fields, text)


def _file(chunks: list[dict[str, Any]], skip_failed: bool = False) -> ChunkFile:
    return ChunkFile("mine", json.dumps(chunks).encode(), skip_failed)


@contextmanager
def cpu_seconds_at_most(bound: float) -> Iterator[None]:
    began = time.process_time()
    yield
    spent = time.process_time() - began
    assert spent < bound, f"{spent:.2f} s of CPU, more than {bound} s"


def _refused(call: Callable[[], object], code: ErrorCode) -> ExplorerError:
    with pytest.raises(ExplorerError) as caught:
        call()
    assert caught.value.code is code, caught.value
    return caught.value


# Item 3: linear work


def test_locating_ignoring_whitespace_is_linear_in_the_document() -> None:
    # Before: a backtracking pattern, 40 s of CPU for this 200 KB document.
    text = "# T\n\n" + "a " * 100_000
    chunk = "a  " * 50_000 + "b"
    with cpu_seconds_at_most(2):
        _refused(
            lambda: place(_file([{"source_id": "d", "text": chunk}]), [_document(text)]),
            ErrorCode.CHUNK_NOT_FOUND,
        )
    found = "a  " * 50_000 + "a"
    with cpu_seconds_at_most(2):
        placement = place(_file([{"source_id": "d", "text": found}]), [_document(text)])
    assert placement.spans == {"d": [(5, 5 + 2 * 50_000 + 1)]}
    assert placement.notes == ("d: chunk 1 was located ignoring whitespace",)


def test_skip_failed_costs_one_pass_per_chunk_it_cannot_place() -> None:
    # Before: each failed chunk tried its pattern at every "a" (100 words each time).
    text = "# T\n\n" + "a " * 50_000
    failing = [{"source_id": "d", "text": "a " * 100 + "b"} for _ in range(300)]
    with cpu_seconds_at_most(3):
        placement = place(
            _file([{"source_id": "d", "text": "a a"}, *failing], True), [_document(text)]
        )
    assert placement.chunk_count == 1
    assert "skipped 300 chunks" in placement.notes[-1]


def test_matching_chunks_to_documents_by_path_does_not_scan_every_document() -> None:
    # Before: each chunk compared its path with every document's (chunks x documents).
    count = 3_000
    documents = [_document("# T\n\nhello\n", f"s{i}", f"docs/f{i}.md") for i in range(count)]
    chunks = [
        {"page_content": "hello", "metadata": {"source": f"/abs/docs/f{i}.md"}}
        for i in range(count)
    ] * 10
    chunks.sort(key=lambda chunk: chunk["metadata"]["source"])
    with cpu_seconds_at_most(3):
        placement = place(_file(chunks, skip_failed=True), documents)
    assert placement.chunk_count == count
    assert set(placement.spans) == {f"s{i}" for i in range(count)}


def test_a_path_names_its_own_document_first_then_the_first_it_ends_with() -> None:
    documents = [
        _document("# T\n\nhello\n", "short", "a.md"),
        _document("# T\n\nhello\n", "long", "x/a.md"),
        _document("# T\n\nhello\n", "exact", "/abs/x/a.md"),
    ]
    chunk = {"page_content": "hello", "metadata": {"source": "/abs/x/a.md"}}
    assert list(place(_file([chunk]), documents).spans) == ["exact"]
    chunk = {"page_content": "hello", "metadata": {"source": "/other/x/a.md"}}
    assert list(place(_file([chunk]), documents).spans) == ["short"]
    chunk = {"page_content": "hello", "metadata": {"source": "b/a.md.x"}}
    _refused(lambda: place(_file([chunk]), documents), ErrorCode.INVALID_CHUNK_FILE)


# Item 11: the chunk-file ones


def test_a_chunk_with_only_an_end_offset_is_refused() -> None:
    chunks = [{"source_id": "d", "text": "hello", "end": 10}]
    error = _refused(
        lambda: place(_file(chunks), [_document("# T\n\nhello\n")]), ErrorCode.INVALID_CHUNK_FILE
    )
    assert "chunk 1 gives an end offset without a start offset" in error.detail
    node = {"text": "hello", "end_char_idx": 10, "start_char_idx": None, "metadata": {}}
    _refused(
        lambda: place(_file([node]), [_document("# T\n\nhello\n")]), ErrorCode.INVALID_CHUNK_FILE
    )


def test_raw_crlf_offsets_are_decided_for_the_whole_document() -> None:
    text = "# T\n\nHello there.\n\n" + "x" * 60 + "\n"
    raw = text.replace("\n", "\r\n")
    hello = raw.index("Hello")
    run = raw.index("x") + 10  # inside the run: "x" * 10 also stands there unconverted
    chunks = [
        {"text": "Hello there.", "start_index": hello, "end_index": hello + 12},
        {"text": "x" * 10, "start_index": run, "end_index": run + 10},
    ]
    placement = place(_file(chunks), [_document(text)])
    newlines = raw[:run].count("\r\n")
    assert placement.spans == {
        "d": [(hello - 2, hello - 2 + 12), (run - newlines, run - newlines + 10)]
    }
    assert placement.notes == (
        "d: chunks 1 and 2 were given offsets of the text before CRLF normalization, "
        "converted to the normalized text's",
    )
