"""Document records (docs/contract.md §3): a manifest entry, its normalized text, and its
revision."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, NotRequired, cast

from pydantic import Field

from ..digests import digest, sha
from ..models import Count, Hex64, NonEmpty, strict_shape
from .convert import Converted, Converter, ConverterInfo
from .manifest import ManifestDocument


@strict_shape
class DocumentRecord(ManifestDocument):
    """A loaded document, as the core passes it around and as an index holds it: the
    manifest's fields as given, the normalized text, and the digests derived from them.
    One declaration serves both: a plain dict in the hot path, validated at the edge."""

    text: NonEmpty
    normalized_text_sha256: Hex64
    document_revision: Hex64
    converter: NotRequired[
        Annotated[
            ConverterInfo,
            Field(description="What made the text of a PDF, Word or HTML file; absent for text."),
        ]
    ]
    page_starts: NotRequired[
        Annotated[
            list[Count],
            Field(description="A PDF's pages: the character offset where each starts, in order."),
        ]
    ]


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


def converted_fields(converter: Converter, converted: Converted) -> dict[str, object]:
    """What a converted file's record holds besides the manifest's fields: its converter,
    and where each page starts when the file has pages."""
    fields: dict[str, object] = {"converter": converter.info()}
    if converted.page_starts is not None:
        fields["page_starts"] = list(converted.page_starts)
    return fields
