"""A column's chunks as a file another framework reads (`explorer export`): one JSON
object per line, one per chunk, in the index's order.

- `langchain`: `{"page_content", "metadata"}`, what `langchain_core`'s `Document(**obj)`
  takes; the metadata also holds LangChain's own `start_index`, so the file reads back
  as a chunk file (`--chunks`) at its offsets.
- `llamaindex`: `{"id_", "text", "start_char_idx", "end_char_idx", "metadata"}`, the
  fields of LlamaIndex's `TextNode`, `id_` the chunk's id.
- `jsonl`: the explorer's own chunk record, and the metadata beside it.

The metadata in each: source_id, version, start, end, chunk_id, index_id, order, the
heading path above the chunk (`headings`, outermost first), `pages` for a PDF's chunk,
and the column's config. The text is the document's own characters at [start, end).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NotRequired

import orjson
from typing_extensions import TypedDict

from ..grammars.outline import heading_paths
from ..models import strict_shape
from ..sources.documents import DocumentRecord
from .config import ChunkConfig, ConfigJson
from .index import ChunkRecord, section_id

ExportFormat = Literal["langchain", "llamaindex", "jsonl"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("langchain", "llamaindex", "jsonl")


@strict_shape
class ChunkMetadata(TypedDict):
    source_id: str
    version: str
    start: int
    end: int
    chunk_id: str
    index_id: str
    order: int
    headings: list[str]
    pages: NotRequired[list[int]]
    config: ConfigJson


def section_headings(document: DocumentRecord, config: ChunkConfig) -> dict[str, list[str]]:
    """Each section's heading path in `document`, by `section_id`, as the grammar that
    places `config`'s chunks reads the headings (text before the first heading: none)."""
    revision = document["document_revision"]
    paths = heading_paths(document["text"], config.grammar_name)
    return {section_id(revision, start): path for start, path in paths.items()}


def metadata(
    chunk: ChunkRecord, index_id: str, config: ConfigJson, headings: dict[str, list[str]]
) -> ChunkMetadata:
    found: ChunkMetadata = {
        "source_id": chunk["source_id"],
        "version": chunk["version"],
        "start": chunk["start"],
        "end": chunk["end"],
        "chunk_id": chunk["chunk_id"],
        "index_id": index_id,
        "order": chunk["order"],
        "headings": headings.get(chunk["section_id"], []),
        "config": config,
    }
    if "pages" in chunk:
        found["pages"] = chunk["pages"]
    return found


def _langchain(chunk: ChunkRecord, meta: ChunkMetadata) -> dict[str, object]:
    return {"page_content": chunk["text"], "metadata": {**meta, "start_index": chunk["start"]}}


def _llamaindex(chunk: ChunkRecord, meta: ChunkMetadata) -> dict[str, object]:
    return {
        "id_": chunk["chunk_id"],
        "text": chunk["text"],
        "start_char_idx": chunk["start"],
        "end_char_idx": chunk["end"],
        "metadata": meta,
    }


def _jsonl(chunk: ChunkRecord, meta: ChunkMetadata) -> dict[str, object]:
    return {**chunk, "metadata": meta}


SHAPES: dict[ExportFormat, Callable[[ChunkRecord, ChunkMetadata], dict[str, object]]] = {
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "jsonl": _jsonl,
}


def export_lines(
    shape: ExportFormat,
    document: DocumentRecord,
    chunks: list[ChunkRecord],
    config: ChunkConfig,
    index_id: str,
) -> bytes:
    """One document's chunks in `shape`, a JSON object per line (each ending in one)."""
    headings = section_headings(document, config)
    config_json = config.as_json()
    convert = SHAPES[shape]
    return b"".join(
        orjson.dumps(convert(chunk, metadata(chunk, index_id, config_json, headings))) + b"\n"
        for chunk in chunks
    )
