"""Index validation (SPEC §6): accept only what the core itself would rebuild."""

from __future__ import annotations

from typing import Annotated, Literal, NoReturn, cast

from pydantic import Field, ValidationError

from .config import ChunkConfig
from .digests import sha
from .documents import revision_of
from .errors import ErrorCode, ExplorerError
from .grammar import require_heading
from .index import EXECUTION_MODE, ChunkRecord, Index, build_index
from .jsonio import parse_json
from .manifest import ManifestDocument
from .models import Hex64, PlainText, StrictModel, VersionOne, describe
from .policies import parse_config

Count = Annotated[int, Field(ge=0)]
LineNumber = Annotated[int, Field(ge=1)]


class IndexDocument(ManifestDocument):
    text: str = Field(min_length=1)
    normalized_text_sha256: Hex64
    document_revision: Hex64


class IndexChunk(StrictModel):
    chunk_id: Hex64
    source_id: PlainText
    version: PlainText
    document_revision: Hex64
    section_id: Hex64
    section_title: str = Field(min_length=1)
    order: Count
    start: Count
    end: Count
    start_line: LineNumber
    end_line: LineNumber
    text: str = Field(min_length=1)
    text_sha256: Hex64


class IndexModel(StrictModel):
    """The wire shape of an index; `validate_index` also checks every derivation."""

    schema_version: VersionOne
    execution_mode: Literal["offline-synthetic-source-processing"]
    config: ChunkConfig
    documents: list[IndexDocument] = Field(min_length=1)
    chunks: list[IndexChunk]
    index_id: Hex64


def _refuse(detail: str) -> NoReturn:
    raise ExplorerError(ErrorCode.INVALID_CHUNK_INDEX, detail)


def _check_documents(index: Index) -> None:
    seen_paths: set[str] = set()
    previous = ""
    for i, doc in enumerate(index["documents"]):
        where = f"documents[{i}] ({doc['source_id']!r})"
        if doc["source_id"] <= previous:
            _refuse(f"{where}: documents must be sorted by source_id, without repeats")
        previous = doc["source_id"]
        if doc["path"] in seen_paths:
            _refuse(f"{where}: duplicate path {doc['path']!r}")
        seen_paths.add(doc["path"])
        text = doc["text"]
        if "\x00" in text or "\r" in text or text.isspace():
            _refuse(f"{where}: text must be normalized: not blank, no NUL, no carriage return")
        if doc["normalized_text_sha256"] != sha(text):
            _refuse(f"{where}: normalized_text_sha256 is not the SHA-256 of its text")
        if doc["document_revision"] != revision_of(doc):
            _refuse(f"{where}: document_revision does not recompute from the record")


def _difference(i: int, got: ChunkRecord, want: ChunkRecord) -> str:
    # Name the field a person edited before the ids that merely follow from it.
    order = [key for key in want if key not in ("text_sha256", "chunk_id")]
    fields = [*order, "text_sha256", "chunk_id"]
    field = next(key for key in fields if got[key] != want[key])  # type: ignore[literal-required]
    where = f"chunks[{i}].{field}"
    if field == "text":
        return f"{where} is not the source text at [{want['start']}, {want['end']})"
    value = want[field]  # type: ignore[literal-required]
    if isinstance(value, int):
        return f"{where} is {got[field]}, but the documents and config give {value}"  # type: ignore[literal-required]
    return f"{where} does not match what the documents and config give"


def _rebuild(index: Index, config: ChunkConfig) -> Index:
    for i, doc in enumerate(index["documents"]):
        try:
            require_heading(doc["text"])
        except ExplorerError as error:
            _refuse(f"documents[{i}]: {error.detail}")
    return build_index(index["documents"], config)


def _check_chunks(actual: list[ChunkRecord], expected: list[ChunkRecord]) -> None:
    for i, (got, want) in enumerate(zip(actual, expected, strict=False)):
        if got != want:
            _refuse(_difference(i, got, want))
    if len(actual) != len(expected):
        _refuse(
            f"the index has {len(actual)} chunks; its documents and config give {len(expected)}"
        )


def validate_index(raw: object) -> Index:
    """Return the index unchanged if every key, type and derivation checks out."""
    try:
        IndexModel.model_validate(raw)
    except ValidationError as error:
        _refuse(describe(error))
    index = cast(Index, raw)
    try:
        config = parse_config(index["config"])
    except ExplorerError as error:
        _refuse(f"config: {error.detail}")
    _check_documents(index)
    expected = _rebuild(index, config)
    _check_chunks(index["chunks"], expected["chunks"])
    # Every other key is now known equal to the rebuilt one, so their ids must agree.
    if index["index_id"] != expected["index_id"]:
        _refuse("index_id does not match the index's content (stale or forged)")
    return index


def validate_index_bytes(data: bytes) -> Index:
    """A file's bytes to a validated index: not-JSON is refused like any tampering."""
    return validate_index(parse_json(data, ErrorCode.INVALID_CHUNK_INDEX, "index file"))


__all__ = ["EXECUTION_MODE", "IndexModel", "validate_index", "validate_index_bytes"]
