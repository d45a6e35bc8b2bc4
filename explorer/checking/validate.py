"""Index validation (docs/contract.md §6): accept only what the core itself would rebuild."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from hashlib import sha256
from typing import BinaryIO, NamedTuple, cast

from pydantic import TypeAdapter

from ..chunking.config import ChunkConfig, grammar_for
from ..chunking.index import (
    CHUNKS_HEAD,
    EXECUTION_MODE,
    INDEX_ID_HEAD,
    ChunkRecord,
    Index,
    chunk_id_prefix,
    chunk_stream,
    index_foot,
    index_head,
    index_id_tail,
    write_index,
)
from ..chunking.policies import LIBRARY_CALL_CODES, parse_config
from ..digests import sha
from ..errors import ErrorCode, ExplorerError
from ..grammars.v1 import Span
from ..jsonio import parse_json, require_counts
from ..limits import DEFAULT_LIMITS, Limits, require_chunks_per_index, too_many_chunks
from ..models import validated
from ..sources.documents import DocumentRecord, revision_of
from ..sources.loading import LoadResult, read_at_most
from ..sources.manifest import MAX_DOCUMENTS, normal_path
from ..workers import IN_TURN, Spread

# Refusals of a library or an embedder the rebuild calls, not of the index.
_CALL_CODES = LIBRARY_CALL_CODES | {ErrorCode.INVALID_EMBEDDER, ErrorCode.EMBEDDING_FAILED}
# The index's one declaration (explorer/index.py), as validators.
_INDEX = TypeAdapter(Index)
_CHUNK = TypeAdapter(ChunkRecord)


def _refuse(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.INVALID_CHUNK_INDEX, detail)


def _check_documents(index: Index) -> None:
    seen_paths: set[str] = set()
    previous = ""
    for i, doc in enumerate(index["documents"]):
        where = f"documents[{i}] ({doc['source_id']!r})"
        if doc["source_id"] <= previous:
            raise _refuse(f"{where}: documents must be sorted by source_id, without repeats")
        previous = doc["source_id"]
        path = normal_path(doc["path"])
        if path in seen_paths:
            raise _refuse(f"{where}: duplicate path {doc['path']!r}")
        seen_paths.add(path)
        text = doc["text"]
        if "\x00" in text or "\r" in text or text.isspace():
            raise _refuse(
                f"{where}: text must be normalized: not blank, no NUL, no carriage return"
            )
        if doc["normalized_text_sha256"] != sha(text):
            raise _refuse(f"{where}: normalized_text_sha256 is not the SHA-256 of its text")
        if doc["document_revision"] != revision_of(doc):
            raise _refuse(f"{where}: document_revision does not recompute from the record")


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


def _same_chunk(got: ChunkRecord, want: ChunkRecord) -> bool:
    """Equal, and of the same JSON types (`==` holds 1 equal to 1.0 and to true)."""
    return got == want and (
        type(got["order"])
        is type(got["start"])
        is type(got["end"])
        is type(got["start_line"])
        is type(got["end_line"])
        is int
    )


def _chunk_refusal(i: int, got: object, want: ChunkRecord) -> ExplorerError:
    """Name what is wrong with a chunk that differs: its shape first, then its values."""
    validated(_CHUNK.validate_python, got, ErrorCode.INVALID_CHUNK_INDEX, at=("chunks", i))
    return _refuse(_difference(i, cast(ChunkRecord, got), want))


def _imported_spans(chunks: list[ChunkRecord]) -> dict[str, list[Span]]:
    """An imported index's spans are its own (the chunk file is not at hand): each must be
    a span of its document, in document order; all else is rebuilt from them."""
    spans: dict[str, list[Span]] = {}
    for i, chunk in enumerate(chunks):
        start, end = chunk.get("start"), chunk.get("end")
        if not (type(start) is int and type(end) is int and 0 <= start < end):
            raise _refuse(f"chunks[{i}]: start and end must be whole numbers, 0 <= start < end")
        placed = spans.setdefault(str(chunk.get("source_id")), [])
        if placed and placed[-1] > (start, end):
            raise _refuse(f"chunks[{i}]: an imported index's chunks are in document order")
        placed.append((start, end))
    return spans


def _check_chunks(index: Index, config: ChunkConfig, limits: Limits) -> str:
    """Rebuild document by document, chunk by chunk, and refuse at the first difference,
    so no second index is ever held; return the `index_id` the chunks give."""
    actual = index["chunks"]
    require_chunks_per_index(len(actual), limits)
    id_prefix = chunk_id_prefix(config)
    index_hash = sha256(INDEX_ID_HEAD)
    i = 0
    grammar = grammar_for(config)
    given = _imported_spans(actual) if config.chunk_file is not None else None
    ours = given is None and config.library is None  # whole-document spans need no heading
    for position, document in enumerate(index["documents"]):
        try:
            if ours:
                grammar.admit(document["text"])
        except ExplorerError as error:
            raise _refuse(f"documents[{position}]: {error.detail}") from None
        spans = None if given is None else given.get(document["source_id"], [])
        for want, encoded in chunk_stream(document, config, id_prefix, limits, spans):
            if i == len(actual):
                raise _refuse(f"the index has {i} chunks; its documents and config give more")
            got = actual[i]
            if not _same_chunk(got, want):
                raise _chunk_refusal(i, got, want)
            index_hash.update(b"," + encoded if i else encoded)
            i += 1
    if i != len(actual):
        raise _refuse(f"the index has {len(actual)} chunks; its documents and config give {i}")
    index_hash.update(index_id_tail(config, index["documents"]))
    return index_hash.hexdigest()


def _check_shape(raw: object) -> Index:
    """Every key and type but the chunks', which are compared one by one with the rebuilt
    chunks instead (a chunk that differs is then checked for its shape)."""
    frame = raw
    if isinstance(raw, dict) and isinstance(raw.get("chunks"), list):
        frame = {**raw, "chunks": []}
    validated(_INDEX.validate_python, frame, ErrorCode.INVALID_CHUNK_INDEX)
    return cast(Index, raw)


def validate_index(raw: object, limits: Limits = DEFAULT_LIMITS) -> Index:
    """Return the index unchanged if every key, type and derivation checks out.

    This proves the index consistent with itself: the documents it holds give exactly
    its chunks and ids. `check_against_sources` also ties the documents to their files.
    """
    index = _check_shape(raw)
    try:
        config = parse_config(index["config"])
    except ExplorerError as error:
        raise _refuse(f"config: {error.detail}") from None
    _check_documents(index)
    # Every other key is now known equal to the rebuilt one, so their ids must agree.
    if index["index_id"] != _check_chunks(index, config, limits):
        raise _refuse("index_id does not match the index's content (stale or forged)")
    return index


class _Differs(Exception):
    pass


class _SameBytes:
    """A `write` for `write_index` that compares what it is given with the bytes that
    `read` returns instead, and stops it at the first difference."""

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self.read = read

    def write(self, piece: bytes) -> None:
        if self.read(len(piece)) != piece:
            raise _Differs


def _rebuilds_to(
    frame: object,
    chunk_count: int,
    read: Callable[[int], bytes],
    limits: Limits,
    spread: Spread = IN_TURN,
) -> Index | None:
    """The index `frame` (an index's keys with its chunks, or with none when they are
    not parsed) when `read` gives byte for byte what `write_index` writes for its
    documents and config, after the checks of `validate_index` that the rebuild does
    not make; else None, and the strict path decides and names the difference.

    Equal bytes hold exactly the chunks and `index_id` the core rebuilds, and no
    duplicate key, NaN, long number or lone surrogate (the writer writes none), so the
    C parser reads them without the strict parser's Python call for each key and number.
    """
    same = _SameBytes(read)
    try:
        index = _check_shape(frame)
        config = parse_config(index["config"])
        _check_documents(index)
        given = _imported_spans(index["chunks"]) if config.chunk_file is not None else None
        # A rebuild that gives more chunks than the file holds stops there, as the strict
        # path's does: a long text under `max_chars: 1` is never chunked whole.
        within = replace(
            limits,
            chunks_per_document=min(limits.chunks_per_document, chunk_count),
            chunks_per_index=min(limits.chunks_per_index, chunk_count),
        )
        write_index(
            index["documents"], config, same.write, limits=within, given=given, spread=spread
        )
    except ExplorerError as error:
        if error.code in _CALL_CODES:  # the strict path would only call it again
            raise
        return None
    except (_Differs, ValueError):  # ValueError: a lone surrogate
        return None
    return index if not read(1) else None


def _as_written(data: bytes, limits: Limits) -> Index | None:
    """`_rebuilds_to` of a whole index in memory."""
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("chunks"), list):
        return None
    return _rebuilds_to(raw, len(raw["chunks"]), io.BytesIO(data).read, limits)


def validate_index_bytes(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Index:
    """A file's bytes to a validated index: not-JSON is refused like any tampering.
    Counted before it is parsed: at most `chunks_per_index` chunks (and `MAX_DOCUMENTS`
    documents)."""
    require_counts(
        data,
        ErrorCode.INVALID_CHUNK_INDEX,
        "index file",
        limits.chunks_per_index + MAX_DOCUMENTS,
        lambda: too_many_chunks("the index", limits.chunks_per_index, "--max-chunks"),
        inner=True,
    )
    written = _as_written(data, limits)
    if written is not None:
        return written
    return validate_index(parse_json(data, ErrorCode.INVALID_CHUNK_INDEX, "index file"), limits)


class ValidatedFile(NamedTuple):
    """A valid index file's config, documents and `index_id`, and how many chunks it
    holds (each proved to be what the documents and config rebuild, none kept)."""

    config: ChunkConfig
    documents: list[DocumentRecord]
    index_id: str
    chunk_count: int

    @classmethod
    def of(cls, index: Index) -> ValidatedFile:
        config = parse_config(index["config"])
        return cls(config, index["documents"], index["index_id"], len(index["chunks"]))


# Where `write_index`'s frame puts the chunks: after a line of its own, and before a
# foot of fixed length (`index_foot`).
_CHUNKS_LINE = CHUNKS_HEAD.rsplit(b"\n", 1)[1] + b"\n"
_HEAD_START = index_head(b"{}").split(b'"config":')[0]
_FOOT_BYTES = len(index_foot("0" * 64))
_COUNT_PIECE = 64 * 1024


def _streamed(handle: BinaryIO, limits: Limits, most: int, spread: Spread) -> ValidatedFile | None:
    """`_rebuilds_to` of an index file read as it is compared, its chunks never parsed
    nor held: memory for its documents (at most `most` bytes of their JSON, else
    `document_too_large`), whatever the number of its chunks. None when the file is not
    laid out as `write_index` writes it (a line of each document)."""
    if handle.read(len(_HEAD_START)) != _HEAD_START:  # not even the writer's first bytes
        return None
    handle.seek(0)
    frame: list[bytes] = []
    held = 0
    for line in iter(partial(handle.readline, most + 1 - held), b""):
        held += len(line)
        if held > most:
            raise ExplorerError(
                ErrorCode.DOCUMENT_TOO_LARGE,
                f"the index's documents take more than {most:,} bytes of JSON, the limit; "
                "raise it with --max-total-bytes N (it admits twice N)",
            )
        frame.append(line)
        if line == _CHUNKS_LINE:
            break
    else:
        return None
    chunks_at = handle.tell() - 1  # the newline before the first chunk, or the foot
    end = handle.seek(0, io.SEEK_END)
    if end - _FOOT_BYTES < chunks_at:
        return None
    handle.seek(end - _FOOT_BYTES)
    foot = handle.read(_FOOT_BYTES)
    index_id = foot[len(index_foot("")) - 3 : -3]
    if foot != index_foot(index_id.decode("ascii", "replace")):
        return None
    # One newline before each chunk (JSON text escapes every newline in its strings).
    handle.seek(chunks_at)
    count, left = 0, end - _FOOT_BYTES - chunks_at
    while left:
        piece = handle.read(min(left, _COUNT_PIECE))
        count, left = count + piece.count(b"\n"), left - len(piece)
    frame.append(b'],"index_id":"%b"}' % index_id)
    head = b"".join(frame)
    frame.clear()  # the documents' JSON held once while it is parsed, not three times
    try:
        raw = json.loads(head)
    except (ValueError, RecursionError):
        return None
    del head
    if not isinstance(raw, dict) or raw.get("chunks") != []:
        return None
    handle.seek(0)
    index = _rebuilds_to(raw, count, handle.read, limits, spread)
    if index is None:
        return None
    return ValidatedFile(
        parse_config(index["config"]), index["documents"], index["index_id"], count
    )


def validate_index_file(
    handle: BinaryIO,
    limits: Limits = DEFAULT_LIMITS,
    in_memory: int = 512 * 2**20,
    documents_bytes: int = 512 * 2**20,
    spread: Spread = IN_TURN,
) -> ValidatedFile:
    """An index file validated. A file as `index --out`, `compare` and `--engine ray`
    write one is compared as it is rebuilt, its chunks never held (any number), its
    documents' JSON at most `documents_bytes`; any other, or a pipe, is read whole, up
    to `in_memory` bytes, by the strict path, which names what differs. `spread` cuts
    the rebuilt documents (`write_index`)."""
    if handle.seekable():
        streamed = _streamed(handle, limits, documents_bytes, spread)
        if streamed is not None:
            return streamed
        handle.seek(0)
    data = read_at_most(handle, in_memory)
    if data is None:
        raise _refuse(
            f"larger than {in_memory // 2**20} MiB, which only a file (not a pipe) laid "
            "out as `index` writes one may be"
        )
    return ValidatedFile.of(validate_index_bytes(data, limits))


def check_against_sources(documents: Sequence[DocumentRecord], load: LoadResult) -> None:
    """Refuse a validated index unless each of its documents is exactly what its source
    file loads to, and no document that loads is left out: text edited with every digest
    recomputed, or a `sha256` replaced, is caught here and only here."""
    loaded = {document["source_id"]: document for document in load.documents}
    failed = {status.source_id: status for status in load.failures}
    for position, document in enumerate(documents):
        where = f"documents[{position}] ({document['source_id']!r})"
        source = loaded.pop(document["source_id"], None)
        if source is None:
            status = failed.get(document["source_id"])
            if status is None:
                raise _refuse(f"{where} is not in the manifest")
            raise _refuse(f"{where}: its source does not load: {status.status}: {status.detail}")
        if document != source:
            field = next(
                key for key in (*source, *document) if source.get(key) != document.get(key)
            )
            raise _refuse(f"{where}.{field} is not what its source file and the manifest give")
    if loaded:
        left_out = ", ".join(map(repr, sorted(loaded)))
        raise _refuse(f"the index leaves out {left_out} of the manifest")


__all__ = [
    "EXECUTION_MODE",
    "ValidatedFile",
    "check_against_sources",
    "validate_index",
    "validate_index_bytes",
    "validate_index_file",
]
