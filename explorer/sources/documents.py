"""Document records (docs/contract.md §3): a manifest entry, its normalized text, and its
revision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from ..digests import digest, sha
from ..models import Hex64, NonEmpty, strict_shape
from .manifest import ManifestDocument


@strict_shape
class DocumentRecord(ManifestDocument):
    """A loaded document, as the core passes it around and as an index holds it: the
    manifest's fields as given, the normalized text, and the digests derived from them.
    One declaration serves both: a plain dict in the hot path, validated at the edge."""

    text: NonEmpty
    normalized_text_sha256: Hex64
    document_revision: Hex64


def revision_of(record: Mapping[str, object]) -> str:
    """The digest of everything in the record but its text and the revision itself."""
    return digest({k: v for k, v in record.items() if k not in ("text", "document_revision")})


def document_record(
    fields: Mapping[str, object], text: str, text_sha256: str | None = None
) -> DocumentRecord:
    """Every manifest field as given, the normalized text, and the identities derived
    (`text_sha256`, `sha(text)`, when the caller has it already)."""
    text_sha256 = sha(text) if text_sha256 is None else text_sha256
    record: dict[str, object] = {**fields, "text": text, "normalized_text_sha256": text_sha256}
    record["document_revision"] = revision_of(record)
    return cast(DocumentRecord, record)
