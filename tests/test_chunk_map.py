"""Chunk maps: structure without content, a strict decoder, and a faithful round trip."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from explorer import (
    POLICIES,
    DirectoryReader,
    ErrorCode,
    ExplorerError,
    build_index,
    digest,
    load_documents,
    make_config,
    parse_manifest,
)
from explorer.checking.chunk_map import (
    ChunkMap,
    _plan,
    build_chunk_map,
    check_against,
    decode_chunk_map,
    write_chunk_maps,
)
from explorer.jsonio import dump_json
from explorer.sources.documents import DocumentRecord
from tests.conftest import MANIFEST, ROOT, run_cli

# A map as a test tampers with it: any key may be given any value.
Payload = dict[str, Any]


def fixture_documents() -> list[DocumentRecord]:
    """Every document of every bundled fixture."""
    documents: list[DocumentRecord] = []
    for path in sorted((ROOT / "fixtures").glob("*/manifest.json")):
        manifest = parse_manifest(path.read_bytes())
        documents += load_documents(manifest, DirectoryReader(path.parent)).documents
    return documents


def every_map() -> list[tuple[DocumentRecord, Payload]]:
    return [
        (document, cast(Payload, build_chunk_map(document, make_config(name))))
        for document in fixture_documents()
        for name in POLICIES
    ]


def encoded(payload: Payload) -> bytes:
    return dump_json(payload).encode()


@pytest.mark.parametrize("position", range(6))
def test_round_trip_and_rebuild_against_the_document(position: int) -> None:
    document, payload = every_map()[position]
    decoded = decode_chunk_map(encoded(payload))
    assert decoded == payload
    check_against(decoded, document)
    config = make_config(
        decoded["requested_chunker"], decoded["plan_annotations"]["explorer"]["config"]["max_chars"]
    )
    chunks = build_index([document], config)["chunks"]
    ranges = [
        (c["annotations"]["explorer"]["start"], c["annotations"]["explorer"]["end"])
        for c in decoded["chunks"]
    ]
    assert ranges == [(c["start"], c["end"]) for c in chunks]
    assert [c["id"] for c in decoded["chunks"]] == [c["chunk_id"] for c in chunks]
    assert [
        (c["source_ref"]["start_unit_id"], c["source_ref"]["end_unit_id"])
        for c in decoded["chunks"]
    ] == [(c["start_line"], c["end_line"]) for c in chunks]


def test_no_content_title_or_path_in_any_map() -> None:
    for document, payload in every_map():
        text = dump_json(payload)
        assert document["path"] not in text
        index = build_index(
            [document],
            make_config(
                payload["requested_chunker"],
                payload["plan_annotations"]["explorer"]["config"]["max_chars"],
            ),
        )
        for chunk in index["chunks"]:
            # A piece as short as "or" or "///" may occur in the map's own keys and ids.
            if len(chunk["text"].strip()) >= 8:
                assert chunk["text"].strip() not in text
            if len(chunk["section_title"]) >= 8:
                assert chunk["section_title"] not in text
        assert "text" not in {key for c in payload["chunks"] for key in c}
        assert "Synthetic Aster" not in text


def recompute_plan(payload: Payload) -> None:
    payload["plan_digest"] = "sha256:" + digest(_plan(cast(ChunkMap, payload)))


def edit(change: Callable[[Payload], None], *, recompute: bool = True) -> Callable[[Payload], None]:
    def apply(payload: Payload) -> None:
        change(payload)
        if recompute:
            recompute_plan(payload)

    return apply


REFUSALS: dict[str, tuple[Callable[[Payload], None], str]] = {
    "unknown top-level field": (edit(lambda p: p.update(text="secret")), "text: unknown key"),
    "unknown chunk field": (
        edit(lambda p: p["chunks"][0].update(text="x")),
        "chunks[0].text: unknown key",
    ),
    "unknown source_ref field": (
        edit(lambda p: p["chunks"][0]["source_ref"].update(path="a.md")),
        "chunks[0].source_ref.path: unknown key",
    ),
    "unknown producer field": (
        edit(lambda p: p["producer"].update(llm=1)),
        "producer.llm: unknown key",
    ),
    "malformed id": (edit(lambda p: p["chunks"][0].update(id="XYZ")), "chunks[0].id: must be 64"),
    "malformed source digest": (edit(lambda p: p.update(source_digest="md5:00")), "source_digest"),
    "digest without prefix": (
        edit(lambda p: p.update(plan_digest="0" * 64), recompute=False),
        "plan_digest",
    ),
    "empty annotation namespace": (
        edit(lambda p: p["chunks"][0]["annotations"].update({"": 1})),
        "non-empty string",
    ),
    "annotations that are not an object": (
        edit(lambda p: p["chunks"][0].update(annotations=[1, 2])),
        "chunks[0].annotations",
    ),
    "wrong kind": (edit(lambda p: p.update(kind="source/lane")), "kind"),
    "non-contiguous indexes": (edit(lambda p: p["chunks"][1].update(index=2)), "indexes must run"),
    "duplicate ids": (
        edit(lambda p: p["chunks"][1].update(id=p["chunks"][0]["id"])),
        "repeats an earlier chunk's id",
    ),
    "unit count off": (
        edit(lambda p: p["chunks"][0].update(unit_count=9)),
        "unit_count does not match",
    ),
    "range ends before it starts": (
        edit(lambda p: p["chunks"][0]["source_ref"].update(start_unit_id=99)),
        "ends before it starts",
    ),
    "another source": (
        edit(lambda p: p["chunks"][0]["source_ref"].update(source_id="other")),
        "names another source",
    ),
    "plan edited, digest kept": (
        edit(lambda p: p["chunks"][0]["annotations"]["explorer"].update(start=52), recompute=False),
        "plan_digest does not match",
    ),
    "config edited, digest kept": (
        edit(
            lambda p: p["plan_annotations"]["explorer"]["config"].update(max_chars=300),
            recompute=False,
        ),
        "plan_digest does not match",
    ),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_decoder_refusals(name: str) -> None:
    change, detail = REFUSALS[name]
    payload = copy.deepcopy(every_map()[2][1])  # aster-copy-v1, heading-aware: 4 chunks
    change(payload)
    with pytest.raises(ExplorerError) as caught:
        decode_chunk_map(encoded(payload))
    assert caught.value.code is ErrorCode.INVALID_CHUNK_MAP
    assert detail in caught.value.detail


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b"", "empty"),
        (b"{", "not JSON"),
        (b'{"a": NaN}', "NaN is not JSON"),
        (b'{"a": 1, "a": 2}', "duplicate key"),
    ],
)
def test_not_json_is_refused(raw: bytes, detail: str) -> None:
    with pytest.raises(ExplorerError) as caught:
        decode_chunk_map(raw)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_MAP and detail in caught.value.detail


def test_trailing_content_is_refused() -> None:
    with pytest.raises(ExplorerError) as caught:
        decode_chunk_map(encoded(every_map()[0][1]) + b"{}")
    assert "content after the JSON value" in caught.value.detail


def test_a_consistent_map_of_another_config_fails_against_the_document() -> None:
    document, payload = every_map()[2]
    payload = copy.deepcopy(payload)
    payload["plan_annotations"]["explorer"]["config"]["max_chars"] = 1000
    recompute_plan(payload)
    decoded = decode_chunk_map(encoded(payload))
    with pytest.raises(ExplorerError) as caught:
        check_against(decoded, document)
    assert "is not what the document and config give" in caught.value.detail


def test_against_another_document_is_refused() -> None:
    payload, second = every_map()[0][1], every_map()[3][0]
    with pytest.raises(ExplorerError) as caught:
        check_against(cast(ChunkMap, payload), second)
    assert "not 'aster-copy-v2'" in caught.value.detail


def test_command_line_writes_checks_and_refuses(tmp_path: Path) -> None:
    result = run_cli("chunk-map", MANIFEST, "--policy", "heading-aware", "--out", tmp_path)
    assert result.code == 0, result.err
    written = sorted(tmp_path.glob("*/chunk-map.json"))
    assert [p.parent.name for p in written] == ["aster-copy-v1", "aster-copy-v2"]
    check = run_cli("chunk-map", MANIFEST, "--check", written[0])
    assert check.code == 0 and check.out.startswith("valid sha256:")
    payload = json.loads(written[0].read_text("utf-8"))
    payload["chunks"][0]["annotations"]["explorer"]["end"] += 1
    written[0].write_text(json.dumps(payload), "utf-8")
    refused = run_cli("chunk-map", "--check", written[0])
    assert refused.code == 1
    assert refused.err.startswith("error: invalid_chunk_map: plan_digest does not match")


def test_command_line_prints_maps_without_out() -> None:
    result = run_cli("chunk-map", MANIFEST, "--policy", "paragraph")
    assert result.code == 0
    assert [m["source_id"] for m in json.loads(result.out)] == ["aster-copy-v1", "aster-copy-v2"]


def test_maps_written_one_by_one_are_dump_json_of_the_list() -> None:
    """The list goes out map by map, byte for byte as `dump_json` writes it whole."""
    documents = fixture_documents()
    config = make_config("heading-aware", grammar="markdown")
    for chosen in (documents, documents[:1], []):
        pieces: list[bytes] = []
        write_chunk_maps(chosen, config, pieces.append)
        whole = [build_chunk_map(document, config) for document in chosen]
        assert b"".join(pieces).decode("utf-8") == dump_json(whole)
        assert len(pieces) == len(chosen) + 2  # never the list at once
    printed = run_cli("chunk-map", MANIFEST, "--policy", "paragraph")
    aster = load_documents(parse_manifest(MANIFEST.read_bytes()), DirectoryReader(MANIFEST.parent))
    config = make_config("paragraph")
    assert printed.out == dump_json([build_chunk_map(d, config) for d in aster.documents])


def test_command_line_needs_a_policy_or_a_check() -> None:
    result = run_cli("chunk-map", MANIFEST)
    assert result.code == 2 and result.err.startswith("error: usage: ")


def _heading_aware_map_of(document: DocumentRecord) -> Payload:
    return cast(Payload, copy.deepcopy(build_chunk_map(document, make_config("heading-aware"))))


# Each edit keeps the map self-consistent (its plan_digest recomputed) yet claims what the
# document does not give: only rebuilding and comparing the whole map refuses it.
WHOLE_PLAN_EDITS: dict[str, tuple[Callable[[Payload], None], str]] = {
    "requested chunker": (lambda p: p.update(requested_chunker="fixed-char"), "requested_chunker"),
    "grammar version": (
        lambda p: p["plan_annotations"]["explorer"].update(grammar_version=2),
        "plan_annotations",
    ),
    "another plan annotation": (
        lambda p: p["plan_annotations"].update(other={"claims": "anything"}),
        "plan_annotations",
    ),
    "chunk module": (lambda p: p["producer"].update(chunk_module="x.y"), "producer"),
    "another chunk annotation": (
        lambda p: p["chunks"][0]["annotations"].update(extra=1),
        "chunks[0]",
    ),
}


@pytest.mark.parametrize("name", list(WHOLE_PLAN_EDITS))
def test_check_against_compares_the_whole_plan(name: str) -> None:
    change, detail = WHOLE_PLAN_EDITS[name]
    document = every_map()[2][0]
    payload = _heading_aware_map_of(document)
    change(payload)
    recompute_plan(payload)
    decoded = decode_chunk_map(encoded(payload))  # consistent in itself
    with pytest.raises(ExplorerError) as caught:
        check_against(decoded, document)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_MAP
    assert caught.value.detail.startswith(detail)


def test_a_boolean_where_the_plan_has_an_integer_is_refused() -> None:
    """`==` holds false equal to 0: the map's own digest tells them apart."""
    document = every_map()[2][0]
    payload = _heading_aware_map_of(document)
    assert payload["chunks"][0]["annotations"]["explorer"]["section_ordinal"] == 0
    payload["chunks"][0]["annotations"]["explorer"]["section_ordinal"] = False
    assert _heading_aware_map_of(document) == payload
    recompute_plan(payload)
    with pytest.raises(ExplorerError) as caught:
        check_against(decode_chunk_map(encoded(payload)), document)
    assert caught.value.detail == "plan_digest is not what the document and config give"


HEADING_ONLY = b"# Title\n\n## Only headings\n"


def test_a_document_without_chunks_has_an_empty_map_everywhere(
    make_manifest: Callable[..., Path], tmp_path: Path
) -> None:
    manifest = make_manifest({"doc.md": b"# Title\n\nBody.\n", "empty.md": HEADING_ONLY})
    index = run_cli("index", manifest, "--policy", "paragraph")
    assert index.code == 0, index.err
    assert {c["source_id"] for c in index.json()["chunks"]} == {"doc"}
    out = tmp_path / "maps"
    written = run_cli("chunk-map", manifest, "--policy", "paragraph", "--out", out)
    assert (written.code, written.err) == (0, "")
    empty = out / "empty" / "chunk-map.json"
    assert json.loads(empty.read_text("utf-8"))["chunks"] == []
    checked = run_cli("chunk-map", manifest, "--check", empty)
    assert checked.code == 0, checked.err
    # An empty map of a document that has chunks is refused against it.
    payload = json.loads((out / "doc" / "chunk-map.json").read_text("utf-8"))
    payload["chunks"] = []
    recompute_plan(payload)
    (out / "doc" / "chunk-map.json").write_text(json.dumps(payload), "utf-8")
    refused = run_cli("chunk-map", manifest, "--check", out / "doc" / "chunk-map.json")
    assert refused.code == 1
    assert "the map has 0 chunks; the document gives 1" in refused.err


def test_too_many_chunks_in_a_map_is_refused_with_its_option(
    make_manifest: Callable[..., Path],
) -> None:
    manifest = make_manifest({"doc.md": b"# T\n\n" + b"a\n\n" * 30})
    result = run_cli("chunk-map", manifest, "--policy", "paragraph", "--max-document-chunks", "20")
    assert result.code == 2
    assert result.err.startswith("error: too_many_chunks: document 'doc' gives more than 20")
    assert "--max-document-chunks N" in result.err
    assert run_cli("chunk-map", manifest, "--policy", "paragraph").code == 0
