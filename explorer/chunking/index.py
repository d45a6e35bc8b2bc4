"""Chunk records and the tamper-evident index (docs/contract.md §6)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from hashlib import sha256
from itertools import chain
from typing import Annotated, Final, Literal, NamedTuple, NotRequired

import orjson
from pydantic import Field, GetCoreSchemaHandler, GetPydanticSchema
from pydantic_core import core_schema
from typing_extensions import TypedDict

from ..digests import canonical_bytes, sha
from ..errors import ErrorCode, ExplorerError
from ..grammars import GrammarSection
from ..grammars.v1 import Span
from ..limits import (
    DEFAULT_LIMITS,
    Limits,
    require_chunks_per_document,
    require_chunks_per_index,
    too_many_chunks,
)
from ..models import Count, Hex64, LineNumber, NonEmpty, PlainText, VersionOne, strict_shape
from ..sources.documents import DocumentRecord, document_record
from ..sources.loading import DocumentStatus, LoadResult, normalized
from ..workers import IN_TURN, Spread
from .config import ChunkConfig, ConfigJson, grammar_for
from .policies import POLICIES, SEMANTIC, DocumentPolicy, policy_for
from .tokens import count_tokens, load_tokenizer

SCHEMA_VERSION = 1
EXECUTION_MODE: Final = "offline-synthetic-source-processing"


# The types below are the one declaration of each shape: plain dicts where the hot path
# builds and reads them, and (through pydantic's TypeAdapter) the validation and the JSON
# Schema of the wire format. `validate` checks every value besides.


@strict_shape
class ChunkRecord(TypedDict):
    """One chunk (docs/contract.md §6): where it lies, what it says, and its identity."""

    chunk_id: Hex64
    source_id: PlainText
    version: PlainText
    document_revision: Hex64
    section_id: Hex64
    section_title: Annotated[
        str, Field(description="Empty for text before a document's first heading (markdown).")
    ]
    order: Count
    start: Count
    end: Count
    start_line: LineNumber
    end_line: LineNumber
    text: NonEmpty
    text_sha256: Hex64
    pages: NotRequired[
        Annotated[
            list[LineNumber],
            Field(description="A PDF's chunk: each page it lies on, from 1; absent elsewhere."),
        ]
    ]


def chunk_pages(page_starts: Sequence[int], start: int, end: int) -> list[int]:
    """The pages (from 1) that `[start, end)` lies on, given where each page starts."""
    first = bisect_right(page_starts, start)
    last = bisect_right(page_starts, end - 1)
    return list(range(max(first, 1), max(last, 1) + 1))


def page_label(pages: Sequence[int]) -> str:
    """How a citation names a chunk's pages: "p. 3", or "pp. 3\u20134" (an en dash)."""
    return f"p. {pages[0]}" if len(pages) == 1 else f"pp. {pages[0]}\u2013{pages[-1]}"


def _as_config(_: object, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
    return core_schema.no_info_after_validator_function(ChunkConfig.as_json, handler(ChunkConfig))


# A config as an index or report holds it: the plain dict that enters ids, validated (and
# described in the JSON Schema) as a `ChunkConfig`, declared once, in explorer/config.py.
ConfigField = Annotated[ConfigJson, GetPydanticSchema(_as_config)]


@strict_shape
class Index(TypedDict):
    """An index (docs/contract.md §6): documents sorted by `source_id`, their chunks in
    that order, and an `index_id` over all of it."""

    schema_version: VersionOne
    execution_mode: Literal["offline-synthetic-source-processing"]
    config: ConfigField
    documents: Annotated[list[DocumentRecord], Field(min_length=1)]
    chunks: list[ChunkRecord]
    index_id: Hex64


# The hot path spells out `canonical_json` for the shapes it hashes, keys in sorted order,
# as bytes; tests hold every id to `digest`. A chunk's fields (all but its id) are encoded
# once and serve both its `chunk_id` and the index's `index_id`. A str as JSON, from a C
# encoder that writes it byte for byte as json.dumps(ensure_ascii=False) would
# (tests/test_digests.py checks every code point):
_string = orjson.dumps


def section_id(document_revision: str, heading_start: int) -> str:
    """`digest({"document_revision": …, "heading_start": …})`, spelled out (once per section)."""
    canonical = b'{"document_revision":%b,"heading_start":%d}' % (
        _string(document_revision),
        heading_start,
    )
    return sha256(canonical).hexdigest()


# A chunk's fields after "document_revision", in sorted key order ("pages" only where the
# document has pages).
_FIELDS = b'%b%d,"end_line":%d,"order":%d%b%b%d,"start_line":%d,"text":%b,"text_sha256":"%b"%b'


def chunk_id_prefix(config: ChunkConfig) -> bytes:
    """What every chunk id's canonical JSON starts with."""
    return b'{"config":' + canonical_bytes(config.as_json()) + b","


# Spans placed by something other than the policy, by source_id: an imported chunk
# file's (explorer/imports.py), or an index's own when it is validated.
GivenSpans = Mapping[str, Sequence[Span]]


class _Heading(NamedTuple):
    """What a chunk's record takes from its section."""

    heading_start: int
    title: str


# The section of a whole document's chunks when the grammar gives it none with a body.
_NO_SECTION = _Heading(0, "")


def _placed(
    text: str,
    config: ChunkConfig,
    given: Sequence[Span] | None,
    limits: Limits = DEFAULT_LIMITS,
    name: str = "the document",
) -> Iterator[tuple[_Heading | GrammarSection, Span]]:
    """Each span with its section. A policy of ours cuts section by section; spans of a
    whole document (given, or a library's) each belong to the section their start lies
    in, its heading line included (docs/contract.md §5c; a start before the first
    section's heading belongs to the first section). Only a policy of ours needs its
    grammar to admit the text (grammar v1: a leading heading); whole-document spans
    never do."""
    grammar = grammar_for(config)
    spans = given
    if spans is None:
        ours = POLICIES.get(config.strategy)
        if ours is not None:
            for section in grammar.sections(text):
                for span in ours.spans(text, section, config):
                    yield section, span
            return
        if config.strategy == SEMANTIC.name:
            yield from SEMANTIC.section_spans(text, config)
            return
        library = policy_for(config)  # a library's, or the refusal of a chunk file's config
        assert isinstance(library, DocumentPolicy)
        spans = library.document_spans(text, config, limits, name)
    sections = grammar.any_sections(text)
    heading_starts = [section.heading_start for section in sections]
    for span in spans:
        at = bisect_right(heading_starts, span[0]) - 1
        yield (sections[max(at, 0)] if sections else _NO_SECTION), span


# A token-sized library's chunks, each counted on its own, may hold fewer tokens in all
# than the whole text (a separator dropped, a merge across a cut): at most by this factor.
TOKEN_SLACK = 2


def _require_possible(source_id: str, text: str, config: ChunkConfig, limits: Limits) -> None:
    """Refuse a whole-document library call before it runs when its chunks cannot be
    as few as the limit: each holds at most its size of the text's non-blank characters
    (in tokens: of the text's tokens, `TOKEN_SLACK` aside), so a size of 1 on a long
    text is refused at once, not after the library has cut it all."""
    if config.library is None or not config.sized:
        return
    if config.unit is None:
        fewest = -(-sum(map(len, text.split())) // config.size())
    else:
        fewest = -(-count_tokens(text) // (TOKEN_SLACK * config.size()))
    if fewest > limits.chunks_per_document:
        raise too_many_chunks(
            f"document {source_id!r} (at least {fewest:,} chunks of at most {config.size():,} "
            f"{config.unit or 'characters'})",
            limits.chunks_per_document,
            "--max-document-chunks",
        )


def chunk_stream(
    document: DocumentRecord,
    config: ChunkConfig,
    id_prefix: bytes,
    limits: Limits = DEFAULT_LIMITS,
    given: Sequence[Span] | None = None,
) -> Iterator[tuple[ChunkRecord, bytes]]:
    """One document's chunk records in order, each with its canonical JSON, one at a
    time: a caller that compares or writes them need not hold them all. `given` places
    the chunks instead of the config's policy (an imported chunk file's spans). A text
    the tokenizer cannot count is refused naming the document."""
    try:
        yield from _chunk_stream(document, config, id_prefix, limits, given)
    except ExplorerError as error:
        if error.code is not ErrorCode.UNCOUNTABLE_TEXT:
            raise
        named = f"document {document['source_id']!r}: {error.detail}"
        raise ExplorerError(error.code, named) from None


def _chunk_stream(
    document: DocumentRecord,
    config: ChunkConfig,
    id_prefix: bytes,
    limits: Limits,
    given: Sequence[Span] | None,
) -> Iterator[tuple[ChunkRecord, bytes]]:
    """`chunk_stream`, the refusals as raised."""
    id_hash = sha256(id_prefix)
    text = document["text"]
    source_id = document["source_id"]
    version = document["version"]
    revision = document["document_revision"]
    page_starts = document.get("page_starts")
    head = b'"document_revision":' + _string(revision) + b',"end":'
    source = b',"source_id":' + _string(source_id) + b',"start":'
    tail = b',"version":' + _string(version) + b"}"
    # Line numbers by a cursor: spans come in document order, so counting newlines costs
    # one pass over the text, not one scan from the top per chunk. With overlap a chunk
    # may start before the previous one ends (never before it starts): the cursor then
    # steps back over the overlap only.
    line, line_offset = 1, 0
    if given is None:
        _require_possible(source_id, text, config, limits)
    current: _Heading | GrammarSection | None = None
    sid, title, middle = "", "", b""
    for order, (section, (start, end)) in enumerate(
        _placed(text, config, given, limits, source_id)
    ):
        if section is not current:
            current = section
            sid = section_id(revision, section.heading_start)
            title = section.title
            middle = b',"section_id":"%b","section_title":%b%b' % (
                sid.encode(),
                _string(title),
                source,
            )
        require_chunks_per_document(source_id, order + 1, limits)
        piece = text[start:end]
        piece_sha = sha256(piece.encode()).hexdigest()
        if start >= line_offset:
            line += text.count("\n", line_offset, start)
        else:
            line -= text.count("\n", start, line_offset)
        start_line = line
        line += text.count("\n", start, end - 1)
        line_offset = end - 1
        pages = None if page_starts is None else chunk_pages(page_starts, start, end)
        fields = _FIELDS % (
            head,
            end,
            line,
            order,
            b"" if pages is None else b',"pages":' + orjson.dumps(pages),
            middle,
            start,
            start_line,
            _string(piece),
            piece_sha.encode(),
            tail,
        )
        chunk_hash = id_hash.copy()
        chunk_hash.update(fields)
        chunk_id = chunk_hash.hexdigest()
        record: ChunkRecord = {
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
        if pages is not None:
            record["pages"] = pages
        yield record, b'{"chunk_id":"%b",%b' % (chunk_id.encode(), fields)


def _encoded_chunks(
    document: DocumentRecord,
    config: ChunkConfig,
    id_prefix: bytes,
    limits: Limits = DEFAULT_LIMITS,
    given: GivenSpans | None = None,
) -> tuple[list[ChunkRecord], list[bytes]]:
    """One document's chunk records, and each record's canonical JSON."""
    records: list[ChunkRecord] = []
    encoded: list[bytes] = []
    spans = None if given is None else given.get(document["source_id"], ())
    for record, fields in chunk_stream(document, config, id_prefix, limits, spans):
        records.append(record)
        encoded.append(fields)
    return records, encoded


class Chunked(NamedTuple):
    """One document's chunks as an index file holds them: their canonical JSON joined by
    `",\n"` (canonical JSON holds no newline, so the `index_id`'s `","` joins are the same
    bytes without their newlines), how many, the records when asked for, and the
    refusal that stopped them (a limit, as code and detail) instead."""

    joined: bytes
    chunk_count: int
    records: list[ChunkRecord]
    refusal: tuple[ErrorCode, str] | None = None


def chunked(
    document: DocumentRecord,
    config: ChunkConfig,
    id_prefix: bytes,
    limits: Limits,
    given: GivenSpans | None = None,
    records: bool = False,
) -> Chunked:
    """`_encoded_chunks` as a `Chunked`, its refusal kept rather than raised."""
    try:
        kept, parts = _encoded_chunks(document, config, id_prefix, limits, given)
    except ExplorerError as error:
        return Chunked(b"", 0, [], (error.code, error.detail))
    return Chunked(b",\n".join(parts), len(parts), kept if records else [])


# How much text one piece of `write_index`'s work cuts (documents are not split): small
# enough that workers share a few megabytes evenly, large enough that sending each
# piece's chunks back costs little beside cutting them.
BATCH_CHARS = 256 * 1024


def _batches(documents: Sequence[DocumentRecord], chars: int) -> list[int]:
    """Where each batch of consecutive documents starts, and the end: each holds `chars`
    of text or one document."""
    bounds = [0]
    held = 0
    for position, document in enumerate(documents):
        held += len(document["text"])
        if held >= chars:
            bounds.append(position + 1)
            held = 0
    if bounds[-1] != len(documents):
        bounds.append(len(documents))
    return bounds


def document_chunks(
    document: DocumentRecord, config: ChunkConfig, limits: Limits = DEFAULT_LIMITS
) -> list[ChunkRecord]:
    """One document's chunks, in order, each with its content-derived `chunk_id`."""
    return _encoded_chunks(document, config, chunk_id_prefix(config), limits)[0]


def chunk_texts(text: str, config: ChunkConfig, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """The texts of the chunks `config` cuts `text` into, in order: a text as a manifest's
    document would be after loading (`normalized`), outside any manifest. What
    `explorer export --snippet` calls for a column of our policies."""
    text = normalized(text)
    fields = {"source_id": "text", "version": "1", "path": "text", "sha256": sha(text)}
    return [
        chunk["text"] for chunk in document_chunks(document_record(fields, text), config, limits)
    ]


INDEX_ID_HEAD = b'{"chunks":['


def index_id_tail(config: ChunkConfig, documents: list[DocumentRecord]) -> bytes:
    """What the `index_id`'s canonical JSON holds after its chunks (which it starts with,
    after `INDEX_ID_HEAD`, each chunk's canonical JSON joined by commas)."""
    rest = {
        "config": config.as_json(),
        "documents": documents,
        "execution_mode": EXECUTION_MODE,
        "schema_version": SCHEMA_VERSION,
    }
    return b"]," + canonical_bytes(rest)[1:]


MAX_NAMED = 5  # documents a column's note names before saying how many more


class Readable(NamedTuple):
    """The documents a column cuts, what its column says of the others, when it can cut
    none the refusal that says why (naming the column), and when it leaves some out the
    refusal of a command that must cut them all."""

    documents: list[DocumentRecord]
    notes: list[str]
    refusal: ExplorerError | None = None
    partial: ExplorerError | None = None

    def required(self) -> list[DocumentRecord]:
        """The documents, or the refusal where there are none (an index needs one)."""
        if self.refusal is not None:
            raise self.refusal
        return self.documents

    def whole(self) -> list[DocumentRecord]:
        """Every document, or the refusal naming those left out: an artifact (an index
        file, chunk maps) lists every document of its manifest unless `--skip-failed`."""
        if self.partial is not None:
            raise self.partial
        return self.documents


def unreadable(document: DocumentRecord, config: ChunkConfig) -> ExplorerError | None:
    """Why a column cut with `config` cannot cut `document`, if it cannot: a policy of
    ours needs its grammar to admit the text (grammar v1: a leading heading); a
    library's column and a chunk file's cut any text."""
    if config.library is not None or config.chunk_file is not None:
        return None
    try:
        grammar_for(config).admit(document["text"])
    except ExplorerError as error:
        return error
    return None


def admitted(load: LoadResult, config: ChunkConfig) -> LoadResult:
    """`load` as one column that must cut every document sees it (the persistent
    index): a document it cannot cut is a failure with the grammar's code."""
    statuses: list[DocumentStatus] = []
    documents: list[DocumentRecord] = []
    loaded = iter(load.documents)  # the documents of the ok statuses, in their order
    for status in load.statuses:
        document = next(loaded) if status.ok else None
        error = None if document is None else unreadable(document, config)
        if error is not None:
            status = replace(status, status=error.code, detail=error.detail)
        elif document is not None:
            documents.append(document)
        statuses.append(status)
    return LoadResult(tuple(statuses), tuple(documents))


def readable(documents: Sequence[DocumentRecord], config: ChunkConfig, name: str) -> Readable:
    """The documents a column cuts, and what its column says of the others. A policy of
    ours cuts a text only if its grammar admits it (grammar v1: a leading heading); a
    library's column and a chunk file's cut any text."""
    grammar = grammar_for(config)
    kept: list[DocumentRecord] = []
    left: list[str] = []
    refusal: ExplorerError | None = None
    for document in documents:
        error = unreadable(document, config)
        if error is None:
            kept.append(document)
        else:
            left.append(document["source_id"])
            refusal = error
    if refusal is None:
        return Readable(kept, [])
    named = ", ".join(repr(source_id) for source_id in left[:MAX_NAMED])
    more = f" and {len(left) - MAX_NAMED} more" if len(left) > MAX_NAMED else ""
    leaves_out = (
        f"grammar {grammar.name} cuts only a text that starts with a heading, so this column "
        f"leaves out {len(left)} of {len(documents)} documents ({named}{more}); the markdown "
        "grammar reads them"
    )
    note = f"{refusal.code.value}: {leaves_out}"
    partial = ExplorerError(
        refusal.code,
        f"the column {name!r} cuts under grammar {grammar.name} only a text that starts with "
        f"a heading, and {len(left)} of {len(documents)} documents ({named}{more}) do not: "
        "cut them under the markdown grammar, or pass --skip-failed to leave them out",
    )
    if kept:
        return Readable(kept, [note], None, partial)
    none = ExplorerError(
        refusal.code,
        f"the column {name!r} cuts under grammar {grammar.name}, which reads none of the "
        f"documents: {refusal.detail}",
    )
    return Readable([], [note], none, partial)


def build_index(
    documents: Iterable[DocumentRecord],
    config: ChunkConfig,
    limits: Limits = DEFAULT_LIMITS,
    given: GivenSpans | None = None,
) -> Index:
    """Documents sorted by `source_id`, their chunks in that order, and an `index_id`
    that binds all of it. `given` places the chunks of an imported chunk file."""
    ordered = sorted(documents, key=lambda d: d["source_id"])
    if not ordered:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )
    config_json = config.as_json()
    chunks: list[ChunkRecord] = []
    encoded: list[bytes] = []
    id_prefix = chunk_id_prefix(config)
    for document in ordered:
        records, parts = _encoded_chunks(document, config, id_prefix, limits, given)
        chunks.extend(records)
        encoded.extend(parts)
        require_chunks_per_index(len(chunks), limits)
    index_hash = sha256(INDEX_ID_HEAD)
    index_hash.update(b",".join(encoded))
    index_hash.update(index_id_tail(config, ordered))
    return {
        "schema_version": 1,
        "execution_mode": EXECUTION_MODE,
        "config": config_json,
        "documents": ordered,
        "chunks": chunks,
        "index_id": index_hash.hexdigest(),
    }


# How `write_index` frames an index's bytes, and how its `index_id` frames the same
# documents and chunks (chunks first): shared by every engine that writes one
# (explorer/engine_ray.py folds workers' pieces into exactly these bytes).
CHUNKS_HEAD = b'\n],\n"chunks":['
INDEX_ID_END = b'],"execution_mode":%b,"schema_version":%d}' % (
    _string(EXECUTION_MODE),
    SCHEMA_VERSION,
)


def index_head(config_bytes: bytes) -> bytes:
    """An index file's first bytes, up to its first document."""
    return b'{"schema_version":%d,"execution_mode":%b,"config":%b,\n"documents":[\n' % (
        SCHEMA_VERSION,
        _string(EXECUTION_MODE),
        config_bytes,
    )


def index_id_middle(config_bytes: bytes) -> bytes:
    """What the `index_id` hashes between the last chunk and the first document."""
    return b'],"config":%b,"documents":[' % config_bytes


def index_foot(index_id: str) -> bytes:
    """An index file's last bytes, after its last chunk."""
    return b'\n],\n"index_id":"%b"}\n' % index_id.encode()


class IndexSummary(NamedTuple):
    index_id: str
    chunk_count: int


def write_index(
    documents: Iterable[DocumentRecord],
    config: ChunkConfig,
    write: Callable[[bytes], object],
    keep: Callable[[DocumentRecord, list[ChunkRecord]], object] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    given: GivenSpans | None = None,
    spread: Spread = IN_TURN,
) -> IndexSummary:
    """`build_index` as JSON bytes passed to `write` while it is built, one document's
    chunks at a time, so the whole index never exists in memory, as records or as text.

    `json.loads` of the bytes equals `build_index(documents, config)`, ids included: each
    document and chunk is written as the canonical JSON that its identity hashes (keys
    sorted, one per line), and `index_id` comes last. `keep` sees each document's chunk
    records before they are dropped. `spread` cuts the documents, batch by batch
    (`BATCH_CHARS`), here or in worker processes (`explorer.workers.Spread`): the same
    bytes either way. A library's column calls its library from this process alone,
    through its one serving child (`chunking.deadline`).
    """
    ordered = sorted(documents, key=lambda d: d["source_id"])
    if not ordered:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )
    id_prefix = chunk_id_prefix(config)
    if config.library is not None or config.semantic is not None:
        spread = IN_TURN  # one library child; one embedder, loaded in this process
    # In this process, a document at a time: only its chunks are held.
    bounds = _batches(ordered, BATCH_CHARS if spread.workers > 1 else 0)
    if spread.workers > 1 and config.unit is not None:
        load_tokenizer()

    def batch(number: int) -> list[Chunked]:
        return [
            chunked(document, config, id_prefix, limits, given, records=keep is not None)
            for document in ordered[bounds[number] : bounds[number + 1]]
        ]

    count = 0
    index_hash = sha256(INDEX_ID_HEAD)
    config_bytes = canonical_bytes(config.as_json())
    # Workers start before the documents are written, and cut while they are.
    with closing(spread(batch, len(bounds) - 1)) as batches:
        write(index_head(config_bytes))
        for position, document in enumerate(ordered):
            write((b",\n" if position else b"") + canonical_bytes(document))
        write(CHUNKS_HEAD)
        for document, piece in zip(ordered, chain.from_iterable(batches), strict=False):
            if piece.refusal is not None:
                raise ExplorerError(*piece.refusal)
            require_chunks_per_index(count + piece.chunk_count, limits)
            if piece.chunk_count:
                if count:
                    index_hash.update(b",")
                index_hash.update(piece.joined.replace(b"\n", b""))
                write((b",\n" if count else b"\n") + piece.joined)
                count += piece.chunk_count
            if keep is not None:
                keep(document, piece.records)
    # The rest of the canonical index, as `build_index` hashes it: each document encoded
    # again rather than held since it was written.
    index_hash.update(index_id_middle(config_bytes))
    for position, document in enumerate(ordered):
        index_hash.update((b"," if position else b"") + canonical_bytes(document))
    index_hash.update(INDEX_ID_END)
    index_id = index_hash.hexdigest()
    write(index_foot(index_id))
    return IndexSummary(index_id, count)
