"""Content digests (SPEC §1): every identity in an index is derived from these two."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Keys sorted, no spaces, non-ASCII written as itself: the bytes that `digest` hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha(text: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 bytes of `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha_bytes(data: bytes) -> str:
    """Lower-case hex SHA-256 of raw bytes (a source file as it lies on disk)."""
    return hashlib.sha256(data).hexdigest()


def digest(value: Any) -> str:
    """Lower-case hex SHA-256 of the canonical JSON of `value`."""
    return sha(canonical_json(value))
