"""Imported chunk files (docs/contract.md §5c): another pipeline's chunks as a column.

A file is a JSON list or JSON Lines of chunks in one of four shapes, told apart by their
keys. Each chunk is placed in its document: at its offsets when it has them (checked
against the text, and converted when they were taken before CRLF normalization), else
located in order, exactly first, then ignoring whitespace. The spans then go through the
same id machinery as the core's own policies (`build_index(..., given=...)`), so an
imported index has `chunk_id`s and an `index_id` computed like ours.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..digests import sha_bytes
from ..errors import ErrorCode, ExplorerError
from ..grammars.v1 import Span
from ..jsonio import parse_json, require_counts
from ..limits import DEFAULT_LIMITS, Limits, too_many_chunks
from ..models import describe
from ..sources.documents import DocumentRecord
from ..sources.manifest import normal_path
from .config import ChunkConfig, ChunkFileShape
from .locate import Document, Entry, locate_in_order
from .policies import CHUNK_FILE_STRATEGY, parse_config

MAX_CHUNK_FILE_BYTES = 64 * 1024 * 1024
MAX_NAME_CHARS = 40
# How many chunk numbers a note lists before it says how many more.
MAX_LISTED = 12


def _invalid(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.INVALID_CHUNK_FILE, detail)


class _Shape(BaseModel):
    """A chunk's top level is strict; metadata may hold any keys."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


class _LangChain(_Shape):
    """A LangChain `Document` (`model_dump()`); `start_index` in metadata with
    `add_start_index=True`."""

    page_content: str = Field(min_length=1)
    metadata: dict[str, Any] = {}
    id: str | None = None
    type: Literal["Document"] = "Document"


class _LlamaIndex(_Shape):
    """A LlamaIndex `TextNode.to_dict()`."""

    text: str = Field(min_length=1)
    start_char_idx: int | None = None
    end_char_idx: int | None = None
    metadata: dict[str, Any] = {}
    id_: str | None = None
    embedding: Any = None
    excluded_embed_metadata_keys: list[str] = []
    excluded_llm_metadata_keys: list[str] = []
    relationships: dict[str, Any] = {}
    metadata_template: str | None = None
    metadata_separator: str | None = None
    metadata_seperator: str | None = None
    text_template: str | None = None
    mimetype: str | None = None
    class_name: Literal["TextNode"] = "TextNode"


class _Chonkie(_Shape):
    """A Chonkie `Chunk.to_dict()`."""

    text: str = Field(min_length=1)
    start_index: int
    end_index: int
    id: str | None = None
    token_count: int | None = None
    context: Any = None
    embedding: Any = None
    metadata: dict[str, Any] | None = None


class _Plain(_Shape):
    source_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    start: int | None = None
    end: int | None = None


def _named(metadata: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """The `source_id`, and the `source` or `file_path`, that metadata gives (if strings)."""
    meta = metadata or {}
    source_id = meta.get("source_id")
    path = meta.get("source", meta.get("file_path"))
    return (
        source_id if isinstance(source_id, str) else None,
        path if isinstance(path, str) else None,
    )


def _langchain(number: int, raw: object) -> Entry:
    chunk = _LangChain.model_validate(raw)
    source_id, path = _named(chunk.metadata)
    start = chunk.metadata.get("start_index")
    # LangChain writes -1 when it could not find the chunk in its text.
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        start = None
    end = None if start is None else start + len(chunk.page_content)
    return Entry(number, chunk.page_content, source_id, path, start, end)


def _llamaindex(number: int, raw: object) -> Entry:
    node = _LlamaIndex.model_validate(raw)
    source_id, path = _named(node.metadata)
    return Entry(number, node.text, source_id, path, node.start_char_idx, node.end_char_idx)


def _chonkie(number: int, raw: object) -> Entry:
    chunk = _Chonkie.model_validate(raw)
    source_id, path = _named(chunk.metadata)
    return Entry(number, chunk.text, source_id, path, chunk.start_index, chunk.end_index)


def _plain(number: int, raw: object) -> Entry:
    chunk = _Plain.model_validate(raw)
    return Entry(number, chunk.text, chunk.source_id, None, chunk.start, chunk.end)


_READERS: dict[ChunkFileShape, Callable[[int, object], Entry]] = {
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "chonkie": _chonkie,
    "plain": _plain,
}
_SHAPE_KEYS = (
    "langchain: page_content, metadata (start_index; source_id, source or file_path); "
    "llamaindex: text, start_char_idx, end_char_idx, metadata; "
    "chonkie: text, start_index, end_index; "
    "plain: source_id, text, optional start and end"
)


def detect_shape(first: object) -> ChunkFileShape:
    """The shape a chunk's keys say it has, or `invalid_chunk_file` naming the four."""
    keys = set(first) if isinstance(first, dict) else set()
    if "page_content" in keys:
        return "langchain"
    if keys & {"start_char_idx", "end_char_idx", "id_", "class_name"}:
        return "llamaindex"
    if "start_index" in keys:
        return "chonkie"
    if "source_id" in keys:
        return "plain"
    found = ", ".join(sorted(map(str, keys))[:8]) if keys else f"a {type(first).__name__}"
    raise _invalid(f"chunk 1 has no shape this reads ({found}); the shapes are {_SHAPE_KEYS}")


_NOT_SPACE = re.compile(rb"\S")
_FILLED_LINE = re.compile(rb"^[^\S\n]*\S", re.MULTILINE)  # a line that is not blank


def _values(data: bytes, limits: Limits) -> list[object]:
    """A JSON list, or JSON Lines (one chunk per non-blank line), counted before it is
    parsed: at most `limits.chunks_per_index` chunks."""
    if len(data) > MAX_CHUNK_FILE_BYTES:
        raise _invalid(f"the chunk file is larger than {MAX_CHUNK_FILE_BYTES // 2**20} MiB")

    def too_many() -> ExplorerError:
        return too_many_chunks("the chunk file", limits.chunks_per_index, "--max-chunks")

    most, what = limits.chunks_per_index, "chunk file"
    first = _NOT_SPACE.search(data)
    if first is not None and first.group() == b"[":
        require_counts(data, ErrorCode.INVALID_CHUNK_FILE, what, most, too_many)
        values = parse_json(data, ErrorCode.INVALID_CHUNK_FILE, what)
        if not isinstance(values, list):
            raise _invalid("the chunk file is a JSON list or JSON Lines, not one object")
        return values
    lines = sum(1 for _ in _FILLED_LINE.finditer(data))
    require_counts(data, ErrorCode.INVALID_CHUNK_FILE, what, most, too_many, lines=lines)
    return [
        parse_json(line, ErrorCode.INVALID_CHUNK_FILE, f"chunk file's line {number}")
        for number, line in enumerate(data.split(b"\n"), 1)
        if line.strip()
    ]


def read_entries(
    data: bytes, limits: Limits = DEFAULT_LIMITS
) -> tuple[ChunkFileShape, list[Entry]]:
    """A file's shape and its chunks in file order; a chunk that does not fit the shape
    of the first is refused by its number."""
    values = _values(data, limits)
    if not values:
        raise _invalid("the chunk file holds no chunk")
    shape = detect_shape(values[0])
    read = _READERS[shape]
    entries = []
    for number, raw in enumerate(values, 1):
        try:
            entry = read(number, raw)
        except ValidationError as error:
            raise _invalid(f"chunk {number} is not a {shape} chunk: {describe(error)}") from None
        if entry.start is None and entry.end is not None:
            raise _invalid(f"chunk {number} gives an end offset without a start offset")
        entries.append(entry)
    return shape, entries


def _chunks(numbers: Sequence[int]) -> str:
    """`chunk 3`, `chunks 3, 5 and 8`, or the first few and how many more."""
    if len(numbers) == 1:
        return f"chunk {numbers[0]} was"
    if len(numbers) <= MAX_LISTED:
        head, tail = numbers[:-1], str(numbers[-1])
    else:
        head, tail = numbers[:MAX_LISTED], f"{len(numbers) - MAX_LISTED} more"
    return f"chunks {', '.join(map(str, head))} and {tail} were"


@dataclass(frozen=True)
class Placement:
    """An imported column: its config, each document's spans in document order, and
    what the report says about how they were placed."""

    config: ChunkConfig
    spans: dict[str, list[Span]]
    notes: tuple[str, ...]
    chunk_count: int


@dataclass(frozen=True)
class ChunkFile:
    """A chunk file given as a column: the name it is shown by, and its bytes.
    `skip_failed` leaves out the chunks that cannot be placed, and says so."""

    name: str
    data: bytes = field(repr=False)
    skip_failed: bool = False

    def __post_init__(self) -> None:
        name = self.name.strip()
        if not name or len(name) > MAX_NAME_CHARS or not name.isprintable() or name != self.name:
            raise ExplorerError(
                ErrorCode.USAGE,
                f"a chunk file's column name is 1 to {MAX_NAME_CHARS} printable characters "
                f"without surrounding spaces, not {self.name[:MAX_NAME_CHARS]!r}",
            )

    @cached_property
    def sha256(self) -> str:
        return sha_bytes(self.data)


class _Paths:
    """Documents by manifest path, for chunks that name a path: the path itself, else the
    first document (in manifest order) whose path the chunk's path ends with after a `/`.
    A trie of path components from the last one back, so finding a chunk's document
    costs the length of its path, whatever the number of documents."""

    def __init__(self, documents: Sequence[tuple[str, Document]]) -> None:
        self._root: dict[str, Any] = {}
        for rank, (path, document) in enumerate(documents):
            node = self._root
            for part in reversed(path.split("/")):
                node = node.setdefault(part, {})
            # "/" (never a component) marks a path's end; a repeated path: its first
            # place in the order, its last document (as a dict of paths would have it)
            node["/"] = (node.get("/", (rank,))[0], document)

    def find(self, path: str) -> Document | None:
        parts = path.split("/")
        node: dict[str, Any] | None = self._root
        best: tuple[int, Document] | None = None
        for left in range(len(parts) - 1, -1, -1):
            node = node.get(parts[left]) if node is not None else None
            if node is None:
                break
            here: tuple[int, Document] | None = node.get("/")
            if here is None:
                continue
            if left == 0:
                return here[1]  # the path itself comes first
            if best is None or here[0] < best[0]:
                best = here
        return None if best is None else best[1]


def _document_of(entry: Entry, by_id: dict[str, Document], by_path: _Paths) -> Document:
    if entry.source_id is not None:
        found = by_id.get(entry.source_id)
        if found is None:
            raise _invalid(
                f"chunk {entry.number} names source_id {entry.source_id!r}, which no loaded "
                "document has"
            )
        return found
    if entry.path is not None:
        found = by_path.find(normal_path(entry.path))
        if found is None:
            raise _invalid(
                f"chunk {entry.number} names source {entry.path!r}, which is no loaded "
                "document's manifest path"
            )
        return found
    if len(by_id) == 1:
        return next(iter(by_id.values()))
    raise _invalid(
        f"chunk {entry.number} names no document: give it a source_id (or metadata source_id, "
        "source or file_path), or import it beside a one-document manifest"
    )


def place(
    chunk_file: ChunkFile, documents: Sequence[DocumentRecord], limits: Limits = DEFAULT_LIMITS
) -> Placement:
    """Every chunk of the file placed in its document, or the first refusal: nothing is
    half-loaded unless `skip_failed`, which leaves out (and names) what cannot be placed."""
    shape, entries = read_entries(chunk_file.data, limits)
    by_id = {d["source_id"]: Document(d["source_id"], d["text"]) for d in documents}
    by_path = _Paths([(normal_path(d["path"]), by_id[d["source_id"]]) for d in documents])
    grouped: dict[str, list[Entry]] = {}
    skipped: list[str] = []

    def fail(error: ExplorerError) -> None:
        if not chunk_file.skip_failed:
            raise error
        skipped.append(f"{error.code.value}: {error.detail}")

    for entry in entries:
        try:
            document = _document_of(entry, by_id, by_path)
        except ExplorerError as error:
            fail(error)
            continue
        grouped.setdefault(document.source_id, []).append(entry)
    spans: dict[str, list[Span]] = {}
    notes: list[str] = []
    for source_id, group in grouped.items():
        document = by_id[source_id]
        loose: list[int] = []
        converted: list[int] = []
        placed_spans: list[Span] = []
        for entry, placed in locate_in_order(document, group):
            if isinstance(placed, ExplorerError):
                fail(placed)
                continue
            placed_spans.append(placed.span)
            if placed.loose:
                loose.append(entry.number)
            if placed.converted:
                converted.append(entry.number)
        spans[source_id] = sorted(placed_spans)
        if loose:
            notes.append(f"{source_id}: {_chunks(loose)} located ignoring whitespace")
        if converted:
            notes.append(
                f"{source_id}: {_chunks(converted)} given offsets of the text before CRLF "
                "normalization, converted to the normalized text's"
            )
    if skipped:
        shown = "; ".join(skipped[:MAX_LISTED])
        more = len(skipped) - MAX_LISTED
        notes.append(
            f"skipped {len(skipped)} chunks that could not be placed: {shown}"
            + (f"; and {more} more" if more > 0 else "")
        )
    count = sum(map(len, spans.values()))
    if not count:
        raise _invalid(f"no chunk of {chunk_file.name!r} could be placed in the documents")
    config = parse_config(
        {
            "strategy": CHUNK_FILE_STRATEGY,
            "version": 1,
            "max_chars": None,
            "chunk_file": {"sha256": chunk_file.sha256, "shape": shape},
        }
    )
    return Placement(config, spans, tuple(notes), count)


__all__ = [
    "MAX_CHUNK_FILE_BYTES",
    "ChunkFile",
    "Placement",
    "detect_shape",
    "place",
    "read_entries",
]
