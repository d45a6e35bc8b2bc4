"""Any bytes at a JSON edge end in an `ExplorerError` with its code, never anything else."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import ErrorCode, ExplorerError, make_config, parse_manifest, validate_index_bytes
from explorer.chunk_map import build_chunk_map, decode_chunk_map
from tests.conftest import MANIFEST, golden_index

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
    only_its_code(parse_manifest, ErrorCode.INVALID_MANIFEST,
                  json.dumps(_replace_somewhere(manifest, path, new)).encode())  # fmt: skip
    index = golden_index("heading-aware")
    only_its_code(
        validate_index_bytes,
        ErrorCode.INVALID_CHUNK_INDEX,
        json.dumps(_replace_somewhere(index, path, new)).encode(),
    )
    document = golden_index("heading-aware")["documents"][0]
    chunk_map = build_chunk_map(document, make_config("heading-aware"))
    only_its_code(decode_chunk_map, ErrorCode.INVALID_CHUNK_MAP,
                  json.dumps(_replace_somewhere(chunk_map, path, new)).encode())  # fmt: skip
