"""The accepted chunk map: where a policy's chunks lie in one document, without its content.

A `chunk-map.json` names each chunk by id, order and the source lines it spans, and keeps
the character offsets and section ordinal as annotations under our namespace. It carries
no chunk text, section title or file path, so a boundary plan can be shared without the
document; held against the document, it rebuilds the same ranges.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field, TypeAdapter
from typing_extensions import TypedDict

from ..chunking.config import ChunkConfig, grammar_for
from ..chunking.index import document_chunks, section_id
from ..chunking.policies import parse_config, policy_for
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..jsonio import parse_json, require_counts
from ..limits import (
    DEFAULT_LIMITS,
    Limits,
    require_chunks_per_document,
    require_chunks_per_index,
    too_many_chunks,
)
from ..models import Count, Hex64, PlainText, strict_shape, validated
from ..sources.documents import DocumentRecord

KIND: Final = "source/chunk-map"
LOGICAL_FILE = "chunk-map.json"
SCHEMA_ID: Final = "explorer.source.chunk_map"
SCHEMA_NAME: Final = "explorer_source_chunk_map_v1"
SCHEMA_VERSION: Final = "v1"
MEDIA_TYPE: Final = "application/json"
NAMESPACE = "explorer"
INPUT_MODULE = "explorer.sources.loading"

Digest = Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
UnitId = Annotated[int, Field(ge=1)]


def _check_annotations(value: dict[str, Any]) -> dict[str, Any]:
    """Values are any JSON (the strict parser already refused NaN and duplicate keys);
    namespaces must be non-empty."""
    if any(not namespace for namespace in value):
        raise ValueError("an annotation namespace must be a non-empty string")
    return value


Annotations = Annotated[
    dict[str, Any],
    AfterValidator(_check_annotations),
    Field(json_schema_extra={"propertyNames": {"minLength": 1}}),
]

# The map's shapes, declared once: `build_chunk_map` builds them as plain dicts, and
# `decode_chunk_map` and the JSON Schema check them through pydantic.


@strict_shape
class SourceRef(TypedDict):
    source_id: PlainText
    start_unit_id: Annotated[UnitId, Field(description="First source line, 1-based, inclusive.")]
    end_unit_id: Annotated[UnitId, Field(description="Last source line, 1-based, inclusive.")]


@strict_shape
class MapChunk(TypedDict):
    id: Hex64
    index: Count
    source_ref: SourceRef
    unit_count: UnitId
    annotations: Annotations


@strict_shape
class Producer(TypedDict):
    input_module: PlainText
    chunk_module: PlainText


@strict_shape
class ChunkMap(TypedDict):
    """The strict wire shape of `chunk-map.json`."""

    kind: Literal["source/chunk-map"]
    schema_id: Literal["explorer.source.chunk_map"]
    schema_name: Literal["explorer_source_chunk_map_v1"]
    schema_version: Literal["v1"]
    media_type: Literal["application/json"]
    source_id: PlainText
    source_digest: Annotated[
        Digest, Field(description="sha256: and the SHA-256 of the source bytes.")
    ]
    plan_digest: Annotated[Digest, Field(description="sha256: and the digest of the logical plan.")]
    requested_chunker: PlainText
    producer: Producer
    plan_annotations: Annotations
    chunks: Annotated[
        list[MapChunk],
        Field(description="Empty when the document has no chunk under the policy (headings only)."),
    ]


_CHUNK_MAP = TypeAdapter(ChunkMap)


def _plan(payload: ChunkMap) -> dict[str, Any]:
    """The logical plan: the plan annotations (which hold the config) and every chunk's
    range and annotations. Ids and module names are not part of it."""
    return {
        "plan_annotations": payload["plan_annotations"],
        "chunks": [
            {
                "source_ref": chunk["source_ref"],
                "unit_count": chunk["unit_count"],
                "annotations": chunk["annotations"],
            }
            for chunk in payload["chunks"]
        ],
    }


def build_chunk_map(
    document: DocumentRecord, config: ChunkConfig, limits: Limits = DEFAULT_LIMITS
) -> ChunkMap:
    """The chunk map of one document under one config; a document with no chunk under it
    (only headings) has a map with no chunks, as its index holds none."""
    chunks = document_chunks(document, config, limits)
    revision = document["document_revision"]
    grammar = grammar_for(config)
    section_ordinal = {
        section_id(revision, section.heading_start): ordinal
        for ordinal, section in enumerate(grammar.sections(document["text"]))
    }
    payload: ChunkMap = {
        "kind": KIND,
        "schema_id": SCHEMA_ID,
        "schema_name": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "media_type": MEDIA_TYPE,
        "source_id": document["source_id"],
        "source_digest": f"sha256:{document['sha256']}",
        "plan_digest": "",
        "requested_chunker": config.strategy,
        "producer": {"input_module": INPUT_MODULE, "chunk_module": _chunk_module(config)},
        "plan_annotations": {NAMESPACE: {"config": config.as_json(), **grammar.annotation}},
        "chunks": [
            {
                "id": chunk["chunk_id"],
                "index": chunk["order"],
                "source_ref": {
                    "source_id": chunk["source_id"],
                    "start_unit_id": chunk["start_line"],
                    "end_unit_id": chunk["end_line"],
                },
                "unit_count": chunk["end_line"] - chunk["start_line"] + 1,
                "annotations": {
                    NAMESPACE: {
                        "start": chunk["start"],
                        "end": chunk["end"],
                        "section_ordinal": section_ordinal[chunk["section_id"]],
                        **({"pages": chunk["pages"]} if "pages" in chunk else {}),
                    }
                },
            }
            for chunk in chunks
        ],
    }
    payload["plan_digest"] = "sha256:" + digest(_plan(payload))
    return payload


def chunk_maps(
    documents: Iterable[DocumentRecord], config: ChunkConfig, limits: Limits = DEFAULT_LIMITS
) -> Iterator[ChunkMap]:
    """Each document's chunk map, one at a time, within one run's chunk limit (as one
    index's)."""
    count = 0
    for document in documents:
        payload = build_chunk_map(document, config, limits)
        count += len(payload["chunks"])
        require_chunks_per_index(count, limits)
        yield payload


def write_chunk_maps(
    documents: Iterable[DocumentRecord],
    config: ChunkConfig,
    write: Callable[[bytes], object],
    limits: Limits = DEFAULT_LIMITS,
) -> None:
    """`dump_json` of the list of every document's chunk map, as bytes passed to `write`
    map by map, so the list is never held as text."""
    write(b"[")
    written = False
    for payload in chunk_maps(documents, config, limits):
        # The list's items, as `dump_json` indents them one level deeper (a JSON string
        # holds no raw line break).
        text = json.dumps(payload, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        write((",\n  " if written else "\n  ").encode() + text.encode())
        written = True
    write(b"\n]\n" if written else b"]\n")


def _chunk_module(config: ChunkConfig) -> str:
    return type(policy_for(config)).__module__


def _refuse(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.INVALID_CHUNK_MAP, detail)


def decode_chunk_map(data: bytes, limits: Limits = DEFAULT_LIMITS) -> ChunkMap:
    """Bytes of a `chunk-map.json` to its payload, refusing anything not exactly right."""
    require_counts(
        data,
        ErrorCode.INVALID_CHUNK_MAP,
        "chunk map",
        limits.chunks_per_document,
        lambda: too_many_chunks(
            "the chunk map", limits.chunks_per_document, "--max-document-chunks"
        ),
        inner=True,
    )
    raw = parse_json(data, ErrorCode.INVALID_CHUNK_MAP, "chunk map")
    payload = validated(_CHUNK_MAP.validate_python, raw, ErrorCode.INVALID_CHUNK_MAP)
    require_chunks_per_document(payload["source_id"], len(payload["chunks"]), limits)
    seen: set[str] = set()
    for position, chunk in enumerate(payload["chunks"]):
        where = f"chunks[{position}]"
        if chunk["index"] != position:
            raise _refuse(f"{where}.index is {chunk['index']}: indexes must run 0, 1, 2, …")
        if chunk["id"] in seen:
            raise _refuse(f"{where}.id repeats an earlier chunk's id")
        seen.add(chunk["id"])
        ref = chunk["source_ref"]
        if ref["source_id"] != payload["source_id"]:
            raise _refuse(f"{where}.source_ref names another source")
        if ref["end_unit_id"] < ref["start_unit_id"]:
            raise _refuse(f"{where}.source_ref ends before it starts")
        if chunk["unit_count"] != ref["end_unit_id"] - ref["start_unit_id"] + 1:
            raise _refuse(f"{where}.unit_count does not match its source_ref")
    if payload["plan_digest"] != "sha256:" + digest(_plan(payload)):
        raise _refuse("plan_digest does not match the plan the map describes")
    return payload


def map_config(payload: ChunkMap) -> ChunkConfig:
    """The config a decoded map was made with, from its plan annotations."""
    ours = payload["plan_annotations"].get(NAMESPACE)
    if not isinstance(ours, dict) or "config" not in ours:
        raise _refuse(f"plan_annotations.{NAMESPACE}.config is missing")
    try:
        return parse_config(ours["config"])
    except ExplorerError as error:
        raise _refuse(f"plan_annotations.{NAMESPACE}.config: {error.detail}") from None


def check_against(
    payload: ChunkMap, document: DocumentRecord, limits: Limits = DEFAULT_LIMITS
) -> None:
    """Refuse a decoded map unless its document rebuilds exactly the same map: every key,
    the requested chunker, producer and plan annotations as much as the chunks."""
    if payload["source_id"] != document["source_id"]:
        raise _refuse(f"the map is of {payload['source_id']!r}, not {document['source_id']!r}")
    if payload["source_digest"] != f"sha256:{document['sha256']}":
        raise _refuse("source_digest is not the SHA-256 of this document")
    expected = build_chunk_map(document, map_config(payload), limits)
    got_chunks, want_chunks = payload["chunks"], expected["chunks"]
    for position, (got, want) in enumerate(zip(got_chunks, want_chunks, strict=False)):
        if got != want:
            raise _refuse(f"chunks[{position}] is not what the document and config give")
    if len(got_chunks) != len(want_chunks):
        raise _refuse(
            f"the map has {len(got_chunks)} chunks; the document gives {len(want_chunks)}"
        )
    # `==` holds 1 equal to true and 1.0; the digests of the two plans tell them apart.
    given: Mapping[str, object] = payload
    for key, value in sorted(expected.items(), key=lambda item: item[0] == "plan_digest"):
        if given[key] != value:
            raise _refuse(f"{key} is not what the document and config give")
