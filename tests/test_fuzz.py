"""Any bytes at a JSON edge end in an `ExplorerError` with its code, never anything else."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import (
    DirectoryReader,
    ErrorCode,
    ExplorerError,
    MappingReader,
    check_against_sources,
    load_documents,
    make_config,
    parse_manifest,
    validate_index,
    validate_index_bytes,
)
from explorer.checking.chunk_map import build_chunk_map, check_against, decode_chunk_map
from tests.conftest import MANIFEST, golden_index, run_cli, sha256_hex

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=15,
)
EDGES: list[tuple[Callable[[bytes], Any], ErrorCode]] = [
    (parse_manifest, ErrorCode.INVALID_MANIFEST),
    (validate_index_bytes, ErrorCode.INVALID_CHUNK_INDEX),
    (decode_chunk_map, ErrorCode.INVALID_CHUNK_MAP),
]


def only_its_code(edge: Callable[[bytes], Any], code: ErrorCode, data: bytes) -> None:
    try:
        edge(data)
    except ExplorerError as error:
        assert error.code is code
        assert error.detail


@pytest.mark.parametrize(("edge", "code"), EDGES)
@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_random_bytes(edge: Callable[[bytes], Any], code: ErrorCode, data: bytes) -> None:
    only_its_code(edge, code, data)


@pytest.mark.parametrize(("edge", "code"), EDGES)
@settings(max_examples=200, deadline=None)
@given(value=JSON)
def test_random_json(edge: Callable[[bytes], Any], code: ErrorCode, value: Any) -> None:
    only_its_code(edge, code, json.dumps(value).encode())


def _replace_somewhere(value: Any, path: list[int], new: Any) -> Any:
    """Swap one nested value (chosen by `path`) for `new`."""
    if not path or not isinstance(value, dict | list) or not value:
        return new
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    value[key] = _replace_somewhere(value[key], path[1:], new)
    return value


@settings(max_examples=300, deadline=None)
@given(path=st.lists(st.integers(0, 50), max_size=6), new=JSON)
def test_a_real_manifest_and_index_with_one_value_swapped(path: list[int], new: Any) -> None:
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    only_its_code(
        parse_manifest,
        ErrorCode.INVALID_MANIFEST,
        json.dumps(_replace_somewhere(manifest, path, new)).encode(),
    )
    index = golden_index("heading-aware")
    only_its_code(
        validate_index_bytes,
        ErrorCode.INVALID_CHUNK_INDEX,
        json.dumps(_replace_somewhere(index, path, new)).encode(),
    )
    document = golden_index("heading-aware")["documents"][0]
    chunk_map = build_chunk_map(document, make_config("heading-aware"))
    only_its_code(
        decode_chunk_map,
        ErrorCode.INVALID_CHUNK_MAP,
        json.dumps(_replace_somewhere(chunk_map, path, new)).encode(),
    )


# -- the hardened edges: numbers, command-line sizes, paths, checks against the sources ----

NUMBER = st.one_of(
    st.text("0123456789", min_size=1, max_size=6000),
    st.builds(
        lambda digits, exponent: f"{digits}e{exponent}",
        st.text("0123456789", min_size=1, max_size=5),
        st.integers(-400, 400),
    ),
    st.builds(
        lambda whole, fraction: f"-{whole}.{fraction}",
        st.text("0123456789", min_size=1, max_size=200),
        st.text("0123456789", min_size=1, max_size=200),
    ),
)
_NUMBER_TOKEN = re.compile(rb"(?<=: )-?\d+")


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, 10_000), number=NUMBER)
def test_any_number_in_a_real_artifact(which: int, number: str) -> None:
    """A huge, tiny or overflowing number where an index, manifest or map holds one."""
    index = json.dumps(golden_index("heading-aware"), indent=1).encode()
    document = golden_index("heading-aware")["documents"][0]
    chunk_map = json.dumps(build_chunk_map(document, make_config("heading-aware")), indent=1)
    for edge, code, data in (
        (validate_index_bytes, ErrorCode.INVALID_CHUNK_INDEX, index),
        (decode_chunk_map, ErrorCode.INVALID_CHUNK_MAP, chunk_map.encode()),
        (parse_manifest, ErrorCode.INVALID_MANIFEST, b'{"manifest_version": 1}'),
    ):
        tokens = list(_NUMBER_TOKEN.finditer(data))
        token = tokens[which % len(tokens)]
        only_its_code(edge, code, data[: token.start()] + number.encode() + data[token.end() :])


@settings(max_examples=150, deadline=None)
@given(
    option=st.sampled_from(
        ["--max-document-bytes", "--max-chunks", "--max-document-chunks", "--max-span-check-work"]
    ),
    value=st.one_of(st.text(max_size=30), NUMBER, st.integers().map(str)),
)
def test_any_size_on_the_command_line(option: str, value: str) -> None:
    result = run_cli("index", MANIFEST, "--policy", "paragraph", f"{option}={value}")
    assert result.code in (0, 2)
    if result.code:
        codes = ("usage", "too_many_chunks", "document_too_large")
        assert result.err.startswith(tuple(f"error: {code}: " for code in codes))


@settings(max_examples=200, deadline=None)
@given(path=st.text(st.sampled_from("./\\a~:b\x00 "), min_size=0, max_size=12))
def test_any_manifest_path(path: str) -> None:
    data = b"# T\n\nBody.\n"
    entry = {"source_id": "a", "version": "1", "path": path, "sha256": sha256_hex(data)}
    raw = json.dumps({"manifest_version": 1, "documents": [entry]}).encode()
    try:
        manifest = parse_manifest(raw)
    except ExplorerError as error:
        assert error.code is ErrorCode.INVALID_MANIFEST
        return
    load = load_documents(manifest, MappingReader({"a.md": data, "a/b": data}))
    assert [s.status != "ok" or s.path in ("a.md", "a/b") for s in load.statuses] == [True]


@settings(max_examples=150, deadline=None)
@given(path=st.lists(st.integers(0, 50), max_size=6), new=JSON)
def test_a_swapped_value_against_the_sources(path: list[int], new: Any) -> None:
    """Whatever gets past `validate` is then held against the fixture's files."""
    load = load_documents(parse_manifest(MANIFEST.read_bytes()), DirectoryReader(MANIFEST.parent))
    index = _replace_somewhere(golden_index("heading-aware"), path, new)
    try:
        check_against_sources(validate_index(index)["documents"], load)
    except ExplorerError as error:
        assert error.code is ErrorCode.INVALID_CHUNK_INDEX
    document = golden_index("heading-aware")["documents"][0]
    chunk_map = _replace_somewhere(
        build_chunk_map(document, make_config("heading-aware")), path, new
    )
    try:
        check_against(decode_chunk_map(json.dumps(chunk_map).encode()), document)
    except ExplorerError as error:
        assert error.code is ErrorCode.INVALID_CHUNK_MAP
