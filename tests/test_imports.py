"""Imported chunk files (docs/contract.md §5c): four shapes, offsets checked (and CRLF
offsets converted), chunks located exactly then ignoring whitespace, clear refusals, and
an imported column indexed, validated and checked like ours."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from explorer.checking.validate import validate_index
from explorer.chunking.imports import ChunkFile, detect_shape, place
from explorer.chunking.index import build_index
from explorer.errors import ErrorCode, ExplorerError
from explorer.pipeline import Settings, explore, write_comparison
from explorer.sources.documents import DocumentRecord, document_record
from explorer.sources.loading import DirectoryReader, LoadResult, load_documents
from explorer.sources.manifest import parse_manifest

from .conftest import ROOT, ManifestBuilder, run_cli

LIBRARY = ROOT / "fixtures" / "library" / "manifest.json"
TEXT = "# Guide\n\nFirst part of the guide.\n\n## Setup\n\nInstall it.  Then run it.\n"


def _document(text: str = TEXT, source_id: str = "guide", path: str = "guide.md") -> DocumentRecord:
    fields = {"source_id": source_id, "version": "1", "path": path, "sha256": "0" * 64}
    return document_record(fields, text)


def _file(chunks: list[dict[str, Any]], lines: bool = False, name: str = "mine") -> ChunkFile:
    data = "\n".join(map(json.dumps, chunks)) if lines else json.dumps(chunks)
    return ChunkFile(name, data.encode())


def library_load() -> LoadResult:
    manifest = parse_manifest(LIBRARY.read_bytes())
    return load_documents(manifest, DirectoryReader(LIBRARY.parent))


def _refusal(chunk_file: ChunkFile, documents: list[DocumentRecord]) -> ExplorerError:
    with pytest.raises(ExplorerError) as caught:
        place(chunk_file, documents)
    return caught.value


@pytest.mark.parametrize(
    ("chunk", "shape"),
    [
        ({"page_content": "x", "metadata": {}}, "langchain"),
        ({"text": "x", "start_char_idx": 0, "end_char_idx": 1, "metadata": {}}, "llamaindex"),
        ({"text": "x", "start_index": 0, "end_index": 1}, "chonkie"),
        ({"source_id": "a", "text": "x"}, "plain"),
    ],
)
def test_the_shape_is_told_by_the_keys(chunk: dict[str, Any], shape: str) -> None:
    assert detect_shape(chunk) == shape


def test_no_shape_is_refused_naming_the_four() -> None:
    error = _refusal(_file([{"content": "x"}]), [_document()])
    assert error.code is ErrorCode.INVALID_CHUNK_FILE
    for shape in ("langchain", "llamaindex", "chonkie", "plain"):
        assert shape in error.detail


@pytest.mark.parametrize("lines", [False, True])
def test_plain_chunks_with_and_without_offsets_land_at_the_same_place(lines: bool) -> None:
    document = _document()
    pieces = ["# Guide\n\nFirst part", "First part of the guide.", "## Setup\n\nInstall it."]
    spans = [(TEXT.index(p), TEXT.index(p) + len(p)) for p in pieces]
    given = [
        {"source_id": "guide", "text": p, "start": s, "end": e}
        for p, (s, e) in zip(pieces, spans, strict=True)
    ]
    bare = [{"source_id": "guide", "text": p} for p in pieces]
    with_offsets = place(_file(given, lines), [document])
    located = place(_file(bare, lines), [document])
    assert with_offsets.spans == located.spans == {"guide": spans}
    assert with_offsets.notes == located.notes == ()
    assert with_offsets.config.chunk_file is not None
    assert with_offsets.config.chunk_file.shape == "plain"


def test_a_chunk_that_strips_and_joins_is_located_ignoring_whitespace() -> None:
    chunks = [{"source_id": "guide", "text": "Install it. Then run it."}]
    placement = place(_file(chunks), [_document()])
    start = TEXT.index("Install")
    assert placement.spans == {"guide": [(start, start + len("Install it.  Then run it."))]}
    assert placement.notes == ("guide: chunk 1 was located ignoring whitespace",)


def test_offsets_of_the_crlf_text_are_converted_and_said() -> None:
    raw = TEXT.replace("\n", "\r\n")
    piece = raw[raw.index("## Setup") : raw.index("Then")]
    start = raw.index(piece)
    chunk = {"text": piece, "start_index": start, "end_index": start + len(piece)}
    placement = place(_file([chunk]), [_document()])
    want = TEXT.index("## Setup")
    assert placement.spans == {"guide": [(want, want + len(piece.replace("\r\n", "\n")))]}
    assert "before CRLF normalization" in placement.notes[0]


def test_offsets_that_do_not_hold_the_text_are_refused() -> None:
    chunks = [{"source_id": "guide", "text": "Install it.", "start": 0, "end": 11}]
    error = _refusal(_file(chunks), [_document()])
    assert error.code is ErrorCode.INVALID_CHUNK_FILE
    assert "chunk 1 of 'guide' ('Install it.')" in error.detail


def test_a_chunk_not_in_its_document_is_named_with_its_first_40_characters() -> None:
    text = "Nothing like this is in the guide at all, not even close to it."
    chunks = [{"source_id": "guide", "text": "First part"}, {"source_id": "guide", "text": text}]
    error = _refusal(_file(chunks), [_document()])
    assert error.code is ErrorCode.CHUNK_NOT_FOUND
    assert f"chunk 2 of 'guide' ({text[:40] + '…'!r})" in error.detail


def test_chunks_are_searched_from_the_previous_chunks_start() -> None:
    chunks = [{"source_id": "guide", "text": "## Setup"}, {"source_id": "guide", "text": "# Guide"}]
    error = _refusal(_file(chunks), [_document()])
    assert error.code is ErrorCode.CHUNK_NOT_FOUND


def test_skip_failed_loads_the_rest_and_says_what_was_left_out() -> None:
    chunks = [
        {"source_id": "guide", "text": "First part"},
        {"source_id": "guide", "text": "not in the guide"},
        {"source_id": "elsewhere", "text": "First part"},
    ]
    data = json.dumps(chunks).encode()
    placement = place(ChunkFile("mine", data, skip_failed=True), [_document()])
    assert placement.chunk_count == 1
    assert placement.notes[-1].startswith("skipped 2 chunks that could not be placed")


def test_documents_are_named_by_source_id_by_path_or_by_being_the_only_one() -> None:
    one, two = _document(), _document("# Other\n\nFirst part.\n", "other", "docs/other.md")
    by_path = [{"page_content": "First part", "metadata": {"source": "/home/me/docs/other.md"}}]
    assert set(place(_file(by_path), [one, two]).spans) == {"other"}
    by_id = [{"page_content": "First part", "metadata": {"source_id": "guide"}}]
    assert set(place(_file(by_id), [one, two]).spans) == {"guide"}
    nameless = [{"page_content": "First part", "metadata": {}}]
    assert set(place(_file(nameless), [one]).spans) == {"guide"}
    error = _refusal(_file(nameless), [one, two])
    assert error.code is ErrorCode.INVALID_CHUNK_FILE
    assert "names no document" in error.detail


def test_a_chunk_of_another_shape_is_refused_by_its_number() -> None:
    chunks = [{"source_id": "guide", "text": "First"}, {"source_id": "guide", "txt": "part"}]
    error = _refusal(_file(chunks), [_document()])
    assert error.code is ErrorCode.INVALID_CHUNK_FILE
    assert error.detail.startswith("chunk 2 is not a plain chunk")


def test_an_imported_index_has_our_ids_validates_and_refuses_tampering() -> None:
    document = _document()
    chunks = [{"source_id": "guide", "text": "First part of the guide.\n\n## Setup"}]
    placement = place(_file(chunks), [document])
    index = build_index([document], placement.config, given=placement.spans)
    assert validate_index(json.loads(json.dumps(index))) == index
    chunk = index["chunks"][0]
    assert chunk["section_title"] == "Guide"  # the section its start lies in
    tampered = json.loads(json.dumps(index))
    tampered["chunks"][0]["text"] = "First part of the guide.\n\n## Setu"
    with pytest.raises(ExplorerError) as caught:
        validate_index(tampered)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX
    moved = json.loads(json.dumps(index))
    moved["chunks"][0]["start"] += 1
    with pytest.raises(ExplorerError):
        validate_index(moved)


def test_an_imported_column_is_a_fourth_column_with_its_verdicts() -> None:
    load = library_load()
    texts = {d["source_id"]: d["text"] for d in load.documents}
    chunks = [{"source_id": sid, "text": text} for sid, text in texts.items()]
    manifest = parse_manifest(LIBRARY.read_bytes())
    settings = Settings(Settings.default().configs, (_file(chunks, name="whole"),))
    exploration = explore(load, manifest.span_checks, settings)
    assert [c.name for c in exploration.columns][-1] == "whole"
    whole = exploration.report["policies"][-1]
    assert all(check["together"] for check in whole["checks"])
    assert whole["config"]["strategy"] == "chunk-file"


def test_two_columns_of_one_name_are_refused() -> None:
    with pytest.raises(ExplorerError) as caught:
        Settings(Settings.default().configs, (_file([], name="paragraph"),))
    assert caught.value.code is ErrorCode.USAGE


def test_compare_and_index_take_chunk_files(tmp_path: Path) -> None:
    load = library_load()
    chunks = [
        {"page_content": d["text"][:200], "metadata": {"source": d["path"], "start_index": 0}}
        for d in load.documents
    ]
    chunk_file = tmp_path / "mine.jsonl"
    chunk_file.write_text("\n".join(map(json.dumps, chunks)))
    report = tmp_path / "report.json"
    result = run_cli("compare", LIBRARY, "--chunks", f"mine={chunk_file}", "--out", report)
    assert result.code == 0, result.err
    names = [p["name"] for p in json.loads(report.read_text())["policies"]]
    assert names == ["fixed-char", "paragraph", "heading-aware", "mine"]
    index = tmp_path / "index.json"
    assert run_cli("index", LIBRARY, "--chunks", f"mine={chunk_file}", "--out", index).code == 0
    assert run_cli("validate", index, "--manifest", LIBRARY).code == 0


def test_a_refused_chunk_file_writes_nothing(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest()
    chunk_file = tmp_path / "bad.json"
    chunk_file.write_text(json.dumps([{"source_id": "doc", "text": "not there"}]))
    result = run_cli("compare", manifest, "--chunks", f"bad={chunk_file}")
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith("error: chunk_not_found: chunk 1 of 'doc'")


def test_the_streamed_report_equals_the_built_one_notes_included() -> None:
    load = library_load()
    manifest = parse_manifest(LIBRARY.read_bytes())
    chunks = [
        {"source_id": d["source_id"], "text": " ".join(d["text"].split()[:30])}
        for d in load.documents
    ]
    settings = Settings(Settings.default().configs, (_file(chunks, name="loose"),))
    written = io.BytesIO()
    write_comparison(load, manifest.span_checks, settings, written.write)
    report = explore(load, manifest.span_checks, settings).report
    assert json.loads(written.getvalue()) == report
    assert report["policies"][-1]["notes"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("section_title", "Setup"),
        ("start_line", 2),
        ("order", 1),
        ("chunk_id", "0" * 64),
        ("end", 10_000),
        ("start", -1),
    ],
)
def test_any_single_edit_of_an_imported_chunk_is_refused(field: str, value: object) -> None:
    document = _document()
    placement = place(_file([{"source_id": "guide", "text": "First part"}]), [document])
    index = json.loads(json.dumps(build_index([document], placement.config, given=placement.spans)))
    index["chunks"][0][field] = value
    with pytest.raises(ExplorerError) as caught:
        validate_index(index)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX


def test_an_imported_index_out_of_document_order_is_refused() -> None:
    document = _document()
    chunks = [
        {"source_id": "guide", "text": "First part"},
        {"source_id": "guide", "text": "Install"},
    ]
    placement = place(_file(chunks), [document])
    index = json.loads(json.dumps(build_index([document], placement.config, given=placement.spans)))
    index["chunks"].reverse()
    with pytest.raises(ExplorerError) as caught:
        validate_index(index)
    assert "document order" in caught.value.detail


def _de_bruijn(length: int) -> str:
    """Every string of `length` letters a and b, once each, in one cyclic run."""
    known: set[str] = set()
    run = "a" * length
    while len(run) < 2**length + length - 1:
        for letter in "ba":
            window = run[len(run) - length + 1 :] + letter
            if window not in known:
                known.add(window)
                run += letter
                break
        else:
            break
    return run


@pytest.mark.parametrize("kind", ["blank", "every piece held"])
def test_searches_that_find_nothing_are_bounded_even_when_skipping(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks that are only blanks, or whose every 8 characters the document holds while
    it holds them whole nowhere, cost a pass over the document each: 20,000 such chunks
    on 1 MiB took 35-39 s. The passes are bounded in all."""
    body = (_de_bruijn(8) * 200)[:50_000]
    text = "# T\n\n" + body
    missing = next(
        "".join("ab"[(n >> bit) & 1] for bit in range(9))
        for n in range(512)
        if "".join("ab"[(n >> bit) & 1] for bit in range(9)) not in body
    )
    nowhere = "\t\t" if kind == "blank" else missing
    monkeypatch.setattr("explorer.chunking.locate.MAX_MISSED", 20 * len(text))
    placeable, zzz = {"source_id": "guide", "text": "# T"}, {"source_id": "guide", "text": "zzz"}
    few = [placeable, zzz] + [{"source_id": "guide", "text": nowhere}] * 5
    placement = place(ChunkFile("few", json.dumps(few).encode(), True), [_document(text)])
    assert placement.chunk_count == 1 and "skipped 6 chunks" in placement.notes[-1]
    many = few + [{"source_id": "guide", "text": nowhere}] * 100
    with pytest.raises(ExplorerError) as refused:
        place(ChunkFile("many", json.dumps(many).encode(), skip_failed=True), [_document(text)])
    assert refused.value.code is ErrorCode.TOO_MANY_CHUNKS
    assert "are nowhere in it took searches of more than" in refused.value.detail
