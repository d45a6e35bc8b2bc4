"""Reading the index: search (a read; the cache is best-effort and bounded), the run
history and the deletion receipts as typed rows, formatted here once for every caller."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from ..chunking.index import page_label
from ..digests import sha
from ..errors import ErrorCode, ExplorerError
from ..models import strict_shape
from ..retrieval.embedding import Embedder, blob_bytes, embed_texts, from_blobs
from ..retrieval.retrievers import FUSION_DEPTH, fused
from ..retrieval.terms import words as search_words
from ..sources.loading import OK
from .plan import CODE_TEXT, Key, Served, StatusRow
from .schema import BUSY_SECONDS, TABLES

if TYPE_CHECKING:
    import numpy as np

MAX_QUERY_CHARS = 100_000
MAX_QUERY_TERMS = 64
MAX_K = 100
CACHE_ROWS = 1_000  # cached answers kept, newest first; each holds at most MAX_K hits
SNIPPET_CHARS = 160


class SearchMode(StrEnum):
    """How a search ranks: by words, by meaning, or both fused (docs/contract.md §10b)."""

    BM25 = "bm25"
    VECTOR = "vector"
    HYBRID = "hybrid"


@strict_shape
@dataclass(frozen=True)
class Hit:
    """A search result, cited: where its chunk stands in its document's active version."""

    source_id: str
    version: str
    start: Annotated[int, Field(description="first character, in the normalized text")]
    end: Annotated[int, Field(description="one past the last character: [start, end)")]
    start_line: int
    end_line: int
    section: str
    chunk_id: str
    snippet: str
    score: Annotated[
        float, Field(description="higher is better: -BM25, cosine, or fused 1/(60+rank)")
    ]
    pages: Annotated[
        list[int] | None, Field(description="a PDF's chunk: the pages it lies on, from 1")
    ] = None

    def cells(self) -> dict[str, str]:
        """The citation as the CLI and the app show it."""
        return {
            "Source": self.source_id,
            "Version": self.version,
            "Lines": f"{self.start_line}-{self.end_line}",
            "Pages": page_label(self.pages) if self.pages else "",
            "Offsets": f"[{self.start}, {self.end})",
            "Section": self.section,
            "Score": f"{self.score:.4f}",
            "Chunk": self.chunk_id[:12],
            "Snippet": " ".join(self.snippet.split()),
        }


class RunState(StrEnum):
    """Not stored: read from a run's `finished` and whether a run holds the lock now."""

    FINISHED = "finished"
    RUNNING = "running"
    INTERRUPTED = "interrupted"


@strict_shape
@dataclass(frozen=True)
class RunRow:
    run_id: int
    started: str
    finished: str | None
    state: RunState
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int
    documents_before: int
    documents_after: int | None
    chunks_before: int
    chunks_after: int | None
    embedder: str | None
    vectors_computed: int
    vectors_reused: int

    def cells(self) -> dict[str, str]:
        """The run as the CLI's table and the app's show it."""

        def change(before: int, after: int | None) -> str:
            return f"{before} → {after if after is not None else self.state.value}"

        return {
            "Run": str(self.run_id),
            "Started": self.started,
            "Added": str(self.added),
            "Updated": str(self.updated),
            "Unchanged": str(self.unchanged),
            "Failed": str(self.failed),
            "Deleted": str(self.deleted),
            "Documents": change(self.documents_before, self.documents_after),
            "Chunks": change(self.chunks_before, self.chunks_after),
            "Vectors": (
                f"{self.vectors_computed} new, {self.vectors_reused} reused"
                if self.embedder is not None
                else "none"
            ),
        }


@strict_shape
@dataclass(frozen=True)
class Failure:
    """A document of a run that was not written, with its code: it failed to load, or
    its embedder failed (its previous version stayed served)."""

    run_id: int
    tenant: str
    source_id: str
    code: Annotated[ErrorCode, CODE_TEXT]
    detail: str

    def line(self) -> str:
        return f"run {self.run_id}: {self.tenant}/{self.source_id} {self.code}: {self.detail}"

    def cells(self) -> dict[str, str]:
        return {
            "Run": str(self.run_id),
            "Tenant": self.tenant,
            "Source": self.source_id,
            "Code": self.code.value,
            "Detail": self.detail,
        }


@strict_shape
@dataclass(frozen=True)
class Receipt:
    receipt_id: int
    run_id: int
    tenant: str
    source_id: str
    versions: tuple[int, ...]
    chunk_count: int
    stores: tuple[str, ...]
    at: str
    retention: str

    def line(self) -> str:
        return (
            f"deleted {self.tenant}/{self.source_id} in run {self.run_id} at {self.at}: "
            f"versions {list(self.versions)}, {self.chunk_count} chunks, cleared from "
            f"{', '.join(self.stores)}; {self.retention}"
        )

    def cells(self) -> dict[str, str]:
        """The receipt as the app's table shows it: words and numbers."""
        stored = len(self.versions)
        return {
            "Receipt": str(self.receipt_id),
            "Run": str(self.run_id),
            "Tenant": self.tenant,
            "Source": self.source_id,
            "Removed": f"{stored} stored version{'' if stored == 1 else 's'}, "
            f"{self.chunk_count:,} chunk{'' if self.chunk_count == 1 else 's'}",
            "Cleared from": ", ".join(self.stores),
            "At": self.at,
            "Retention": self.retention,
        }


def search_terms(query: str) -> str:
    """A user's words as an FTS5 query: each distinct word a quoted term, any may match.
    The words are those the Retrieval tab's BM25 counts (`retrieval.terms.words`): stop
    words neither rank nor light up in a snippet."""
    if len(query) > MAX_QUERY_CHARS:
        raise ExplorerError(
            ErrorCode.INVALID_QUERY,
            f"the query has {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}",
        )
    words = list(dict.fromkeys(search_words(query)))
    if len(words) > MAX_QUERY_TERMS:
        raise ExplorerError(
            ErrorCode.INVALID_QUERY,
            f"the query has {len(words):,} distinct words; the limit is {MAX_QUERY_TERMS}",
        )
    return " OR ".join(f'"{word}"' for word in words)


def search(
    db: sqlite3.Connection,
    query: str,
    tenant: str,
    k: int,
    mode: SearchMode = SearchMode.BM25,
    embedder: Embedder | None = None,
) -> list[Hit]:
    """One tenant's active chunks, in one read snapshot: it never waits for a writer.
    The answer is cached only if nothing was written since that snapshot."""
    if not 1 <= k <= MAX_K:
        raise ExplorerError(ErrorCode.INVALID_QUERY, f"k must be from 1 to {MAX_K}, not {k}")
    terms = search_terms(query)
    if not terms:
        return []
    if mode is SearchMode.BM25:
        key = terms
    elif embedder is None:
        raise ExplorerError(
            ErrorCode.INVALID_QUERY, f"a {mode.value} search needs an embedder (not 'none')"
        )
    else:
        key = f"{mode.value}\x00{embedder.name}\x00{sha(query)}"
    query_vector = None
    if embedder is not None and mode is not SearchMode.BM25:
        query_vector = embed_texts(embedder, [query])[0]  # before the snapshot: no lock held
    db.execute("BEGIN DEFERRED")
    try:
        cached = db.execute(
            "SELECT hits FROM search_cache WHERE tenant = ? AND query = ? AND k = ?",
            (tenant, key, k),
        ).fetchone()
        if cached is not None:
            return [Hit(**hit) for hit in json.loads(cached[0])]
        if mode is SearchMode.BM25:
            ranked = _bm25(db, terms, tenant, k)
        else:
            assert embedder is not None and query_vector is not None
            by_vector = _nearest(db, query_vector, embedder, tenant, FUSION_DEPTH)
            if mode is SearchMode.VECTOR:
                ranked = by_vector[:k]
            else:
                lists = (_bm25(db, terms, tenant, FUSION_DEPTH), by_vector)
                ranked = fused([[rowid for rowid, _ in each] for each in lists])[:k]
        hits = _hits(db, ranked, _snippets(db, terms, [rowid for rowid, _ in ranked]))
        _remember(db, tenant, key, k, hits)
        return hits
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")


Ranked = list[tuple[int, float]]  # (chunk rowid, score), best first


def _bm25(db: sqlite3.Connection, terms: str, tenant: str, limit: int) -> Ranked:
    return [
        (rowid, -score)
        for rowid, score in db.execute(
            "SELECT c.rowid, bm25(chunks_fts) FROM chunks_fts "
            "JOIN chunks c ON c.rowid = chunks_fts.rowid "
            "JOIN versions v ON v.version_id = c.version_id "
            "WHERE chunks_fts MATCH ? AND c.tenant = ? AND v.state = 'active' "
            "ORDER BY bm25(chunks_fts) LIMIT ?",
            (terms, tenant, limit),
        )
    ]


def _nearest(
    db: sqlite3.Connection, query: np.ndarray, embedder: Embedder, tenant: str, limit: int
) -> Ranked:
    """Brute-force cosine over the tenant's active chunks embedded by `embedder` (the
    vectors are stored unit-length, so a dot product)."""
    import numpy as np

    rows = db.execute(
        "SELECT c.rowid, x.vector FROM chunks c "
        "JOIN versions v ON v.version_id = c.version_id "
        "JOIN vectors x ON x.embedder = v.embedder AND x.text_sha256 = c.text_sha256 "
        "WHERE c.tenant = ? AND v.state = 'active' AND v.embedder = ?",
        (tenant, embedder.name),
    ).fetchall()
    if not rows:
        return []
    size = blob_bytes(embedder.dimensions)
    other = next((len(blob) for _, blob in rows if len(blob) != size), None)
    if other is not None:  # one name, two models: their vectors cannot be compared
        raise ExplorerError(
            ErrorCode.INVALID_EMBEDDER,
            f"embedder {embedder.name!r} gives {embedder.dimensions} dimensions, but this "
            f"tenant's chunks hold vectors of {other // 4} under that name: an embedder "
            "with other dimensions needs a name of its own (then ingest again)",
        )
    matrix = from_blobs([blob for _, blob in rows], embedder.dimensions)
    scores = matrix @ query
    count = min(limit, len(rows))
    best = np.argpartition(-scores, count - 1)[:count]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(rows[i][0], float(scores[i])) for i in best]


def _snippets(db: sqlite3.Connection, terms: str, rowids: list[int]) -> dict[int, str]:
    """FTS5's snippet, with the matched words in [brackets], for the hits that match."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    return dict(
        db.execute(
            "SELECT rowid, snippet(chunks_fts, 0, '[', ']', '…', 12) FROM chunks_fts "
            f"WHERE chunks_fts MATCH ? AND rowid IN ({marks})",
            (terms, *rowids),
        ).fetchall()
    )


def _hits(db: sqlite3.Connection, ranked: Ranked, snippets: dict[int, str]) -> list[Hit]:
    hits = []
    for rowid, score in ranked:
        row = db.execute(
            'SELECT c.source_id, v.version, c.start, c."end", c.start_line, c.end_line, '
            "c.section_title, c.chunk_id, c.text, c.pages FROM chunks c "
            "JOIN versions v ON v.version_id = c.version_id WHERE c.rowid = ?",
            (rowid,),
        ).fetchone()
        source_id, version, start, end, start_line, end_line, section, chunk_id, text, pages = row
        snippet = snippets.get(rowid) or _prefix(text)
        hits.append(
            Hit(
                source_id,
                version,
                start,
                end,
                start_line,
                end_line,
                section,
                chunk_id,
                snippet,
                score,
                None if pages is None else json.loads(pages),
            )
        )
    return hits


def _prefix(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


def _remember(db: sqlite3.Connection, tenant: str, key: str, k: int, hits: list[Hit]) -> None:
    """Best effort, without waiting: a busy index, a newer snapshot, a full disk or a
    read-only file simply leave the answer uncached."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.execute(
            "INSERT OR REPLACE INTO search_cache VALUES (?, ?, ?, ?)",
            (tenant, key, k, json.dumps([asdict(hit) for hit in hits])),
        )
        db.execute(
            "DELETE FROM search_cache WHERE rowid <= (SELECT max(rowid) FROM search_cache) - ?",
            (CACHE_ROWS,),
        )
        db.execute("COMMIT")
    except sqlite3.OperationalError:
        pass  # the finally of `search` rolls back
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")


@strict_shape
@dataclass(frozen=True)
class ServedDocument:
    """A document the index serves to a tenant: its active version, and the run that
    made that version active."""

    source_id: str
    version: str
    revision: Annotated[str, Field(description="the served text's document_revision")]
    chunk_count: int
    embedder: Annotated[str | None, Field(description="what embedded its chunks, or null")]
    run_id: Annotated[int, Field(description="the run that made this version active")]

    def cells(self) -> dict[str, str]:
        """The document as the CLI's table and the app's show it."""
        return {
            "Source": self.source_id,
            "Version": self.version,
            "Revision": self.revision[:12],
            "Chunks": str(self.chunk_count),
            "Embedder": self.embedder or "none",
            "Run": str(self.run_id),
        }


def served_documents(db: sqlite3.Connection, tenant: str) -> list[ServedDocument]:
    """What the index serves to `tenant`, by source_id."""
    return [
        ServedDocument(*row)
        for row in db.execute(
            "SELECT d.source_id, v.version, v.document_revision, v.chunk_count, v.embedder, "
            "v.run_id FROM documents d JOIN versions v ON v.version_id = d.active_version "
            "WHERE d.tenant = ? ORDER BY d.source_id",
            (tenant,),
        )
    ]


def served_versions(db: sqlite3.Connection) -> dict[Key, Served]:
    return {
        (tenant, source_id): Served(revision, config_digest, embedder)
        for tenant, source_id, revision, config_digest, embedder in db.execute(
            "SELECT d.tenant, d.source_id, v.document_revision, v.config_digest, v.embedder "
            "FROM documents d JOIN versions v ON v.version_id = d.active_version"
        )
    }


def counts(db: sqlite3.Connection) -> dict[str, int]:
    """Rows per table (FTS shadow tables excluded)."""
    return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


def tenants(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT DISTINCT tenant FROM documents ORDER BY 1")]


def history(
    db: sqlite3.Connection, run_in_progress: bool, tenants: frozenset[str] | None = None
) -> list[RunRow]:
    """Every run, or with `tenants` only the runs limited to some of them, whose totals
    count no other tenant's documents (a run over every tenant counts the whole index).
    A run that never finished is running if a run holds the lock now and it is the last
    of all, otherwise it was interrupted."""
    seen = None if tenants is None else json.dumps(sorted(tenants))
    cursor = db.execute(
        "SELECT run_id, started, finished, added, updated, unchanged, failed, deleted, "
        "documents_before, documents_after, chunks_before, chunks_after, embedder, "
        "vectors_computed, vectors_reused FROM runs "
        "WHERE ? IS NULL OR (tenants IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
        "json_each(runs.tenants) WHERE value NOT IN (SELECT value FROM json_each(?)))) "
        "ORDER BY run_id",
        (seen, seen),
    )
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor]
    last = db.execute("SELECT max(run_id) FROM runs").fetchone()[0]

    def state(run_id: int, finished: str | None) -> RunState:
        if finished is not None:
            return RunState.FINISHED
        return RunState.RUNNING if run_in_progress and run_id == last else RunState.INTERRUPTED

    return [RunRow(**row, state=state(row["run_id"], row["finished"])) for row in rows]


def receipts(db: sqlite3.Connection) -> list[Receipt]:
    return [
        Receipt(
            rid,
            run,
            tenant,
            source,
            tuple(json.loads(versions)),
            count,
            tuple(json.loads(stores)),
            at,
            retention,
        )
        for rid, run, tenant, source, versions, count, stores, at, retention in db.execute(
            "SELECT receipt_id, run_id, tenant, source_id, versions, chunk_count, stores, at, "
            "retention FROM receipts ORDER BY receipt_id"
        )
    ]


def _status(text: str) -> ErrorCode | Literal["ok"]:
    """A status as the run log holds it (text), typed again."""
    return OK if text == OK else ErrorCode(text)


def document_statuses(db: sqlite3.Connection, run_id: int) -> list[StatusRow]:
    return [
        StatusRow(tenant, source_id, _status(status), detail)
        for tenant, source_id, status, detail in db.execute(
            "SELECT tenant, source_id, status, detail FROM document_status WHERE run_id = ?",
            (run_id,),
        )
    ]


def failures(db: sqlite3.Connection) -> list[Failure]:
    """Every document a run did not write, oldest run first."""
    return [
        Failure(run_id, tenant, source_id, ErrorCode(code), detail)
        for run_id, tenant, source_id, code, detail in db.execute(
            "SELECT run_id, tenant, source_id, status, detail FROM document_status "
            "WHERE status != ? ORDER BY run_id, rowid",
            (OK,),
        )
    ]
