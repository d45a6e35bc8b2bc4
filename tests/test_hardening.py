"""Hostile input at the core's edges: refused clearly, early, and in bounded memory."""

from __future__ import annotations

import json
import re
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from explorer import (
    ErrorCode,
    ExplorerError,
    Limits,
    MappingReader,
    build_index,
    load_documents,
    make_config,
    parse_manifest,
    validate_index_bytes,
)
from explorer.chunking.index import readable
from explorer.grammars.markdown import _may_delimit, sections
from explorer.pipeline import Settings
from explorer.sources.documents import DocumentRecord, document_record
from explorer.sources.uploads import bundle_from_files
from tests.conftest import MANIFEST, ROOT, ManifestBuilder, golden_index, run_cli, sha256_hex

GOOD = b"# Title\n\nBody text.\n"


def one_document(text: str, source_id: str = "doc") -> DocumentRecord:
    fields = {"source_id": source_id, "version": "1", "path": f"{source_id}.md"}
    return document_record({**fields, "sha256": "0" * 64}, text)


def index_bytes(index: Mapping[str, Any]) -> bytes:
    return json.dumps(index, ensure_ascii=False).encode()


# -- numbers at the JSON edge ------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("number", "detail"),
    [
        (HUGE, "a number of 5,000 characters is longer than the 100 allowed"),
        ("1" + "0" * 100 + ".5", "a number of 103 characters is longer than the 100 allowed"),
        ("1e400", "the number 1e400 is too large for a float"),
    ],
)
def test_a_huge_number_is_refused_at_every_json_edge(
    make_manifest: ManifestBuilder, tmp_path: Path, number: str, detail: str
) -> None:
    index = index_bytes(golden_index("paragraph")).replace(
        b'"order": 0', b'"order": ' + number.encode(), 1
    )
    (tmp_path / "index.json").write_bytes(index)
    refused = run_cli("validate", tmp_path / "index.json")
    assert (refused.code, refused.err) == (
        1,
        f"error: invalid_chunk_index: the index file is not strict JSON: {detail}\n",
    )
    manifest = make_manifest(raw=b'{"manifest_version": ' + number.encode() + b"}")
    result = run_cli("compare", manifest)
    assert result.code == 2 and result.err.startswith("error: invalid_manifest: ")
    assert detail in result.err
    (tmp_path / "map.json").write_bytes(b'{"kind": ' + number.encode() + b"}")
    mapped = run_cli("chunk-map", "--check", tmp_path / "map.json")
    assert mapped.code == 1 and mapped.err.startswith("error: invalid_chunk_map: ")
    with pytest.raises(ExplorerError) as caught:
        bundle_from_files([("manifest.json", b"[" + number.encode() + b"]")])
    assert caught.value.code is ErrorCode.INVALID_MANIFEST


def test_ordinary_numbers_still_parse(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_bytes(index_bytes(golden_index("heading-aware")))
    assert run_cli("validate", tmp_path / "index.json").code == 0


# -- --max-document-bytes and the limit options ------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "detail"),
    [
        ("--max-document-bytes", "99999999999999999999999", "is more than the maximum, 67,108,864"),
        ("--max-document-bytes", "1000000000000", "is more than the maximum, 67,108,864"),
        ("--max-document-bytes", "9" * 5000, "is more than the maximum, 67,108,864"),
        ("--max-document-bytes", "1e6", "is not a whole number"),
        ("--max-document-bytes", "-5", "is not a whole number"),
        ("--max-chunks", "10000001", "is more than the maximum, 10,000,000"),
        ("--max-document-chunks", "0", "must be at least 1"),
        ("--max-span-check-work", "1000000001", "is more than the maximum, 1,000,000,000"),
    ],
)
def test_sizes_and_limits_given_on_the_command_line_are_bounded(
    make_manifest: ManifestBuilder, option: str, value: str, detail: str
) -> None:
    result = run_cli("compare", make_manifest({"doc.md": GOOD}), f"{option}={value}")
    assert result.code == 2
    assert result.err.startswith(f"error: usage: argument {option}: ")
    assert detail in result.err


def test_the_maximum_document_size_is_accepted(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest({"doc.md": GOOD})
    assert (
        run_cli(
            "index",
            manifest,
            "--policy",
            "paragraph",
            "--max-document-bytes",
            str(64 * 1024 * 1024),
        ).code
        == 0
    )


# -- chunk limits --------------------------------------------------------------------------

ONE_CHARACTER_PARAGRAPHS = b"# T\n\n" + b"a\n\n" * 60_000  # 60,000 chunks under paragraph


def test_default_chunks_per_document_refuses_a_flood_of_tiny_paragraphs(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest({"doc.md": ONE_CHARACTER_PARAGRAPHS})
    result = run_cli("index", manifest, "--policy", "paragraph")
    assert result.code == 2
    assert result.err == (
        "error: too_many_chunks: document 'doc' gives more than 50,000 chunks, the limit; "
        "raise it with --max-document-chunks N (at most 10,000,000)\n"
    )
    raised = run_cli("index", manifest, "--policy", "paragraph", "--max-document-chunks", "60000")
    assert raised.code == 0 and len(raised.json()["chunks"]) == 60_000


def test_chunks_per_index_is_limited_across_documents(make_manifest: ManifestBuilder) -> None:
    body = b"# T\n\n" + b"a\n\n" * 6
    manifest = make_manifest({"a.md": body, "b.md": body})
    for command in (["index", "--policy", "paragraph"], ["compare"]):
        result = run_cli(command[0], manifest, *command[1:], "--max-chunks", "10")
        assert result.code == 2
        assert result.err.startswith("error: too_many_chunks: the index gives more than 10 chunks")
        assert "raise it with --max-chunks N" in result.err
    assert run_cli("index", manifest, "--policy", "paragraph", "--max-chunks", "12").code == 0


def test_validate_refuses_an_index_of_more_chunks_than_the_limit(tmp_path: Path) -> None:
    index = golden_index("fixed-char")  # 13 chunks
    (tmp_path / "index.json").write_bytes(index_bytes(index))
    result = run_cli("validate", tmp_path / "index.json", "--max-chunks", "12")
    assert result.code == 2
    assert result.err.startswith("error: too_many_chunks: the index gives more than 12 chunks")
    assert run_cli("validate", tmp_path / "index.json", "--max-chunks", "13").code == 0


def test_span_checks_times_chunks_is_limited(make_manifest: ManifestBuilder) -> None:
    data = b"# T\n\nalpha beta.\n\ngamma delta.\n"
    checks = [
        {"id": f"c{i}", "source_id": "doc", "spans": [{"label": "a", "quote": "alpha"}]}
        for i in range(5)
    ]
    manifest = make_manifest({"doc.md": data}, span_checks=checks)
    result = run_cli("compare", manifest, "--max-span-check-work", "9")
    assert result.code == 2
    assert result.err.startswith("error: too_many_span_checks: 5 spans of span checks over ")
    assert "--max-span-check-work N" in result.err
    assert run_cli("compare", manifest).code == 0


def test_the_fixtures_stay_within_the_default_limits() -> None:
    for manifest in sorted((MANIFEST.parents[1]).glob("*/manifest.json")):
        assert run_cli("compare", manifest).code == 0, manifest


CORPUS = ROOT.parent / "shared" / "corpora" / "markdown-docs"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared real corpus is not here")
def test_the_real_corpus_stays_within_the_default_limits() -> None:
    """Every loadable file of the real corpus, each policy at its default size."""
    files = {str(p.relative_to(CORPUS)): p.read_bytes() for p in CORPUS.rglob("*/*.md")}
    entries = [
        {"source_id": path, "version": "1", "path": path, "sha256": sha256_hex(data)}
        for path, data in files.items()
    ]
    manifest = parse_manifest(json.dumps({"manifest_version": 1, "documents": entries}).encode())
    documents = load_documents(manifest, MappingReader(files)).documents
    assert len(documents) > 200
    for policy in ("fixed-char", "paragraph", "heading-aware"):
        readable_ones = readable(documents, make_config(policy), policy).documents
        assert len(readable_ones) > 200
        index = build_index(readable_ones, make_config(policy))
        assert 0 < len(index["chunks"]) <= Limits().chunks_per_index // 4


# -- validation: chunk by chunk, refusing at the first difference ------------------------


def fixed_one_with_no_chunks(characters: int) -> bytes:
    """The attack of the issue: a long text, `max_chars: 1`, and an empty chunk list."""
    document = one_document("# T\n\n" + "x" * characters + "\n")
    index = build_index([document], make_config("paragraph"))
    index["config"] = make_config("fixed-char", 1).as_json()
    index["chunks"] = []
    return index_bytes(index)


def test_an_empty_chunk_list_over_a_long_text_is_refused_at_once() -> None:
    data = fixed_one_with_no_chunks(200_000)
    began = time.perf_counter()
    with pytest.raises(ExplorerError) as caught:
        validate_index_bytes(data, Limits(10**7, 10**7))
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX
    assert caught.value.detail == "the index has 0 chunks; its documents and config give more"
    assert time.perf_counter() - began < 1.0


def peak_bytes(data: bytes, limits: Limits) -> int:
    tracemalloc.start()
    try:
        validate_index_bytes(data, limits)
    except ExplorerError:
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_validation_memory_is_a_bounded_multiple_of_the_file() -> None:
    """Refused or valid, validating never holds a second index beside the file's."""
    unlimited = Limits(10**7, 10**7)
    hostile = fixed_one_with_no_chunks(100_000)
    assert peak_bytes(hostile, unlimited) < 4 * len(hostile)
    document = one_document("# T\n\n" + "word " * 40_000 + "\n")
    valid = index_bytes(build_index([document], make_config("fixed-char", 20), unlimited))
    validate_index_bytes(valid, unlimited)
    # Parsing alone takes some multiple of the file; rebuilding adds one chunk at a time.
    assert peak_bytes(valid, unlimited) < 12 * len(valid)


def test_a_chunk_dropped_from_the_end_is_refused_when_the_rebuild_passes_the_count() -> None:
    index = golden_index("paragraph")
    index["chunks"].pop()
    with pytest.raises(ExplorerError) as caught:
        validate_index_bytes(index_bytes(index))
    assert caught.value.detail == "the index has 7 chunks; its documents and config give more"


@pytest.mark.parametrize(
    ("position", "key", "value"),
    [(1, "order", True), (0, "order", False), (0, "start", None), (2, "end_line", None)],
)
def test_a_value_equal_under_eq_but_of_another_json_type_is_refused(
    position: int, key: str, value: Any
) -> None:
    """`==` holds true equal to 1 and 1.0 equal to 1; the JSON types must match too."""
    index = golden_index("heading-aware")
    chunk = index["chunks"][position]
    chunk[key] = float(chunk[key]) if value is None else value
    assert chunk == golden_index("heading-aware")["chunks"][position]
    with pytest.raises(ExplorerError) as caught:
        validate_index_bytes(index_bytes(index))
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX
    assert caught.value.detail.startswith(f"chunks[{position}].{key}: Input should be a valid")


# -- validate --manifest: the documents are their source files ---------------------------


def retexted(index: dict[str, Any]) -> dict[str, Any]:
    """Text edited, every digest and id recomputed, the document's sha256 replaced: an
    index that is consistent in itself but not with the files."""
    documents = []
    for document in index["documents"]:
        fields = {
            k: v
            for k, v in document.items()
            if k not in ("text", "normalized_text_sha256", "document_revision")
        }
        text = document["text"].replace("refuses", "accepts")
        fields["sha256"] = sha256_hex(text.encode())
        documents.append(document_record(fields, text))
    return dict(build_index(documents, make_config("heading-aware")))


def test_validate_with_the_manifest_checks_documents_against_their_files(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(index_bytes(golden_index("heading-aware")))
    result = run_cli("validate", good, "--manifest", MANIFEST)
    assert (result.code, result.err) == (0, "")
    forged = tmp_path / "forged.json"
    forged.write_bytes(index_bytes(retexted(golden_index("heading-aware"))))
    assert run_cli("validate", forged).code == 0  # consistent in itself
    refused = run_cli("validate", forged, "--manifest", MANIFEST)
    assert refused.code == 1
    assert refused.err == (
        "error: invalid_chunk_index: documents[0] ('aster-copy-v1').sha256 is not what its "
        "source file and the manifest give\n"
    )


def test_validate_with_the_manifest_refuses_a_missing_or_extra_document(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    manifest = make_manifest({"a.md": GOOD, "b.md": b"# B\n\nOther.\n"})
    built = run_cli("index", manifest, "--policy", "paragraph")
    index = built.json()
    only_a = make_manifest({"a.md": GOOD})
    (tmp_path / "index.json").write_bytes(index_bytes(index))
    extra = run_cli("validate", tmp_path / "index.json", "--manifest", only_a)
    assert extra.code == 1
    assert "documents[1] ('b') is not in the manifest" in extra.err
    one = run_cli("index", only_a, "--policy", "paragraph")
    (tmp_path / "index.json").write_text(one.out, "utf-8")
    both = make_manifest({"a.md": GOOD, "b.md": b"# B\n\nOther.\n"})
    missing = run_cli("validate", tmp_path / "index.json", "--manifest", both)
    assert missing.code == 1 and "the index leaves out 'b' of the manifest" in missing.err


# -- paths: one spelling per file --------------------------------------------------------


@pytest.mark.parametrize("spelling", ["./doc.md", ".//doc.md", "sub/../doc.md"])
def test_two_spellings_of_one_path_are_duplicates(
    make_manifest: ManifestBuilder, spelling: str
) -> None:
    entry = {"version": "1", "sha256": sha256_hex(GOOD)}
    documents = [
        {"source_id": "a", "path": "doc.md", **entry},
        {"source_id": "b", "path": spelling, **entry},
    ]
    manifest = make_manifest({"doc.md": GOOD}, documents=documents)
    result = run_cli("compare", manifest)
    assert result.code == 2
    if ".." in spelling:  # not folded: `sub` may be a link, so `..` is refused on reading
        assert result.err.startswith("error: path_outside_manifest: ")
    else:
        assert result.err == "error: invalid_manifest: duplicate path 'doc.md'\n"


def test_an_upload_finds_a_dot_slash_path() -> None:
    entry = {"source_id": "a", "version": "1", "path": "./a.md", "sha256": sha256_hex(GOOD)}
    manifest = {"manifest_version": 1, "documents": [entry]}
    bundle = bundle_from_files([("manifest.json", json.dumps(manifest).encode()), ("a.md", GOOD)])
    load = load_documents(bundle.manifest, MappingReader(bundle.files))
    assert [s.status for s in load.statuses] == ["ok"]
    assert load.documents[0]["path"] == "a.md"
    parsed = parse_manifest(json.dumps(manifest).encode())
    assert parsed.documents[0]["path"] == "a.md"


def test_the_documents_of_a_manifest_are_limited_together(make_manifest: ManifestBuilder) -> None:
    files = {f"d{i}.md": b"# T\n\n" + bytes([97 + i]) * 100 for i in range(3)}
    manifest = make_manifest(files)
    result = run_cli("index", manifest, "--policy", "paragraph", "--max-total-bytes", "250")
    assert result.code == 2
    assert result.err == (
        "error: document_too_large: the manifest's documents hold more than 250 bytes "
        "together, the limit; raise it with --max-total-bytes N (at most 4,294,967,296)\n"
    )
    assert run_cli("index", manifest, "--policy", "paragraph", "--max-total-bytes", "315").code == 0


@pytest.mark.parametrize(
    ("change", "detail"),
    [
        (
            lambda m: m["span_checks"][0]["spans"].extend([{"label": "x", "quote": "y"}] * 100),
            "span_checks[0].spans: List should have at most 100 items",
        ),
        (
            lambda m: m["span_checks"].extend(
                {**m["span_checks"][0], "id": f"c{i}"} for i in range(10_000)
            ),
            "span_checks: List should have at most 10000 items",
        ),
    ],
)
def test_span_checks_and_spans_are_limited(change: Any, detail: str) -> None:
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    change(manifest)
    with pytest.raises(ExplorerError) as caught:
        parse_manifest(json.dumps(manifest).encode())
    assert caught.value.code is ErrorCode.INVALID_MANIFEST
    assert caught.value.detail.startswith(detail)


def test_validate_with_a_manifest_that_lists_a_source_id_twice(
    make_manifest: ManifestBuilder, tmp_path: Path
) -> None:
    """`ingest` allows one source_id in two tenants; an index, keyed by it, does not."""
    entry = {"source_id": "a", "version": "1", "sha256": sha256_hex(GOOD)}
    documents = [
        {**entry, "path": "a.md", "access_scope": "acme"},
        {**entry, "path": "b.md", "access_scope": "umbrella"},
    ]
    manifest = make_manifest({"a.md": GOOD, "b.md": GOOD}, documents=documents)
    (tmp_path / "index.json").write_bytes(index_bytes(golden_index("paragraph")))
    result = run_cli("validate", tmp_path / "index.json", "--manifest", manifest)
    assert result.code == 2
    assert result.err.startswith("error: invalid_manifest: source_id 'a' is listed in ")


# -- time and depth a hostile text or link may ask for ----------------------------------

DELIMITER_LINE = re.compile(r"[ \t|:-]*-[ \t|:-]*$")  # what `_may_delimit` replaced


@given(st.text(alphabet=" \t|:-x\u00a0", max_size=40))
def test_may_delimit_is_the_pattern_it_replaced(line: str) -> None:
    assert _may_delimit(line) == (DELIMITER_LINE.match(line) is not None)


def test_a_long_line_of_dashes_under_a_row_is_read_in_linear_time() -> None:
    """Under a line with a pipe, a line of dashes that ends in another character took
    the square of its length (40,000 dashes: 12 s; a 1 MiB document: hours)."""
    text = "# T\n\n|a\n" + "-" * 400_000 + "x\n"
    began = time.perf_counter()
    found = sections(text)
    assert time.perf_counter() - began < 5
    assert [section.blocks for section in found] == [((5, len(text)),)]


def test_a_link_parameter_nested_too_deeply_is_text_not_a_crash() -> None:
    query = {"langchain-recursive": "500", "langchain-recursive.separators": "[" * 5000}
    settings, notes = Settings.from_query(query)
    assert "langchain-recursive" not in settings.names
    assert [note.split(":")[0] for note in notes] == [
        "Ignored the langchain-recursive column from the link"
    ]


def test_a_command_line_parameter_nested_too_deeply_is_refused_with_a_code(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest({"a.md": GOOD})
    result = run_cli(
        "compare", manifest, "--policy", "langchain-recursive", "--max-chars", "500",
        "--param", "separators=" + "[" * 5000,
    )  # fmt: skip
    assert result.code == 2
    assert result.err.startswith("error: unsupported_chunk_config:"), result.err
    assert "Traceback" not in result.err
