"""`--engine ray`: a manifest's documents read, verified and chunked in Ray tasks, the
results folded on the driver into exactly the bytes (and `index_id`) one process writes.

The work per document is the core's (`load_one`, `document_chunk_bytes`); a task runs
it over a shard of consecutive documents in `source_id` order and returns each
document's status and its canonical JSON, already encoded, so the driver only hashes,
spools and copies bytes. Shards come back in order, at most a few in flight, and the
driver spools the documents and chunks to temporary files (an index's file holds the
documents first, its `index_id` hashes the chunks first), so its memory is bounded by
the shards in flight, whatever the size of the corpus.

`ray` is imported only here, and only when a run asks for it (requirements-ray.txt).
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from itertools import islice
from pathlib import Path
from typing import IO, Any, NamedTuple

from .config import ChunkConfig
from .digests import canonical_bytes
from .errors import ErrorCode, ExplorerError
from .grammars import grammar_for
from .index import (
    CHUNKS_HEAD,
    INDEX_ID_END,
    INDEX_ID_HEAD,
    IndexSummary,
    chunk_id_prefix,
    document_chunk_bytes,
    index_foot,
    index_head,
    index_id_middle,
)
from .limits import DEFAULT_LIMITS, Limits, require_chunks_per_index
from .loading import (
    DocumentStatus,
    SourceReader,
    failure_lines,
    load_one,
    require_loaded,
    require_total_bytes,
)
from .manifest import Manifest, ManifestDocument

# Documents per task: enough work to outweigh a task's overhead, few enough that a lost
# worker costs little and the results in flight stay small.
SHARD_DOCUMENTS = 32
# How often Ray runs a task again after its worker died, before the shard's documents
# are reported as `worker_lost`.
MAX_RETRIES = 3
_COPY_PIECE = 1024 * 1024

Entry = tuple[int, ManifestDocument]  # a manifest entry and its position in the manifest


class DocumentPiece(NamedTuple):
    """One document as a worker returns it: its status, the bytes read, its canonical
    JSON and its chunks' (joined by ",\\n", as an index file holds them; empty when it did
    not load), and a refusal of the whole run (`too_many_chunks`) as (code, detail)."""

    position: int
    status: DocumentStatus
    read: int
    document: bytes
    chunks: bytes
    chunk_count: int
    refusal: tuple[ErrorCode, str] | None


def index_shard(
    entries: Sequence[Entry],
    reader: SourceReader,
    config: ChunkConfig,
    max_bytes: int,
    limits: Limits,
) -> list[DocumentPiece]:
    """What a Ray task does: each document of a shard loaded and chunked, on its own."""
    grammar = grammar_for(config)
    id_prefix = chunk_id_prefix(config)
    pieces = []
    for position, entry in entries:
        status, record, read = load_one(entry, reader, max_bytes, grammar)
        document, chunks, count, refusal = b"", b"", 0, None
        if record is not None:
            try:
                parts = document_chunk_bytes(record, config, id_prefix, limits)
            except ExplorerError as error:
                refusal = (error.code, error.detail)
            else:
                document, chunks, count = canonical_bytes(record), b",\n".join(parts), len(parts)
        pieces.append(DocumentPiece(position, status, read, document, chunks, count, refusal))
    return pieces


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
            b"",
            0,
            None,
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
    try:
        ray.init(
            address=address,
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


@dataclass(frozen=True)
class RayRun:
    """What every Ray run of a manifest takes."""

    ray: Any
    manifest: Manifest
    reader: SourceReader
    max_bytes: int
    max_total_bytes: int
    limits: Limits = DEFAULT_LIMITS


def index_pieces(run: RayRun, config: ChunkConfig) -> Iterator[DocumentPiece]:
    """Every document's piece in `source_id` order, from tasks over shards, a few shards
    in flight (twice the cluster's CPUs) so the driver never holds many."""
    ray = run.ray
    task = ray.remote(max_retries=MAX_RETRIES)(index_shard)
    window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    todo = iter(shards(run.manifest))
    reader, config_ref = ray.put(run.reader), ray.put(config)

    def submit(shard: list[Entry]) -> tuple[list[Entry], Any]:
        return shard, task.remote(shard, reader, config_ref, run.max_bytes, run.limits)

    pending = deque(submit(shard) for shard in islice(todo, window))
    while pending:
        shard, ref = pending.popleft()
        try:
            pieces: list[DocumentPiece] = ray.get(ref)
        except ray.exceptions.RayError as error:
            pieces = _lost(shard, error)
        pending.extend(submit(s) for s in islice(todo, 1))
        yield from pieces


@dataclass
class IndexFold:
    """Pieces in `source_id` order folded into an index: documents and chunks spooled
    to two files in `folder`, the `index_id` hashed as the chunks arrive."""

    config: ChunkConfig
    limits: Limits
    max_total_bytes: int
    folder: Path
    index_hash: Any = field(default_factory=lambda: sha256(INDEX_ID_HEAD))
    failures: list[tuple[int, DocumentStatus]] = field(default_factory=list)
    refusal: tuple[ErrorCode, str] | None = None
    statuses: int = 0
    read: int = 0
    documents: int = 0
    chunks: int = 0

    def fold(self, pieces: Iterator[DocumentPiece]) -> None:
        with (
            (self.folder / "documents").open("wb") as documents,
            (self.folder / "chunks").open("wb") as chunks,
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
        if self.refusal is None and piece.refusal is not None:
            self.refusal = piece.refusal
        if self.refusal is not None:  # the run is refused: only the statuses still count
            return
        try:
            require_chunks_per_index(self.chunks + piece.chunk_count, self.limits)
        except ExplorerError as error:
            self.refusal = (error.code, error.detail)
            return
        documents.write(piece.document + b"\n")
        self.documents += 1
        if piece.chunk_count:
            hashed = piece.chunks.replace(b",\n", b",")
            self.index_hash.update(b"," + hashed if self.chunks else hashed)
            chunks.write((b",\n" if self.chunks else b"\n") + piece.chunks)
            self.chunks += piece.chunk_count

    def check(self, proceed: bool, notes: Callable[[str], object]) -> list[DocumentStatus]:
        """The failures reported as one process reports them (manifest order), and the
        run refused as it would be: failed documents first, then a limit, then nothing
        loaded."""
        failures = [status for _, status in sorted(self.failures, key=lambda f: f[0])]
        for line in failure_lines(failures, proceed):
            notes(line)
        if not proceed:
            require_loaded(failures, self.statuses)
        if self.refusal is not None:
            raise ExplorerError(*self.refusal)
        if not self.documents:
            raise ExplorerError(
                ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
            )
        return failures

    def write(self, write: Callable[[bytes], object]) -> IndexSummary:
        """The index file's bytes, as `write_index` writes them, from the spools."""
        config_bytes = canonical_bytes(self.config.as_json())
        write(index_head(config_bytes))
        for position, line in enumerate(self._documents()):
            write((b",\n" if position else b"") + line)
        write(CHUNKS_HEAD)
        with (self.folder / "chunks").open("rb") as chunks:
            while piece := chunks.read(_COPY_PIECE):
                write(piece)
        index_id = self.finish()
        write(index_foot(index_id))
        return IndexSummary(index_id, self.chunks)

    def finish(self) -> str:
        """The `index_id`: the chunks were hashed as they came; then the documents."""
        final = self.index_hash.copy()
        final.update(index_id_middle(canonical_bytes(self.config.as_json())))
        for position, line in enumerate(self._documents()):
            final.update((b"," if position else b"") + line)
        final.update(INDEX_ID_END)
        digest: str = final.hexdigest()
        return digest

    def _documents(self) -> Iterator[bytes]:
        with (self.folder / "documents").open("rb") as documents:
            for line in documents:
                yield line.removesuffix(b"\n")


def ray_write_index(
    run: RayRun,
    config: ChunkConfig,
    proceed: bool,
    notes: Callable[[str], object],
    write: Callable[[bytes], object],
) -> IndexSummary:
    """`write_index` over a manifest on Ray: the same bytes, the same refusals and
    warnings (passed to `notes`); nothing is written before every document is in."""
    folder = Path(tempfile.mkdtemp(prefix="explorer-ray-"))
    try:
        fold = IndexFold(config, run.limits, run.max_total_bytes, folder)
        fold.fold(index_pieces(run, config))
        fold.check(proceed, notes)
        return fold.write(write)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
