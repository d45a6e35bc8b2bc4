"""Chunk records and the tamper-evident index (SPEC §6)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Literal, TypedDict

from .config import ChunkConfig
from .digests import canonical_json, sha
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


# The hot path spells out `canonical_json` for the shapes it hashes, keys in sorted order;
# tests hold every id to `digest`. A chunk's fields (all but its id) are encoded once and
# serve both its `chunk_id` and the index's `index_id`.
_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes


def section_id(document_revision: str, heading_start: int) -> str:
    """`digest({"document_revision": …, "heading_start": …})`, spelled out (once per section)."""
    return sha(
        f'{{"document_revision":{_string(document_revision)},"heading_start":{heading_start}}}'
    )


def _id_prefix(config: ChunkConfig) -> bytes:
    """What every chunk id's canonical JSON starts with."""
    return ('{"config":' + canonical_json(config.as_json()) + ",").encode()


def _encoded_chunks(
    document: DocumentRecord, config: ChunkConfig, id_prefix: bytes
) -> tuple[list[ChunkRecord], list[bytes]]:
    """One document's chunk records, and each record's canonical JSON."""
    policy = policy_for(config)
    id_hash = hashlib.sha256(id_prefix)
    text = document["text"]
    source_id = document["source_id"]
    version = document["version"]
    revision = document["document_revision"]
    head = '"document_revision":' + _string(revision) + ',"end":'
    source = ',"source_id":' + _string(source_id) + ',"start":'
    tail = ',"version":' + _string(version) + "}"
    records: list[ChunkRecord] = []
    encoded: list[bytes] = []
    # Line numbers by a cursor that only moves forward: spans come in document order, so
    # counting newlines costs one pass over the text, not one scan from the top per chunk.
    line, line_offset = 1, 0
    for section in sections(text):
        sid = section_id(revision, section.heading_start)
        title = section.title
        middle = ',"section_id":"' + sid + '","section_title":' + _string(title) + source
        for start, end in policy.spans(text, section, config):
            piece = text[start:end]
            piece_sha = hashlib.sha256(piece.encode()).hexdigest()
            line += text.count("\n", line_offset, start)
            start_line = line
            line += text.count("\n", start, end - 1)
            line_offset = end - 1
            order = len(records)
            fields = (
                f'{head}{end},"end_line":{line},"order":{order}{middle}{start}'
                f',"start_line":{start_line},"text":{_string(piece)},"text_sha256":"{piece_sha}"'
                f"{tail}"
            ).encode()
            chunk_hash = id_hash.copy()
            chunk_hash.update(fields)
            chunk_id = chunk_hash.hexdigest()
            records.append(
                {
                    "chunk_id": chunk_id,
                    "source_id": source_id,
                    "version": version,
                    "document_revision": revision,
                    "section_id": sid,
                    "section_title": title,
                    "order": order,
                    "start": start,
                    "end": end,
                    "start_line": start_line,
                    "end_line": line,
                    "text": piece,
                    "text_sha256": piece_sha,
                }
            )
            encoded.append(b'{"chunk_id":"' + chunk_id.encode() + b'",' + fields)
    return records, encoded


def document_chunks(document: DocumentRecord, config: ChunkConfig) -> list[ChunkRecord]:
    """One document's chunks, in order, each with its content-derived `chunk_id`."""
    return _encoded_chunks(document, config, _id_prefix(config))[0]


def build_index(documents: Iterable[DocumentRecord], config: ChunkConfig) -> Index:
    """Documents sorted by `source_id`, their chunks in that order, and an `index_id`
    that binds all of it."""
    ordered = sorted(documents, key=lambda d: d["source_id"])
    if not ordered:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )
    config_json = config.as_json()
    chunks: list[ChunkRecord] = []
    encoded: list[bytes] = []
    id_prefix = _id_prefix(config)
    for document in ordered:
        records, parts = _encoded_chunks(document, config, id_prefix)
        chunks.extend(records)
        encoded.extend(parts)
    rest = {
        "config": config_json,
        "documents": ordered,
        "execution_mode": EXECUTION_MODE,
        "schema_version": SCHEMA_VERSION,
    }
    index_hash = hashlib.sha256(b'{"chunks":[')
    index_hash.update(b",".join(encoded))
    index_hash.update(("]," + canonical_json(rest)[1:]).encode())
    return {
        "schema_version": 1,
        "execution_mode": EXECUTION_MODE,
        "config": config_json,
        "documents": ordered,
        "chunks": chunks,
        "index_id": index_hash.hexdigest(),
    }
