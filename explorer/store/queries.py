"""Reading the index: search (a read; the cache is best-effort and bounded), the run
history and the deletion receipts as typed rows, formatted here once for every caller."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import asdict, dataclass
from enum import StrEnum

from ..errors import ErrorCode, ExplorerError
from .plan import Key, Served
from .schema import BUSY_SECONDS, TABLES

MAX_QUERY_CHARS = 100_000
MAX_QUERY_TERMS = 64
MAX_K = 100
CACHE_ROWS = 1_000  # cached answers kept, newest first; each holds at most MAX_K hits


@dataclass(frozen=True)
class Hit:
    source_id: str
    version: str
    start_line: int
    end_line: int
    start: int
    end: int
    chunk_id: str
    snippet: str
    score: float

    def cells(self) -> dict[str, str]:
        return {
            "Source": self.source_id,
            "Version": self.version,
            "Lines": f"{self.start_line}-{self.end_line}",
            "Offsets": f"[{self.start}, {self.end})",
            "Chunk": self.chunk_id[:12],
            "Snippet": " ".join(self.snippet.split()),
        }


class RunState(StrEnum):
    FINISHED = "finished"
    RUNNING = "running"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class RunRow:
    run_id: int
    started: str
    finished: str | None
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int
    documents_before: int
    documents_after: int | None
    chunks_before: int
    chunks_after: int | None
    state: RunState

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
        }


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
        return {key: str(value) for key, value in asdict(self).items()}


def search_terms(query: str) -> str:
    """A user's words as an FTS5 query: each distinct word a quoted term, any may match."""
    if len(query) > MAX_QUERY_CHARS:
        raise ExplorerError(
            ErrorCode.INVALID_QUERY,
            f"the query has {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}",
        )
    words = list(dict.fromkeys(word.casefold() for word in re.findall(r"\w+", query)))
    if len(words) > MAX_QUERY_TERMS:
        raise ExplorerError(
            ErrorCode.INVALID_QUERY,
            f"the query has {len(words):,} distinct words; the limit is {MAX_QUERY_TERMS}",
        )
    return " OR ".join(f'"{word}"' for word in words)


def search(db: sqlite3.Connection, query: str, tenant: str, k: int) -> list[Hit]:
    """BM25 over one tenant's active chunks, in one read snapshot: it never waits for a
    writer. The answer is cached only if nothing was written since that snapshot."""
    if not 1 <= k <= MAX_K:
        raise ExplorerError(ErrorCode.INVALID_QUERY, f"k must be from 1 to {MAX_K}, not {k}")
    terms = search_terms(query)
    if not terms:
        return []
    db.execute("BEGIN DEFERRED")
    try:
        cached = db.execute(
            "SELECT hits FROM search_cache WHERE tenant = ? AND query = ? AND k = ?",
            (tenant, terms, k),
        ).fetchone()
        if cached is not None:
            return [Hit(**hit) for hit in json.loads(cached[0])]
        rows = db.execute(
            'SELECT c.source_id, v.version, c.start_line, c.end_line, c.start, c."end", '
            "c.chunk_id, snippet(chunks_fts, 0, '[', ']', '…', 12), bm25(chunks_fts) "
            "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            "JOIN versions v ON v.version_id = c.version_id "
            "WHERE chunks_fts MATCH ? AND c.tenant = ? AND v.state = 'active' "
            "ORDER BY bm25(chunks_fts) LIMIT ?",
            (terms, tenant, k),
        ).fetchall()
        hits = [Hit(*row) for row in rows]
        _remember(db, tenant, terms, k, hits)
        return hits
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")


def _remember(db: sqlite3.Connection, tenant: str, terms: str, k: int, hits: list[Hit]) -> None:
    """Best effort, without waiting: a busy index, a newer snapshot, a full disk or a
    read-only file simply leave the answer uncached."""
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.execute(
            "INSERT OR REPLACE INTO search_cache VALUES (?, ?, ?, ?)",
            (tenant, terms, k, json.dumps([asdict(hit) for hit in hits])),
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


def served_versions(db: sqlite3.Connection) -> dict[Key, Served]:
    return {
        (tenant, source_id): Served(revision, config_digest)
        for tenant, source_id, revision, config_digest in db.execute(
            "SELECT d.tenant, d.source_id, v.document_revision, v.config_digest "
            "FROM documents d JOIN versions v ON v.version_id = d.active_version"
        )
    }


def counts(db: sqlite3.Connection) -> dict[str, int]:
    """Rows per table (FTS shadow tables excluded)."""
    return {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}


def tenants(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT DISTINCT tenant FROM documents ORDER BY 1")]


def history(db: sqlite3.Connection, run_in_progress: bool) -> list[RunRow]:
    """Every run; one that never finished is running if a run holds the lock now and it
    is the last, otherwise it was interrupted."""
    cursor = db.execute(
        "SELECT run_id, started, finished, added, updated, unchanged, failed, deleted, "
        "documents_before, documents_after, chunks_before, chunks_after FROM runs "
        "ORDER BY run_id"
    )
    names = [column[0] for column in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor]
    last = rows[-1]["run_id"] if rows else None

    def state(run_id: int, finished: str | None) -> RunState:
        if finished is not None:
            return RunState.FINISHED
        return RunState.RUNNING if run_in_progress and run_id == last else RunState.INTERRUPTED

    return [RunRow(**row, state=state(row["run_id"], row["finished"])) for row in rows]


def receipts(db: sqlite3.Connection) -> list[Receipt]:
    return [
        Receipt(rid, run, tenant, source, tuple(json.loads(versions)), count,
                tuple(json.loads(stores)), at, retention)
        for rid, run, tenant, source, versions, count, stores, at, retention in db.execute(
            "SELECT receipt_id, run_id, tenant, source_id, versions, chunk_count, stores, at, "
            "retention FROM receipts ORDER BY receipt_id"
        )
    ]  # fmt: skip


def document_statuses(db: sqlite3.Connection, run_id: int) -> list[tuple[str, str, str, str]]:
    return db.execute(
        "SELECT tenant, source_id, status, detail FROM document_status WHERE run_id = ?",
        (run_id,),
    ).fetchall()
