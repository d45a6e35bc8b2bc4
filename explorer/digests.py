"""Content digests (docs/contract.md §1): every identity in an index is derived from these two."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson


def canonical_json(value: Any) -> str:
    """Keys sorted, no spaces, non-ASCII written as itself: the text that `digest` hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value)` as UTF-8, several times faster, for the index's hot path.

    Only for values of strings, small ints, booleans and null (as an index's are): there
    the C encoder writes the same bytes, which tests check over every code point and over
    generated values. Floats and huge ints would differ or fail, so `digest` does not use it.
    """
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def sha(text: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha_bytes(data: bytes) -> str:
    """Lower-case hex SHA-256 of raw bytes (a source file as it lies on disk)."""
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """Lower-case hex SHA-256 of the canonical JSON of `value`."""
    return sha(canonical_json(value))
