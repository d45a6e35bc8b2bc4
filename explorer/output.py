"""Chunking documents in other processes for `write_index`, when there are CPUs to spare.

Documents are chunked independently (a chunk's identity depends on its own document and
the config only), so worker processes can encode contiguous runs of them while this
process hashes and writes the bytes in order: the output, and every id, are the same as
a serial build's. The workers are forked, so they read the loaded documents without a
copy; a few batches at most are in flight, so memory stays bounded.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

from .config import ChunkConfig
from .documents import DocumentRecord
from .errors import ErrorCode, ExplorerError
from .index import Encoder, encode_documents
from .limits import Limits

# Below this much text, forking costs more than it saves.
MIN_PARALLEL_CHARS = 2_000_000
BATCH_CHARS = 256 * 1024
MAX_WORKERS = 8

_shared: tuple[Sequence[DocumentRecord], ChunkConfig, Limits] | None = None


def _share(documents: Sequence[DocumentRecord], config: ChunkConfig, limits: Limits) -> None:
    global _shared
    _shared = (documents, config, limits)


Batch = list[list[bytes]] | tuple[str, str]


def _encode_batch(start: int, stop: int) -> Batch:
    """One batch's canonical chunks per document, or an ExplorerError's code and detail
    (which do not survive pickling as the exception itself)."""
    assert _shared is not None
    documents, config, limits = _shared
    try:
        return list(encode_documents(documents[start:stop], config, limits))
    except ExplorerError as error:
        return (error.code.value, error.detail)


def _batches(documents: Sequence[DocumentRecord]) -> Iterator[tuple[int, int]]:
    start, size = 0, 0
    for position, document in enumerate(documents):
        size += len(document["text"])
        if size >= BATCH_CHARS:
            yield start, position + 1
            start, size = position + 1, 0
    if start < len(documents):
        yield start, len(documents)


def _workers() -> int:
    try:
        return min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    except AttributeError:  # not Linux
        return min(os.cpu_count() or 1, MAX_WORKERS)


def parallel_encoder(documents: Sequence[DocumentRecord]) -> Encoder | None:
    """An encoder that uses every CPU this process may run on, or None when there is one
    CPU, no `fork`, or too little text to be worth it."""
    workers = _workers()
    chars = sum(len(document["text"]) for document in documents)
    if workers < 2 or chars < MIN_PARALLEL_CHARS:
        return None
    if "fork" not in multiprocessing.get_all_start_methods():
        return None

    def encode(
        ordered: Sequence[DocumentRecord], config: ChunkConfig, limits: Limits
    ) -> Iterator[list[bytes]]:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, context, _share, (ordered, config, limits)) as pool:
            pending: deque[Future[Batch]] = deque()
            batches = _batches(ordered)
            for start, stop in batches:
                pending.append(pool.submit(_encode_batch, start, stop))
                if len(pending) >= 2 * workers:
                    yield from _results(pending.popleft().result())
            while pending:
                yield from _results(pending.popleft().result())

    return encode


def _results(batch: Batch) -> list[list[bytes]]:
    if isinstance(batch, tuple):
        code, detail = batch
        raise ExplorerError(ErrorCode(code), detail)
    return batch
