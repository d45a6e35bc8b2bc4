"""`validate` accepts the recorded indexes and refuses every tampered copy (exit 1)."""

from __future__ import annotations

import copy
import io
import json
import os
import threading
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest

from explorer import (
    digest,
    make_config,
    parse_config,
    sha,
    validate_index_bytes,
    validate_index_file,
)
from explorer.chunking.index import write_index
from explorer.errors import ErrorCode, ExplorerError
from explorer.sources.documents import document_record
from tests.conftest import POLICY_SIZES, golden_index, run_cli

Index = dict[str, Any]


def _text_edit(index: Index) -> None:
    index["chunks"][1]["text"] = index["chunks"][1]["text"].replace("refuses", "accepts")


def _text_edit_with_digests(index: Index) -> None:
    _text_edit(index)
    chunk = index["chunks"][1]
    chunk["text_sha256"] = sha(chunk["text"])
    payload = {k: v for k, v in chunk.items() if k != "chunk_id"}
    chunk["chunk_id"] = digest({"config": index["config"], **payload})


def _shift(index: Index) -> None:
    for chunk in index["chunks"][:2]:
        chunk["start"] += 1
        chunk["end"] += 1


def _reorder(index: Index) -> None:
    chunks = index["chunks"]
    chunks[0], chunks[1] = chunks[1], chunks[0]


def _forge_revision(index: Index) -> None:
    doc = index["documents"][0]
    doc["version"] = "9.9"
    doc["document_revision"] = digest(
        {k: v for k, v in doc.items() if k not in ("text", "document_revision")}
    )


def _edit_document_text(index: Index) -> None:
    doc = index["documents"][0]
    doc["text"] = doc["text"].replace("refuses", "accepts")
    doc["normalized_text_sha256"] = sha(doc["text"])


def _set(path: list[str | int], value: Any) -> Callable[[Index], None]:
    def edit(index: Index) -> None:
        target: Any = index
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


def _delete(path: list[str | int]) -> Callable[[Index], None]:
    def edit(index: Index) -> None:
        target: Any = index
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return edit


TAMPERINGS: dict[str, tuple[Callable[[Index], None], str]] = {
    "edited text": (_text_edit, "chunks[1].text"),
    "edited text, digests recomputed": (_text_edit_with_digests, "chunks[1].text"),
    "shifted spans": (_shift, "chunks[0].start"),
    "reordered chunks": (_reorder, "chunks[0]"),
    "dropped chunk": (lambda i: i["chunks"].pop(4), "chunks[4]"),
    "dropped last chunk": (lambda i: i["chunks"].pop(), "chunks; its documents and config give"),
    "duplicated chunk": (
        lambda i: i["chunks"].insert(2, copy.deepcopy(i["chunks"][2])),
        "chunks[3]",
    ),
    "added chunk at the end": (
        lambda i: i["chunks"].append(copy.deepcopy(i["chunks"][0])),
        "its documents and config give",
    ),
    "changed config": (_set(["config", "max_chars"], 81), "chunks[0].end is 130"),
    "unknown strategy": (
        _set(["config", "strategy"], "sentence-window"),
        "config: unknown strategy",
    ),
    "unknown top-level key": (_set(["signed_by"], "me"), "signed_by: unknown key"),
    "unknown chunk key": (_set(["chunks", 0, "score"], 1), "chunks[0].score: unknown key"),
    "unknown document key": (
        _set(["documents", 0, "owner"], "x"),
        "documents[0].owner: unknown key",
    ),
    "missing chunk key": (_delete(["chunks", 0, "end_line"]), "chunks[0].end_line: required"),
    "forged revision": (_forge_revision, "chunks[0].version"),
    "stale revision": (
        _set(["documents", 0, "version"], "1.1"),
        "document_revision does not recompute",
    ),
    "edited document text": (_edit_document_text, "document_revision does not recompute"),
    "wrong line number": (_set(["chunks", 0, "start_line"], 5), "chunks[0].start_line is 5"),
    "wrong end line": (_set(["chunks", 2, "end_line"], 1), "chunks[2].end_line is 1"),
    "string where an int belongs": (_set(["chunks", 0, "order"], "0"), "chunks[0].order"),
    "float where an int belongs": (_set(["chunks", 0, "start"], 50.0), "chunks[0].start"),
    "boolean schema version": (_set(["schema_version"], True), "schema_version"),
    "stale index_id": (_set(["index_id"], "0" * 64), "index_id does not match"),
    "wrong-shaped index_id": (_set(["index_id"], "ABC"), "index_id: must be 64 lower-case hex"),
    "duplicate path": (_set(["documents", 1, "path"], "docs/aster-copy-v1.md"), "duplicate path"),
    "documents out of order": (lambda i: i["documents"].reverse(), "sorted by source_id"),
    "no documents": (_set(["documents"], []), "documents"),
    "NUL in text": (_set(["documents", 0, "text"], "# A\x00\n"), "documents[0]"),
    "carriage return in text": (_set(["documents", 1, "text"], "# A\r\nb\r\n"), "documents[1]"),
    "null title": (_set(["documents", 0, "title"], None), "title: must be a non-empty string"),
}


def as_written(index: Any) -> bytes:
    """An index in `write_index`'s own layout: each value as canonical JSON (a chunk's
    `chunk_id` sorts first), one document or chunk per line, `index_id` last."""
    canonical = partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)
    head = b",".join(
        b"%b:%b" % (orjson.dumps(key), canonical(value))
        for key, value in index.items()
        if key not in ("documents", "chunks", "index_id")
    )
    return b'{%b,\n"documents":[\n%b\n],\n"chunks":[\n%b\n],\n"index_id":%b}\n' % (
        head,
        b",\n".join(map(canonical, index.get("documents", []))),
        b",\n".join(map(canonical, index.get("chunks", []))),
        orjson.dumps(index.get("index_id")),
    )


# Every check runs on a file in any JSON layout, and on one in the writer's own layout
# (which `validate` compares with a rebuild byte for byte before anything else).
@pytest.fixture(params=["json.dumps", "as written"])
def write(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[Any], Path]:
    def put(index: Any) -> Path:
        path = tmp_path / "index.json"
        if request.param == "as written":
            path.write_bytes(as_written(index))
        else:
            path.write_text(json.dumps(index, ensure_ascii=False), "utf-8")
        return path

    return put


@pytest.mark.parametrize("policy", list(POLICY_SIZES))
def test_the_writers_layout_is_what_index_writes(policy: str, tmp_path: Path) -> None:
    index = golden_index(policy)
    config = parse_config(index["config"])
    written: list[bytes] = []
    write_index(index["documents"], config, written.append)
    assert as_written(index) == b"".join(written)
    assert validate_index_bytes(b"".join(written)) == index


@pytest.mark.parametrize("policy", list(POLICY_SIZES))
def test_recorded_indexes_are_valid(policy: str, write: Callable[[Any], Path]) -> None:
    index = golden_index(policy)
    result = run_cli("validate", write(index))
    assert (result.code, result.out, result.err) == (0, f"valid {index['index_id']}\n", "")


@pytest.mark.parametrize("recompute", [False, True], ids=["as-edited", "index_id-recomputed"])
@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampered_copies_are_refused(
    name: str, recompute: bool, write: Callable[[Any], Path]
) -> None:
    edit, expected_detail = TAMPERINGS[name]
    index = golden_index("fixed-char")
    edit(index)
    if recompute and name not in ("stale index_id", "wrong-shaped index_id"):
        index["index_id"] = digest({k: v for k, v in index.items() if k != "index_id"})
    result = run_cli("validate", write(index))
    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith("error: invalid_chunk_index: ")
    assert expected_detail in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("content", "detail"),
    [
        (b"", "empty, not JSON"),
        (b"   \n", "empty, not JSON"),
        (b"{not json", "not JSON"),
        (b'{"a": 1} {"b": 2}', "content after the JSON value"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"a": NaN}', "NaN is not JSON"),
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b"[1, 2]", "valid dictionary"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"title": "\\ud800"}', "lone surrogate"),
    ],
)
def test_files_that_are_not_an_index(content: bytes, detail: str, tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_bytes(content)
    result = run_cli("validate", path)
    assert result.code == 1
    assert result.err.startswith("error: invalid_chunk_index: ")
    assert detail in result.err


def test_trailing_content_after_a_valid_index(tmp_path: Path) -> None:
    path = tmp_path / "index.json"
    path.write_text(json.dumps(golden_index("paragraph")) + "\n{}", "utf-8")
    result = run_cli("validate", path)
    assert result.code == 1
    assert "content after the JSON value" in result.err


def test_missing_index_file_is_an_io_error(tmp_path: Path) -> None:
    result = run_cli("validate", tmp_path / "absent.json")
    assert result.code == 2
    assert result.err.startswith("error: io_error: cannot read index file")


def _written(documents: list[Any], config: Any) -> bytes:
    pieces: list[bytes] = []
    write_index(documents, config, pieces.append)
    return b"".join(pieces)


def test_a_file_as_written_is_validated_as_it_is_read() -> None:
    """No more of the file in memory than its documents: one larger than `in_memory`
    validates when it is what `write_index` writes, and a copy tampered anywhere is
    refused, saying why it was not checked in memory."""
    index = golden_index("fixed-char")
    data = _written(index["documents"], parse_config(index["config"]))
    valid = validate_index_file(io.BytesIO(data), in_memory=len(data) // 4)
    assert valid.index_id == index["index_id"]
    assert valid.chunk_count == len(index["chunks"])
    assert valid.documents == index["documents"]
    assert valid.config == parse_config(index["config"])
    tampered = data.replace(b'"order":3,', b'"order":4,', 1)
    with pytest.raises(ExplorerError) as refused:
        validate_index_file(io.BytesIO(tampered), in_memory=len(data) // 4)
    assert refused.value.code is ErrorCode.INVALID_CHUNK_INDEX
    assert "which only a file (not a pipe) laid out as `index` writes one" in refused.value.detail
    with pytest.raises(ExplorerError) as named:  # within the limit: the difference named
        validate_index_file(io.BytesIO(tampered))
    assert "chunks[3].order is 4" in named.value.detail


@pytest.mark.parametrize(
    "edit",
    [
        lambda data: data + b"{}",  # after the foot
        lambda data: data[:-2],  # the foot cut
        lambda data: data.replace(b'\n],\n"chunks":[\n', b'\n],\n"chunks":[', 1),
        lambda data: data.replace(b"},\n{", b"},{", 1),  # two chunks on a line
        lambda data: data.replace(b'"chunks":[\n', b'"chunks":[{},\n', 1),
    ],
    ids=["trailing", "cut", "joined head", "joined chunks", "extra"],
)
def test_a_file_laid_out_otherwise_takes_the_strict_path(edit: Callable[[bytes], bytes]) -> None:
    index = golden_index("paragraph")
    written = _written(index["documents"], parse_config(index["config"]))
    data = edit(written)
    assert data != written
    with pytest.raises(ExplorerError) as refused:
        validate_index_file(io.BytesIO(data), in_memory=8)
    assert "laid out as `index` writes one may be" in refused.value.detail


def test_validating_a_file_holds_its_documents_not_its_chunks() -> None:
    """80 documents in 40-character chunks: the file is mostly chunks, and the memory
    validating it takes stays a fraction of the file's size."""
    body = "\n\n".join(f"Paragraph {n} holds a qualifier, only after review." for n in range(80))
    documents = []
    for n in range(80):
        text = f"# Page {n}\n\n{body}\n"
        fields = {"source_id": f"page-{n:03d}", "version": "1", "path": f"page-{n:03d}.md"}
        documents.append(document_record({**fields, "sha256": sha(text)}, text))
    config = make_config("fixed-char", 40)
    data = _written(documents, config)
    tracemalloc.start()
    valid = validate_index_file(io.BytesIO(data))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert valid.chunk_count > 6_000
    assert peak < len(data) / 3, (peak, len(data))


def test_an_index_through_a_pipe_is_read_whole(tmp_path: Path) -> None:
    """`validate <(…)`: a pipe cannot be read twice, so it is read whole (and checked)."""
    index = golden_index("heading-aware")
    pipe = tmp_path / "index.pipe"
    os.mkfifo(pipe)
    writer = threading.Thread(target=pipe.write_bytes, args=(json.dumps(index).encode(),))
    writer.start()
    result = run_cli("validate", pipe)
    writer.join()
    assert (result.code, result.out, result.err) == (0, f"valid {index['index_id']}\n", "")


def test_an_index_whose_documents_pass_the_limit_is_refused_before_it_is_held() -> None:
    index = golden_index("paragraph")
    data = _written(index["documents"], parse_config(index["config"]))
    with pytest.raises(ExplorerError) as refused:
        validate_index_file(io.BytesIO(data), documents_bytes=1_000)
    assert refused.value.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert "more than 1,000 bytes of JSON" in refused.value.detail
    assert "--max-total-bytes" in refused.value.detail
