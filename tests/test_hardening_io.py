"""Issue #23, the file side: imported chunks located in linear time, files counted
before they are parsed, the scratch folder, tenants that cannot see each other, and the
smaller refusals. Each test fails on the code before the fix (sizes chosen so the old
quadratic work takes tens of seconds, the new a fraction of one)."""

from __future__ import annotations

import io
import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer.checking.validate import validate_index_bytes, validate_index_file
from explorer.chunking.imports import ChunkFile, place
from explorer.errors import ErrorCode, ExplorerError
from explorer.jsonio import Counts, count_json
from explorer.retrieval.questions import MAX_QUESTIONS, parse_questions
from explorer.sources.documents import DocumentRecord, document_record
from explorer.sources.manifest import parse_manifest

from .conftest import ManifestBuilder, run_cli


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
        for _ in range(10)
    ]
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


# Item 7: counted before parsed


def _json_values(value: object) -> tuple[int, int]:
    """Keys and values, and empty lists and objects, of a parsed value."""
    if isinstance(value, dict):
        inside = [_json_values(v) for v in value.values()]
        return 1 + len(value) + sum(v for v, _ in inside), (not value) + sum(e for _, e in inside)
    if isinstance(value, list):
        inside = [_json_values(v) for v in value]
        return 1 + sum(v for v, _ in inside), (not value) + sum(e for _, e in inside)
    return 1, 0


def _length(value: object) -> int:
    return max(len(value), 1) if isinstance(value, (list, dict)) else 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab\\"[]{},: \n'),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet='k\\"[{,:'), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(json_values, st.booleans())
def test_json_is_counted_exactly_without_parsing(value: object, spaced: bool) -> None:
    data = json.dumps(value, indent=1 if spaced else None).encode()
    values, empty = _json_values(value)
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    assert count_json(data) == Counts(values + empty, _length(value), sum(map(_length, inner)))


@contextmanager
def memory_at_most(bound: int) -> Iterator[None]:
    """At most `bound` bytes, and the blocks of 1 MiB the counting works in, at the peak."""
    bound += 8 * 2**20
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < bound, f"{peak:,} bytes at the peak, more than {bound:,}"


def test_a_chunk_file_of_too_many_chunks_is_refused_before_it_is_parsed() -> None:
    data = b"[" + b'{"source_id":"d","text":"x"},' * 300_000 + b'{"source_id":"d","text":"x"}]'
    with memory_at_most(4 * len(data)):  # parsed, 300,000 chunks took 25 times the file
        error = _refused(lambda: place(ChunkFile("f", data), []), ErrorCode.TOO_MANY_CHUNKS)
    assert error.detail.startswith("the chunk file gives more than 200,000 chunks, the limit")
    lines = b'{"source_id":"d","text":"x"}\n' * 200_001
    with memory_at_most(4 * len(lines)):
        _refused(lambda: place(ChunkFile("f", lines), []), ErrorCode.TOO_MANY_CHUNKS)


def test_a_chunk_file_of_too_many_values_is_refused_before_it_is_parsed() -> None:
    data = b'[{"source_id":"d","text":"x","metadata":{"a":[' + b"[]," * 13_000_000 + b"[]]}}]"
    with memory_at_most(4 * len(data)):
        error = _refused(lambda: place(ChunkFile("f", data), []), ErrorCode.INVALID_CHUNK_FILE)
    assert "holds more than 12,800,000 JSON values, 64 for each of the 200,000 items" in str(error)


def test_an_index_is_counted_before_validate_parses_it() -> None:
    data = b"[" + b"[]," * 3_000_000 + b"[]]"
    with memory_at_most(4 * len(data)):  # parsed: 20 times the file
        _refused(lambda: validate_index_bytes(data), ErrorCode.TOO_MANY_CHUNKS)


def test_questions_and_manifests_are_counted_before_they_are_parsed() -> None:
    question = b'{"id":"q","question":"why","source_id":"d","references":[{"quote":"x"}]},'
    data = b'{"questions":[' + question * (5 * MAX_QUESTIONS) + question[:-1] + b"]}"
    with memory_at_most(4 * len(data)):
        error = _refused(lambda: parse_questions(data), ErrorCode.INVALID_QUESTIONS)
    assert "more than 10,000 questions" in error.detail
    entry = b'{"source_id":"d","version":"1","path":"d.md","sha256":"' + b"0" * 64 + b'"},'
    data = b'{"manifest_version":1,"documents":[' + entry * 210_001 + entry[:-1] + b"]}"
    with memory_at_most(4 * len(data)):
        error = _refused(lambda: parse_manifest(data), ErrorCode.INVALID_MANIFEST)
    assert "more than 210,000 entries" in error.detail


def test_a_library_column_that_cannot_fit_the_limit_is_refused_before_it_runs(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest({"doc.md": b"# T\n\n" + b"word word word\n\n" * 60_000})
    began = time.process_time()
    result = run_cli("index", manifest, "--policy", "langchain-recursive", "--max-chars", "1")
    assert time.process_time() - began < 3  # before: the library cut it all, 9 to 17 s
    assert result.code == 2
    assert result.err.startswith(
        "error: too_many_chunks: document 'doc' (at least 720,002 chunks of at most 1 "
        "characters) gives more than 50,000 chunks"
    )


# Item 11: the smaller ones


def test_validate_of_whitespace_says_it_is_not_json_whatever_its_size() -> None:
    # Before: the writer's layout was read line by line, and a long line of spaces was
    # refused as documents too large.
    handle = io.BytesIO(b" " * 5000)
    error = _refused(
        lambda: validate_index_file(handle, in_memory=10_000, documents_bytes=1000),
        ErrorCode.INVALID_CHUNK_INDEX,
    )
    assert error.detail == "the index file is empty, not JSON"
