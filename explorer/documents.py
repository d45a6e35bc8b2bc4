"""Document records (SPEC §3): a manifest entry, its normalized text, and its revision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict, cast

from .digests import digest, sha


class DocumentRecord(TypedDict):
    source_id: str
    version: str
    path: str
    sha256: str
    title: NotRequired[str]
    url: NotRequired[str]
    fact_status: NotRequired[str]
    access_scope: NotRequired[str]
    text: str
    normalized_text_sha256: str
    document_revision: str


def revision_of(record: Mapping[str, object]) -> str:
    """The digest of everything in the record but its text and the revision itself."""
    return digest({k: v for k, v in record.items() if k not in ("text", "document_revision")})


def document_record(fields: Mapping[str, str], text: str) -> DocumentRecord:
    """Every manifest field as given, the normalized text, and the identities derived."""
    record: dict[str, str] = {**fields, "text": text, "normalized_text_sha256": sha(text)}
    record["document_revision"] = revision_of(record)
    return cast(DocumentRecord, record)
