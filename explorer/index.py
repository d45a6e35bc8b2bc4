"""Chunk records and the tamper-evident index (SPEC §6)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, TypedDict

from .config import ChunkConfig
from .digests import digest, sha
from .documents import DocumentRecord
from .errors import ErrorCode, ExplorerError
from .grammar import sections
from .policies import policy_for

SCHEMA_VERSION = 1
EXECUTION_MODE = "offline-synthetic-source-processing"


class ChunkRecord(TypedDict):
    chunk_id: str
    source_id: str
    version: str
    document_revision: str
    section_id: str
    section_title: str
    order: int
    start: int
    end: int
    start_line: int
    end_line: int
    text: str
    text_sha256: str


class Index(TypedDict):
    schema_version: Literal[1]
    execution_mode: str
    config: dict[str, str | int | None]
    documents: list[DocumentRecord]
    chunks: list[ChunkRecord]
    index_id: str


class _LineCounter:
    """1-based line numbers by a cursor that only moves forward, so a document's chunks
    cost one pass over its text, not one scan from the top per chunk."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._offset = 0
        self._line = 1

    def line_at(self, offset: int) -> int:
        if offset < self._offset:  # never for ordered spans; correct regardless
            self._offset, self._line = 0, 1
        self._line += self._text.count("\n", self._offset, offset)
        self._offset = offset
        return self._line


def section_id(document_revision: str, heading_start: int) -> str:
    return digest({"document_revision": document_revision, "heading_start": heading_start})


def document_chunks(document: DocumentRecord, config: ChunkConfig) -> list[ChunkRecord]:
    """One document's chunks, in order, each with its content-derived `chunk_id`."""
    policy = policy_for(config)
    config_json = config.as_json()
    text = document["text"]
    revision = document["document_revision"]
    lines = _LineCounter(text)
    chunks: list[ChunkRecord] = []
    for section in sections(text):
        sid = section_id(revision, section.heading_start)
        for start, end in policy.spans(text, section, config):
            piece = text[start:end]
            start_line = lines.line_at(start)
            payload = {
                "source_id": document["source_id"],
                "version": document["version"],
                "document_revision": revision,
                "section_id": sid,
                "section_title": section.title,
                "order": len(chunks),
                "start": start,
                "end": end,
                "start_line": start_line,
                "end_line": lines.line_at(end - 1),
                "text": piece,
                "text_sha256": sha(piece),
            }
            chunk_id = digest({"config": config_json, **payload})
            chunks.append({"chunk_id": chunk_id, **payload})  # type: ignore[typeddict-item]
    return chunks


def build_index(documents: Iterable[DocumentRecord], config: ChunkConfig) -> Index:
    """Documents sorted by `source_id`, their chunks in that order, and an `index_id`
    that binds all of it."""
    ordered = sorted(documents, key=lambda d: d["source_id"])
    if not ordered:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )
    body = {
        "schema_version": SCHEMA_VERSION,
        "execution_mode": EXECUTION_MODE,
        "config": config.as_json(),
        "documents": ordered,
        "chunks": [chunk for document in ordered for chunk in document_chunks(document, config)],
    }
    return {**body, "index_id": digest(body)}  # type: ignore[typeddict-item]
