"""docs/contract.md §1 digests, and the fast encoder the index uses, held to the same bytes."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.digests import canonical_bytes, canonical_json, digest, sha

TEXT = st.text(st.characters(exclude_categories=["Cs"]))
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)


def test_digest_is_sha256_of_sorted_compact_unescaped_json() -> None:
    value = {"b": 1, "a": ["é", None, True], "c": {"y": "\n", "x": "☃"}}
    expected = '{"a":["é",null,true],"b":1,"c":{"x":"☃","y":"\\n"}}'
    assert canonical_json(value) == expected
    assert digest(value) == hashlib.sha256(expected.encode("utf-8")).hexdigest()
    assert sha("é") == hashlib.sha256("é".encode()).hexdigest()


def test_fast_encoder_writes_every_code_point_as_json_dumps_does() -> None:
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        character = chr(code)
        assert canonical_bytes(character) == canonical_json(character).encode(), hex(code)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_fast_encoder_equals_canonical_json(value: Any) -> None:
    assert canonical_bytes(value) == canonical_json(value).encode("utf-8")
