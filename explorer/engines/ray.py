"""`--engine ray`: a manifest's documents read, verified and chunked in Ray tasks, the
results folded on the driver into exactly the bytes (and `index_id`) one process writes,
and, for `evaluate`, exactly its figures.

The work per document is the core's (`load_one`, `chunk_stream`, `place_question`,
`bm25_scores`); a task runs it over a shard of consecutive documents in `source_id`
order. The heavy bytes stay with the workers: a task writes its shard's part of the
file (its documents' canonical JSON, and its chunks' under each column's config) to the
run's spool folder, and returns only each document's status and chunk counts; a worker
that cannot reach the folder (another machine, no shared storage) returns the bytes
instead, and the driver writes them there. The driver folds the shards in order as they
complete: it reads each shard's chunks once to hash them into the `index_id` (SHA-256
does not fold, so one stream must pass through one hash, chunks first), then, once
every document is in, writes the file from the spool, hashing the documents on the way.
Its memory is bounded by the shards in flight, whatever the size of the documents.

`ray` is imported only here, and only when a run asks for it (requirements-ray.txt).
"""

from __future__ import annotations

import atexit
import gc
import importlib
import logging
import os
import shutil
import socket
import tempfile
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from functools import cache
from hashlib import sha256
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

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
from ..chunking.tokens import count_tokens
from ..digests import canonical_bytes
from ..errors import ErrorCode, ExplorerError
from ..grammars import Grammar
from ..limits import DEFAULT_LIMITS, Limits, require_chunks_per_index
from ..retrieval.evaluate import (
    Columns,
    Evaluation,
    Hit,
    Judging,
    PolicyEvaluation,
    by_document,
    coverage_of,
    evaluation_of,
    policy_evaluation,
    question_result,
)
from ..retrieval.metrics import Coverage
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

if TYPE_CHECKING:  # numpy is imported where vectors are made: an index's workers make none
    import numpy as np
    from numpy.typing import NDArray

# How long `--address` may take to accept a connection before it is refused.
CONNECT_SECONDS = 5
# Documents per task: enough work to outweigh a task's overhead, few enough that a lost
# worker costs little and the results in flight stay small.
SHARD_DOCUMENTS = 32
# How often Ray runs a task again after its worker died, before the shard's documents
# are reported as `worker_lost`.
MAX_RETRIES = 3
# How long a run that stops early waits for its cancelled tasks, so that none writes to
# the spool folder after it is removed.
CANCEL_SECONDS = 30
_COPY_PIECE = 1024 * 1024

Entry = tuple[int, ManifestDocument]  # a manifest entry and its position in the manifest
Numbered = tuple[int, list[Entry]]  # a shard and its number, which names its spool files
Item = TypeVar("Item")


class ColumnPiece(NamedTuple):
    """One document's chunks under one column's config, as a worker reports them: how
    many, and a refusal of the whole run (`too_many_chunks`) as (code, detail). Their
    canonical JSON goes to the shard's spool file."""

    chunk_count: int
    refusal: tuple[ErrorCode, str] | None


class DocumentPiece(NamedTuple):
    """One document as a worker reports it: its status, the bytes read, and its chunks
    under each column's config (none when it did not load)."""

    position: int
    status: DocumentStatus
    read: int
    columns: tuple[ColumnPiece, ...]


class ShardPieces(NamedTuple):
    """A shard's documents as a task returns them. Their bytes are the shard's parts of
    the index file: its loaded documents' canonical JSON, then its chunks' under each
    column, each part joined by `",\\n"` as the file joins them (canonical JSON holds no
    newline, `json_has_no_newline` in tests, so the `index_id`'s `","` joins are the same
    bytes without their newlines). A worker writes them to the spool folder; one that
    cannot reach it returns them here (`returned`), for the driver to write there."""

    number: int
    pieces: list[DocumentPiece]
    returned: tuple[bytes, ...]


class Loaded(NamedTuple):
    """One document of a shard as a task has it: its piece, its record (None if it did
    not load), and per config its chunk records and their canonical JSON."""

    piece: DocumentPiece
    record: DocumentRecord | None
    chunks: list[list[ChunkRecord]]
    encoded: list[list[bytes]]


def spool_part(folder: str | Path, shard: int, part: int) -> Path:
    """Where a shard's part lies in the spool: 0 its documents, then each column's chunks."""
    return Path(folder) / f"{shard:06d}-{part}"


def _chunked(
    record: DocumentRecord, config: ChunkConfig, id_prefix: bytes, limits: Limits
) -> tuple[ColumnPiece, list[ChunkRecord], list[bytes]]:
    """A loaded document's chunks under one config: its piece, records and JSON."""
    records, parts = [], []
    try:
        for chunk, encoded in chunk_stream(record, config, id_prefix, limits):
            records.append(chunk)
            parts.append(encoded)
    except ExplorerError as error:
        return ColumnPiece(0, (error.code, error.detail)), [], []
    return ColumnPiece(len(parts), None), records, parts


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
) -> Iterator[Loaded]:
    """Each document of a shard loaded on its own and chunked under every config. On
    Ray a document loads under one `grammar` for every column (`loading_grammar`): one
    that grammar does not read fails to load, as `--skip-failed` can leave out."""
    _out_of_the_collectors_way()
    prefixes = [chunk_id_prefix(config) for config in configs]
    for position, entry in entries:
        status, record, read = load_one(
            entry,
            reader,
            max_bytes,
            limits.pages_per_document,
            limits.converted_chars_per_document,
        )
        if record is not None:
            try:
                grammar.admit(record["text"])
            except ExplorerError as error:
                status = DocumentStatus(entry["source_id"], entry["path"], error.code, error.detail)
                record = None
        if record is None:
            yield Loaded(DocumentPiece(position, status, read, ()), None, [], [])
            continue
        chunked = [
            _chunked(record, config, prefix, limits)
            for config, prefix in zip(configs, prefixes, strict=True)
        ]
        piece = DocumentPiece(position, status, read, tuple(c for c, _, _ in chunked))
        yield Loaded(piece, record, [r for _, r, _ in chunked], [e for _, _, e in chunked])


def spooled(folder: str, number: int, loaded: Iterable[Loaded], columns: int) -> ShardPieces:
    """A shard's pieces, and its bytes (each loaded document's canonical JSON, each
    column's chunks') written to the spool folder where this worker reaches it (this
    machine, or storage shared at the same path on every machine), else returned to
    the driver. `loaded` is read once: its records and chunk records are not kept."""
    pieces: list[DocumentPiece] = []
    parts: list[list[bytes]] = [[] for _ in range(columns + 1)]
    for item in loaded:
        pieces.append(item.piece)
        if item.record is not None:
            parts[0].append(canonical_bytes(item.record))
            for part, encoded in zip(parts[1:], item.encoded, strict=True):
                part.extend(encoded)
    joined = [b",\n".join(part) for part in parts]
    if os.path.isdir(folder):
        try:
            _write_parts(folder, number, joined)
        except OSError:
            return ShardPieces(number, pieces, tuple(joined))
        return ShardPieces(number, pieces, ())
    return ShardPieces(number, pieces, tuple(joined))


def _write_parts(folder: str | Path, number: int, parts: Sequence[bytes]) -> None:
    for part, data in enumerate(parts):
        if data:
            spool_part(folder, number, part).write_bytes(data)


def index_shard(
    number: int,
    entries: Sequence[Entry],
    reader: SourceReader,
    config: ChunkConfig,
    max_bytes: int,
    limits: Limits,
    folder: str,
) -> ShardPieces:
    """What an `index` task does: a shard's documents loaded and chunked, their bytes
    spooled."""
    grammar = loading_grammar((config,))
    loaded = load_shard(entries, reader, (config,), max_bytes, limits, grammar)
    return spooled(folder, number, loaded, 1)


def shards(manifest: Manifest, size: int = SHARD_DOCUMENTS) -> list[Numbered]:
    """The manifest's entries in `source_id` order (an index's), cut into numbered shards."""
    ordered = sorted(enumerate(manifest.documents), key=lambda e: e[1]["source_id"])
    return list(enumerate(ordered[start : start + size] for start in range(0, len(ordered), size)))


def _lost(shard: Numbered, error: Exception) -> ShardPieces:
    """A shard whose task failed for good: each of its documents as `worker_lost`."""
    detail = (
        f"the Ray worker processing it failed ({type(error).__name__}), "
        f"also after {MAX_RETRIES} retries"
    )
    number, entries = shard
    pieces = [
        DocumentPiece(
            position,
            DocumentStatus(entry["source_id"], entry["path"], ErrorCode.WORKER_LOST, detail),
            0,
            (),
        )
        for position, entry in entries
    ]
    return ShardPieces(number, pieces, ())


def start_ray(address: str | None) -> Any:
    """The `ray` module, connected: to the cluster at `address`, or a local one on all
    cores. Quiet and offline: no dashboard, no usage statistics. This process reports no
    task events of its own (its workers still do): their buffer costs a quarter of a
    second to stop at exit, a run on two documents taking 1.6 s in all."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_task_events_report_interval_ms", "0")
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
    # Left at exit before Ray's own exit hook, which would first wait half a second for
    # the workers' log lines (it then finds Ray already left); `log_to_driver=False`
    # prints none.
    atexit.register(ray.shutdown)
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
) -> Generator[tuple[Item, Any, Any]]:
    """Each item's task submitted, and each item with its refs and its (first) result,
    or the `RayError` that ended its task for good, in the items' order, a few in flight
    (twice the cluster's CPUs), so the driver never holds many results. Closed early
    (a refusal), it cancels the tasks still in flight and waits for them to stop, so
    that none writes to a spool folder about to be removed."""
    ray = run.ray
    window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    left = iter(items)
    pending = deque((item, submit(item)) for item in islice(left, window))
    try:
        while pending:
            item, refs = pending[0]
            try:
                result = ray.get(_first(refs))
            except ray.exceptions.RayError as error:
                result = error
            pending.popleft()
            pending.extend((later, submit(later)) for later in islice(left, 1))
            yield item, refs, result
    finally:
        if pending:
            refs = [_first(refs) for _, refs in pending]
            for ref in refs:
                ray.cancel(ref)
            ray.wait(refs, num_returns=len(refs), timeout=CANCEL_SECONDS)


def _first(refs: Any) -> Any:
    return refs[0] if isinstance(refs, list) else refs


def _pieces_of(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        while piece := handle.read(_COPY_PIECE):
            yield piece


@dataclass
class IndexFold:
    """Shards in `source_id` order folded into each column's index: their bytes in the
    spool `folder` (the driver writes there those a worker returned), each column's
    `index_id` hashed over its chunks as the shards arrive. The chunks stay in the
    spool for an index file (`write`); without one, each shard's go once hashed."""

    configs: Sequence[ChunkConfig]
    limits: Limits
    max_total_bytes: int
    folder: Path
    keep_chunks: bool = True
    hashes: list[Any] = field(init=False)
    counts: list[int] = field(init=False)
    refusals: list[tuple[ErrorCode, str] | None] = field(init=False)
    # Per part (documents, then each column's chunks): the shards with bytes in it.
    parts: list[list[int]] = field(init=False)
    failures: list[tuple[int, DocumentStatus]] = field(default_factory=list)
    statuses: int = 0
    read: int = 0
    documents: int = 0

    def __post_init__(self) -> None:
        self.hashes = [sha256(INDEX_ID_HEAD) for _ in self.configs]
        self.counts = [0 for _ in self.configs]
        self.refusals = [None for _ in self.configs]
        self.parts = [[] for _ in range(len(self.configs) + 1)]

    def add(self, shard: ShardPieces) -> None:
        """A shard's statuses and counts taken in, its chunks hashed (each column's file
        read once, its newlines left out)."""
        before = list(self.counts)
        documents = self.documents
        for piece in shard.pieces:
            self._count(piece)
        _write_parts(self.folder, shard.number, shard.returned)
        if self.documents > documents:
            self.parts[0].append(shard.number)
        for column, update in enumerate(hash_.update for hash_ in self.hashes):
            chunks = spool_part(self.folder, shard.number, column + 1)
            if self.refusals[column] is None and self.counts[column] > before[column]:
                if before[column]:
                    update(b",")
                for data in _pieces_of(chunks):
                    update(data.replace(b"\n", b""))
                self.parts[column + 1].append(shard.number)
            if not self.keep_chunks:
                chunks.unlink(missing_ok=True)

    def _count(self, piece: DocumentPiece) -> None:
        self.statuses += 1
        self.read += piece.read
        require_total_bytes(self.read, self.max_total_bytes)
        if not piece.status.ok:
            self.failures.append((piece.position, piece.status))
            return
        self.documents += 1
        for column, part in enumerate(piece.columns):
            if self.refusals[column] is None and part.refusal is not None:
                self.refusals[column] = part.refusal
            if self.refusals[column] is not None:  # refused: only the statuses still count
                continue
            try:
                require_chunks_per_index(self.counts[column] + part.chunk_count, self.limits)
            except ExplorerError as error:
                self.refusals[column] = (error.code, error.detail)
                continue
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
        """The index file's bytes, as `write_index` writes them, from the spool: each
        shard's documents read once (written and hashed), its chunks once more (written)."""
        write(index_head(canonical_bytes(self.configs[0].as_json())))
        index_id = self.index_ids(write)[0]
        write(CHUNKS_HEAD)
        for position, number in enumerate(self.parts[1]):
            write(b",\n" if position else b"\n")
            for piece in _pieces_of(spool_part(self.folder, number, 1)):
                write(piece)
        write(index_foot(index_id))
        return IndexSummary(index_id, self.counts[0])

    def index_ids(self, also: Callable[[bytes], object] | None = None) -> list[str]:
        """Each column's `index_id`: its chunks were hashed as they came; then the
        documents, read once (and passed to `also` as the index file joins them)."""
        finals = [hash_.copy() for hash_ in self.hashes]
        for final, config in zip(finals, self.configs, strict=True):
            final.update(index_id_middle(canonical_bytes(config.as_json())))
        for position, number in enumerate(self.parts[0]):
            if position:
                for final in finals:
                    final.update(b",")
                if also is not None:
                    also(b",\n")
            for piece in _pieces_of(spool_part(self.folder, number, 0)):
                if also is not None:
                    also(piece)
                stripped = piece.replace(b"\n", b"")
                for final in finals:
                    final.update(stripped)
        for final in finals:
            final.update(INDEX_ID_END)
        return [final.hexdigest() for final in finals]


def _spool_folder() -> Path:
    """A run's spool: a new folder in the driver's temporary folder (`TMPDIR`)."""
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
    ray = run.ray
    task = ray.remote(max_retries=MAX_RETRIES)(index_shard)
    reader, config_ref = ray.put(run.reader), ray.put(config)
    folder = _spool_folder()

    def submit(shard: Numbered) -> Any:
        number, entries = shard
        return task.remote(
            number, entries, reader, config_ref, run.max_bytes, run.limits, str(folder)
        )

    try:
        fold = IndexFold((config,), run.limits, run.max_total_bytes, folder)
        numbered = shards(run.manifest, run.shard_documents)
        with closing(_in_order(run, submit, numbered)) as arriving:
            for shard, _, result in arriving:
                fold.add(_lost(shard, result) if isinstance(result, Exception) else result)
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
# A chunk's id, source_id, start, end, pages and cl100k_base tokens.
Where = tuple[str, str, int, int, list[int] | None, int]


class ShardSummary(NamedTuple):
    pieces: ShardPieces
    placed: list[tuple[int, PlacedOrRefused]]  # by the question's position in the file
    coverage: dict[int, list[Coverage]]  # by the question's position, per column
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
    shard: int,
    entries: Sequence[Entry],
    reader: SourceReader,
    configs: Sequence[ChunkConfig],
    max_bytes: int,
    limits: Limits,
    grammar: Grammar,
    questions: Mapping[str, Sequence[tuple[int, Question]]],
    retriever_name: str,
    asked: frozenset[str],
    folder: str,
) -> tuple[ShardSummary, ShardMaterial]:
    """What an `evaluate` task does first: a shard's documents loaded and chunked under
    every column, their bytes spooled, its questions placed, and what scoring will need."""
    placed: list[tuple[int, PlacedOrRefused]] = []
    chunks: list[list[ChunkRecord]] = [[] for _ in configs]
    loaded = list(load_shard(entries, reader, configs, max_bytes, limits, grammar))
    pieces = spooled(folder, shard, loaded, len(configs))
    for _, record, records, _ in loaded:
        if record is None:
            continue
        for number, question in questions.get(record["source_id"], ()):
            try:
                placed.append((number, place_question(question, record["text"])))
            except ExplorerError as error:
                placed.append((number, (error.code, error.detail)))
        for column, column_records in zip(chunks, records, strict=True):
            column.extend(column_records)
    documents = [by_document(column) for column in chunks]
    coverage = {
        number: [coverage_of(question, column) for column in documents]
        for number, question in placed
        if isinstance(question, PlacedQuestion)
    }
    where = [
        [
            (c["chunk_id"], c["source_id"], c["start"], c["end"], c.get("pages"), tokens)
            for c in cs
            for tokens in (count_tokens(c["text"]),)
        ]
        for cs in chunks
    ]
    chars = [sum(c["end"] - c["start"] for c in cs) for cs in chunks]
    texts = [[c["text"] for c in cs] for cs in chunks]
    if retriever_name == "bm25":
        terms = [ChunkTerms.of(bm25_terms(column), asked) for column in texts]
        corpus: list[CorpusTerms | None] = [CorpusTerms.of(t) for t in terms]
        summary = ShardSummary(pieces, placed, coverage, corpus, chars)
        return summary, ShardMaterial(where, terms, [])
    vectors = [embedded(column) for column in texts]
    summary = ShardSummary(pieces, placed, coverage, [None for _ in configs], chars)
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
                [(-score, shard, i, Hit(*where[i][:4], score, *where[i][4:])) for i, score in best]
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
    judging: Judging | None = None,
) -> Evaluation:
    """`evaluate` over a manifest on Ray: the same figures, ids, warnings and refusals."""
    judging = judging or Judging()
    judging.check()
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

    folder = _spool_folder()

    def submit(shard: Numbered) -> Any:
        return first.remote(
            *shard, shared[0], shared[1], run.max_bytes, run.limits, grammar, shared[2],
            retriever_name, words, str(folder),
        )  # fmt: skip

    placed: dict[int, PlacedOrRefused] = {}
    coverage: dict[int, list[Coverage]] = {}
    corpus: list[CorpusTerms | None] = [None for _ in configs]
    chars = [0 for _ in configs]
    materials = []
    try:
        fold = IndexFold(configs, run.limits, run.max_total_bytes, folder, keep_chunks=False)
        numbered = shards(run.manifest, run.shard_documents)
        with closing(_in_order(run, submit, numbered)) as arriving:
            for shard, refs, result in arriving:
                if isinstance(result, Exception):
                    fold.add(_lost(shard, result))
                    continue
                fold.add(result.pieces)
                placed.update(result.placed)
                coverage.update(result.coverage)
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
        index_ids = fold.index_ids()
        policies: list[PolicyEvaluation] = []
        for column, (name, config) in enumerate(columns):
            results = [
                question_result(
                    question,
                    [hit for *_, hit in top[column][number]],
                    coverage[number][column],
                    judging.budget,
                )
                for number, question in sorted(placed.items())
                if isinstance(question, PlacedQuestion)
            ]
            policies.append(
                policy_evaluation(
                    name,
                    config.as_json(),
                    index_ids[column],
                    results,
                    fold.counts[column],
                    chars[column],
                )
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return evaluation_of(retriever_name, k, policies, judging, run.limits)


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
