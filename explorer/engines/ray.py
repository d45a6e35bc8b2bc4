"""`--engine ray`: a manifest's documents read, verified and chunked in Ray tasks, the
results folded on the driver into exactly the bytes (and `index_id`) one process writes,
and, for `evaluate`, exactly its figures.

The work per document is the core's (`load_one`, `chunk_stream`, `place_question`,
`bm25_scores`); a task runs it over a shard of consecutive documents in `source_id`
order and returns each document's status and its canonical JSON, already encoded, so
the driver only hashes, spools and copies bytes. Shards come back in order, a few in
flight, and the driver spools the documents and chunks to temporary files (an index
file holds the documents first, its `index_id` hashes the chunks first), so its memory
is bounded by the shards in flight, whatever the size of the documents.

`ray` is imported only here, and only when a run asks for it (requirements-ray.txt).
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import shutil
import socket
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from hashlib import sha256
from itertools import islice
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from ..chunking.config import ChunkConfig, loading_grammar
from ..chunking.index import (
    CHUNKS_HEAD,
    INDEX_ID_END,
    INDEX_ID_HEAD,
    ChunkRecord,
    IndexSummary,
    chunk_id_prefix,
    chunk_stream,
    index_foot,
    index_head,
    index_id_middle,
)
from ..digests import canonical_bytes
from ..errors import ErrorCode, ExplorerError
from ..grammars import Grammar
from ..limits import DEFAULT_LIMITS, Limits, require_chunks_per_index
from ..retrieval.evaluate import (
    Columns,
    Evaluation,
    Hit,
    PolicyEvaluation,
    evaluation_of,
    policy_evaluation,
    question_result,
)
from ..retrieval.questions import (
    PlacedQuestion,
    Question,
    QuestionSet,
    not_loaded,
    place_question,
    require_written,
)
from ..retrieval.retrievers import (
    BM25Scores,
    ChunkTerms,
    CorpusTerms,
    Cosines,
    Ranking,
    RetrieverName,
    best_chunks,
    embedded,
)
from ..retrieval.terms import bm25_terms
from ..sources.documents import DocumentRecord
from ..sources.loading import (
    DocumentStatus,
    SourceReader,
    failure_lines,
    load_one,
    require_loaded,
    require_total_bytes,
)
from ..sources.manifest import Manifest, ManifestDocument

# How long `--address` may take to accept a connection before it is refused.
CONNECT_SECONDS = 5
# Documents per task: enough work to outweigh a task's overhead, few enough that a lost
# worker costs little and the results in flight stay small.
SHARD_DOCUMENTS = 32
# How often Ray runs a task again after its worker died, before the shard's documents
# are reported as `worker_lost`.
MAX_RETRIES = 3
_COPY_PIECE = 1024 * 1024

Entry = tuple[int, ManifestDocument]  # a manifest entry and its position in the manifest
Item = TypeVar("Item")


class ColumnPiece(NamedTuple):
    """One document's chunks under one column's config: their canonical JSON joined as
    the index file joins them (`",\\n"`), how many, and a refusal of the whole run
    (`too_many_chunks`) as (code, detail). One bytes object per document, so the driver
    unpacks, hashes and writes it whole rather than chunk by chunk; canonical JSON holds
    no newline (`json_has_no_newline` in tests), so the `index_id`'s `","` joins are the
    same bytes without their newlines."""

    joined: bytes
    chunk_count: int
    refusal: tuple[ErrorCode, str] | None


class DocumentPiece(NamedTuple):
    """One document as a worker returns it: its status, the bytes read, its canonical
    JSON (empty when it did not load) and its chunks under each column's config."""

    position: int
    status: DocumentStatus
    read: int
    document: bytes
    columns: tuple[ColumnPiece, ...]


def _chunked(
    record: DocumentRecord, config: ChunkConfig, id_prefix: bytes, limits: Limits
) -> tuple[ColumnPiece, list[ChunkRecord]]:
    """A loaded document's chunks under one config, as a piece and as records."""
    records, parts = [], []
    try:
        for chunk, encoded in chunk_stream(record, config, id_prefix, limits):
            records.append(chunk)
            parts.append(encoded)
    except ExplorerError as error:
        return ColumnPiece(b"", 0, (error.code, error.detail)), []
    return ColumnPiece(b",\n".join(parts), len(parts), None), records


@cache
def _out_of_the_collectors_way() -> None:
    """Once in each worker: the objects it holds by now (Ray's own, hundreds of
    thousands) moved out of reach of Python's cyclic garbage collector, whose every full
    pass would otherwise walk them all again while the shards' chunks are built (two
    workers on 54 MB: 16 s of CPU, 14 s with them moved)."""
    gc.collect()
    gc.freeze()


def load_shard(
    entries: Sequence[Entry],
    reader: SourceReader,
    configs: Sequence[ChunkConfig],
    max_bytes: int,
    limits: Limits,
    grammar: Grammar,
) -> Iterator[tuple[DocumentPiece, DocumentRecord | None, list[list[ChunkRecord]]]]:
    """Each document of a shard loaded on its own and chunked under every config: its
    piece, its record (None if it did not load), and its chunk records per config. On
    Ray a document loads under one `grammar` for every column (`loading_grammar`): one
    that grammar does not read fails to load, as `--skip-failed` can leave out."""
    _out_of_the_collectors_way()
    prefixes = [chunk_id_prefix(config) for config in configs]
    for position, entry in entries:
        status, record, read = load_one(entry, reader, max_bytes, limits.pages_per_document)
        if record is not None:
            try:
                grammar.admit(record["text"])
            except ExplorerError as error:
                status = DocumentStatus(entry["source_id"], entry["path"], error.code, error.detail)
                record = None
        if record is None:
            yield DocumentPiece(position, status, read, b"", ()), None, []
            continue
        chunked = [
            _chunked(record, config, prefix, limits)
            for config, prefix in zip(configs, prefixes, strict=True)
        ]
        piece = DocumentPiece(
            position, status, read, canonical_bytes(record), tuple(c for c, _ in chunked)
        )
        yield piece, record, [records for _, records in chunked]


def index_shard(
    entries: Sequence[Entry],
    reader: SourceReader,
    config: ChunkConfig,
    max_bytes: int,
    limits: Limits,
) -> list[DocumentPiece]:
    """What an `index` task does: a shard's documents loaded and chunked."""
    grammar = loading_grammar((config,))
    return [p for p, _, _ in load_shard(entries, reader, (config,), max_bytes, limits, grammar)]


def shards(manifest: Manifest, size: int = SHARD_DOCUMENTS) -> list[list[Entry]]:
    """The manifest's entries in `source_id` order (an index's), cut into shards."""
    ordered = sorted(enumerate(manifest.documents), key=lambda e: e[1]["source_id"])
    return [ordered[start : start + size] for start in range(0, len(ordered), size)]


def _lost(shard: Sequence[Entry], error: Exception) -> list[DocumentPiece]:
    """A shard whose task failed for good: each of its documents as `worker_lost`."""
    detail = (
        f"the Ray worker processing it failed ({type(error).__name__}), "
        f"also after {MAX_RETRIES} retries"
    )
    return [
        DocumentPiece(
            position,
            DocumentStatus(entry["source_id"], entry["path"], ErrorCode.WORKER_LOST, detail),
            0,
            b"",
            (),
        )
        for position, entry in shard
    ]


def start_ray(address: str | None) -> Any:
    """The `ray` module, connected: to the cluster at `address`, or a local one on all
    cores. Quiet and offline: no dashboard, no usage statistics."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ray = importlib.import_module("ray")
    except ImportError:
        raise ExplorerError(
            ErrorCode.ENGINE_UNAVAILABLE,
            "--engine ray needs Ray, which is not installed: pip install -r requirements-ray.txt",
        ) from None
    if ray.is_initialized():
        return ray
    if address is not None:
        _require_reachable(address)
    try:
        ray.init(
            address=address or "local",  # "local": a new Ray, never one found running
            num_cpus=None if address else os.cpu_count(),
            include_dashboard=False,
            logging_level=logging.ERROR,
            log_to_driver=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise ExplorerError(
            ErrorCode.ENGINE_UNAVAILABLE, f"cannot join the Ray cluster at {address!r}: {error}"
        ) from None
    return ray


def _require_reachable(address: str) -> None:
    """Refuse a `HOST:PORT` (or `ray://HOST:PORT`) that takes no TCP connection within
    `CONNECT_SECONDS`: Ray itself keeps retrying such an address for minutes, printing
    warnings. `auto` and other forms are left to Ray."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS).close()
    except (OSError, ValueError, OverflowError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise ExplorerError(
            ErrorCode.ENGINE_UNAVAILABLE,
            f"cannot join the Ray cluster at {address!r}: no connection within "
            f"{CONNECT_SECONDS} s ({reason})",
        ) from None


@dataclass(frozen=True)
class RayRun:
    """What every Ray run of a manifest takes."""

    ray: Any
    manifest: Manifest
    reader: SourceReader
    max_bytes: int
    max_total_bytes: int
    limits: Limits = DEFAULT_LIMITS
    shard_documents: int = SHARD_DOCUMENTS


def _in_order(
    run: RayRun, submit: Callable[[Item], Any], items: Iterable[Item]
) -> Iterator[tuple[Item, Any, Any]]:
    """Each item's task submitted, and each item with its refs and its (first) result,
    or the `RayError` that ended its task for good, in the items' order, a few in flight
    (twice the cluster's CPUs), so the driver never holds many results."""
    ray = run.ray
    window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    left = iter(items)
    pending = deque((item, submit(item)) for item in islice(left, window))
    while pending:
        item, refs = pending.popleft()
        try:
            result = ray.get(refs[0] if isinstance(refs, list) else refs)
        except ray.exceptions.RayError as error:
            result = error
        pending.extend((later, submit(later)) for later in islice(left, 1))
        yield item, refs, result


def index_pieces(run: RayRun, config: ChunkConfig) -> Iterator[DocumentPiece]:
    """Every document's piece in `source_id` order, from `index_shard` tasks."""
    ray = run.ray
    task = ray.remote(max_retries=MAX_RETRIES)(index_shard)
    reader, config_ref = ray.put(run.reader), ray.put(config)

    def submit(shard: list[Entry]) -> Any:
        return task.remote(shard, reader, config_ref, run.max_bytes, run.limits)

    for shard, _, result in _in_order(run, submit, shards(run.manifest, run.shard_documents)):
        yield from _lost(shard, result) if isinstance(result, Exception) else result


@dataclass
class IndexFold:
    """Pieces in `source_id` order folded into each column's index: the documents
    spooled to a file in `folder` (and the chunks too when `spool_chunks`, for an
    index file), each `index_id` hashed as the chunks arrive."""

    configs: Sequence[ChunkConfig]
    limits: Limits
    max_total_bytes: int
    folder: Path
    spool_chunks: bool = True
    hashes: list[Any] = field(init=False)
    counts: list[int] = field(init=False)
    refusals: list[tuple[ErrorCode, str] | None] = field(init=False)
    failures: list[tuple[int, DocumentStatus]] = field(default_factory=list)
    statuses: int = 0
    read: int = 0
    documents: int = 0

    def __post_init__(self) -> None:
        self.hashes = [sha256(INDEX_ID_HEAD) for _ in self.configs]
        self.counts = [0 for _ in self.configs]
        self.refusals = [None for _ in self.configs]

    def fold(self, pieces: Iterable[DocumentPiece]) -> None:
        with (
            (self.folder / "documents").open("ab") as documents,
            (self.folder / "chunks").open("ab") as chunks,
        ):
            for piece in pieces:
                self._add(piece, documents, chunks)

    def _add(self, piece: DocumentPiece, documents: IO[bytes], chunks: IO[bytes]) -> None:
        self.statuses += 1
        self.read += piece.read
        require_total_bytes(self.read, self.max_total_bytes)
        if not piece.status.ok:
            self.failures.append((piece.position, piece.status))
            return
        documents.write(piece.document + b"\n")
        self.documents += 1
        for column, part in enumerate(piece.columns):
            count = self.counts[column]
            if self.refusals[column] is None and part.refusal is not None:
                self.refusals[column] = part.refusal
            if self.refusals[column] is not None:  # refused: only the statuses still count
                continue
            try:
                require_chunks_per_index(count + part.chunk_count, self.limits)
            except ExplorerError as error:
                self.refusals[column] = (error.code, error.detail)
                continue
            if part.chunk_count:
                update = self.hashes[column].update
                if count:
                    update(b",")
                update(part.joined.replace(b"\n", b""))
                if self.spool_chunks:
                    chunks.write((b",\n" if count else b"\n") + part.joined)
                self.counts[column] += part.chunk_count

    def check_loaded(self, proceed: bool, notes: Callable[[str], object], doing: str) -> None:
        """The failures reported as one process reports them (manifest order), and the
        run refused as it would be: failed documents first, then nothing loaded."""
        failures = [status for _, status in sorted(self.failures, key=lambda f: f[0])]
        for line in failure_lines(failures, proceed):
            notes(line)
        if not proceed:
            require_loaded(failures, self.statuses)
        if not self.documents:
            raise ExplorerError(
                ErrorCode.NO_DOCUMENTS, f"no document loaded, so there is nothing to {doing}"
            )

    def require_no_refusal(self) -> None:
        """The first column's refusal (a limit), as building its index would raise it."""
        for refusal in self.refusals:
            if refusal is not None:
                raise ExplorerError(*refusal)

    def write(self, write: Callable[[bytes], object]) -> IndexSummary:
        """The index file's bytes, as `write_index` writes them, from the spools."""
        config_bytes = canonical_bytes(self.configs[0].as_json())
        write(index_head(config_bytes))
        index_id = self.index_id(
            0, lambda position, line: write(b",\n" + line if position else line)
        )
        write(CHUNKS_HEAD)
        with (self.folder / "chunks").open("rb") as chunks:
            while piece := chunks.read(_COPY_PIECE):
                write(piece)
        write(index_foot(index_id))
        return IndexSummary(index_id, self.counts[0])

    def index_id(self, column: int, also: Callable[[int, bytes], object] | None = None) -> str:
        """A column's `index_id`: its chunks were hashed as they came; then the documents,
        read back once (each also passed to `also` with its position, when given)."""
        final = self.hashes[column].copy()
        final.update(index_id_middle(canonical_bytes(self.configs[column].as_json())))
        with (self.folder / "documents").open("rb") as documents:
            for position, line in enumerate(documents):
                line = line.removesuffix(b"\n")
                if position:
                    final.update(b",")
                final.update(line)
                if also is not None:
                    also(position, line)
        final.update(INDEX_ID_END)
        digest: str = final.hexdigest()
        return digest


def _spool_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="explorer-ray-"))


def ray_write_index(
    run: RayRun,
    config: ChunkConfig,
    proceed: bool,
    notes: Callable[[str], object],
    write: Callable[[bytes], object],
) -> IndexSummary:
    """`write_index` over a manifest on Ray: the same bytes, the same refusals and
    warnings (passed to `notes`); nothing is written before every document is in."""
    folder = _spool_folder()
    try:
        fold = IndexFold((config,), run.limits, run.max_total_bytes, folder)
        fold.fold(index_pieces(run, config))
        fold.check_loaded(proceed, notes, "chunk")
        fold.require_no_refusal()
        return fold.write(write)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# evaluate: a first task per shard loads, chunks and places the shard's questions, and
# keeps in the object store what scoring needs (BM25: each chunk's counts of the asked
# words; embedding: each chunk's vector); the driver sums BM25's corpus totals; a second
# task per shard scores its chunks against those totals and returns each question's top
# k, which the driver merges, ties broken by chunk order as one process breaks them.

PlacedOrRefused = PlacedQuestion | tuple[ErrorCode, str]
Where = tuple[str, str, int, int, list[int] | None]  # a chunk's id, source_id, start, end, pages


class ShardSummary(NamedTuple):
    pieces: list[DocumentPiece]
    placed: list[tuple[int, PlacedOrRefused]]  # by the question's position in the file
    corpus: list[CorpusTerms | None]  # per column; None for the embedding
    chars: list[int]  # per column: the chunks' lengths, summed


class ShardMaterial(NamedTuple):
    """What scoring a shard's chunks needs, per column."""

    where: list[list[Where]]
    terms: list[ChunkTerms]  # BM25's
    vectors: list[NDArray[np.float32]]  # the embedding's


def require_shardable(retriever_name: str) -> None:
    """Hybrid fuses every chunk's rank under two retrievers, which shards cannot give."""
    if retriever_name not in SHARDED_RETRIEVERS:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"--engine ray evaluates with --retriever {' or '.join(SHARDED_RETRIEVERS)}; "
            f"{retriever_name} runs on the local engine",
        )


SHARDED_RETRIEVERS = ("bm25", "embedding")


def evaluate_shard(
    entries: Sequence[Entry],
    reader: SourceReader,
    configs: Sequence[ChunkConfig],
    max_bytes: int,
    limits: Limits,
    grammar: Grammar,
    questions: Mapping[str, Sequence[tuple[int, Question]]],
    retriever_name: str,
    asked: frozenset[str],
) -> tuple[ShardSummary, ShardMaterial]:
    """What an `evaluate` task does first: a shard's documents loaded and chunked under
    every column, its questions placed, and what scoring will need."""
    pieces: list[DocumentPiece] = []
    placed: list[tuple[int, PlacedOrRefused]] = []
    chunks: list[list[ChunkRecord]] = [[] for _ in configs]
    for piece, record, records in load_shard(entries, reader, configs, max_bytes, limits, grammar):
        pieces.append(piece)
        if record is None:
            continue
        for number, question in questions.get(record["source_id"], ()):
            try:
                placed.append((number, place_question(question, record["text"])))
            except ExplorerError as error:
                placed.append((number, (error.code, error.detail)))
        for column, column_records in zip(chunks, records, strict=True):
            column.extend(column_records)
    where = [
        [(c["chunk_id"], c["source_id"], c["start"], c["end"], c.get("pages")) for c in cs]
        for cs in chunks
    ]
    chars = [sum(c["end"] - c["start"] for c in cs) for cs in chunks]
    texts = [[c["text"] for c in cs] for cs in chunks]
    if retriever_name == "bm25":
        terms = [ChunkTerms.of(bm25_terms(column), asked) for column in texts]
        corpus: list[CorpusTerms | None] = [CorpusTerms.of(t) for t in terms]
        return ShardSummary(pieces, placed, corpus, chars), ShardMaterial(where, terms, [])
    vectors = [embedded(column) for column in texts]
    summary = ShardSummary(pieces, placed, [None for _ in configs], chars)
    return summary, ShardMaterial(where, [], vectors)


Ranked = tuple[float, int, int, Hit]  # -score, shard, position in the shard, the chunk


def score_shard(
    material: ShardMaterial,
    shard: int,
    asked: Sequence[Sequence[str]] | NDArray[np.float32],
    corpus: Sequence[CorpusTerms | None],
    k: int,
    limits: Limits = DEFAULT_LIMITS,
) -> list[list[list[Ranked]]]:
    """What an `evaluate` task does second: per column, each question's top k of the
    shard's chunks, scored as the whole index scores them, a block of questions at a
    time (`best_chunks`, as one process ranks)."""
    found = []
    count = len(asked)
    for column, where in enumerate(material.where):
        totals = corpus[column]
        ranking: Ranking
        if totals is not None:
            assert isinstance(asked, Sequence)
            ranking = BM25Scores(material.terms[column], asked, totals)
        else:
            assert not isinstance(asked, Sequence)
            ranking = Cosines(asked, material.vectors[column])
        found.append(
            [
                [(-score, shard, i, Hit(*where[i][:4], score, where[i][4])) for i, score in best]
                for best in best_chunks(ranking, count, len(where), k, limits)
            ]
        )
    return found


def ray_evaluate(
    run: RayRun,
    questions: QuestionSet,
    columns: Columns,
    retriever_name: RetrieverName,
    k: int,
    grammar: Grammar,
    proceed: bool,
    notes: Callable[[str], object],
) -> Evaluation:
    """`evaluate` over a manifest on Ray: the same figures, ids, warnings and refusals."""
    require_shardable(retriever_name)
    require_written(questions)
    ray = run.ray
    configs = [config for _, config in columns]
    by_source: dict[str, list[tuple[int, Question]]] = {}
    for number, question in enumerate(questions.questions):
        by_source.setdefault(question.source_id, []).append((number, question))
    texts = [q.question for q in questions.questions]
    asked: list[list[str]] | NDArray[np.float32]
    if retriever_name == "bm25":
        asked = bm25_terms(texts)
        words = frozenset(word for question in asked for word in question)
    else:
        asked, words = embedded(texts), frozenset()
    first = ray.remote(max_retries=MAX_RETRIES, num_returns=2)(evaluate_shard)
    shared = [ray.put(value) for value in (run.reader, configs, by_source)]

    def submit(shard: list[Entry]) -> Any:
        return first.remote(
            shard, shared[0], shared[1], run.max_bytes, run.limits, grammar, shared[2],
            retriever_name, words,
        )  # fmt: skip

    placed: dict[int, PlacedOrRefused] = {}
    corpus: list[CorpusTerms | None] = [None for _ in configs]
    chars = [0 for _ in configs]
    materials = []
    folder = _spool_folder()
    try:
        fold = IndexFold(configs, run.limits, run.max_total_bytes, folder, spool_chunks=False)
        for shard, refs, result in _in_order(
            run, submit, shards(run.manifest, run.shard_documents)
        ):
            if isinstance(result, Exception):
                fold.fold(_lost(shard, result))
                continue
            fold.fold(result.pieces)
            placed.update(result.placed)
            for column, totals in enumerate(result.corpus):
                before = corpus[column]
                corpus[column] = totals if before is None or totals is None else before + totals
                chars[column] += result.chars[column]
            materials.append(refs[1])
        fold.check_loaded(proceed, notes, "search")
        for number, question in enumerate(questions.questions):
            where = placed.get(number)
            if where is None:
                raise not_loaded(question)
            if not isinstance(where, PlacedQuestion):
                raise ExplorerError(*where)
        fold.require_no_refusal()
        top = _merged_top_k(run, materials, asked, corpus, k, len(configs), len(texts))
        policies: list[PolicyEvaluation] = []
        for column, (name, config) in enumerate(columns):
            results = [
                question_result(question, [hit for *_, hit in top[column][number]])
                for number, question in sorted(placed.items())
                if isinstance(question, PlacedQuestion)
            ]
            policies.append(
                policy_evaluation(
                    name,
                    config.as_json(),
                    fold.index_id(column),
                    results,
                    fold.counts[column],
                    chars[column],
                )
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return evaluation_of(retriever_name, k, policies)


def _merged_top_k(
    run: RayRun,
    materials: Sequence[Any],
    asked: Sequence[Sequence[str]] | NDArray[np.float32],
    corpus: Sequence[CorpusTerms | None],
    k: int,
    columns: int,
    questions: int,
) -> list[list[list[Ranked]]]:
    """Per column, each question's top k over every shard: best score first, ties by
    shard and position in it, i.e. by chunk order, as one process breaks them."""
    second = run.ray.remote(max_retries=MAX_RETRIES)(score_shard)
    asked_ref, corpus_ref = run.ray.put(asked), run.ray.put(list(corpus))
    top: list[list[list[Ranked]]] = [[[] for _ in range(questions)] for _ in range(columns)]

    def submit(numbered: tuple[int, Any]) -> Any:
        return second.remote(numbered[1], numbered[0], asked_ref, corpus_ref, k, run.limits)

    for _, _, found in _in_order(run, submit, enumerate(materials)):
        if isinstance(found, Exception):
            raise ExplorerError(
                ErrorCode.WORKER_LOST,
                f"scoring a shard's chunks failed ({type(found).__name__}), also after "
                f"{MAX_RETRIES} retries; no figures were written",
            )
        for column, per_question in enumerate(found):
            for number, ranked in enumerate(per_question):
                top[column][number] = sorted(top[column][number] + ranked)[:k]
    return top
