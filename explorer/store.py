"""A persistent, versioned, incremental index in SQLite (the lab of seed 004).

One file (`.explorer/index.db` by default) holds every run, every document version and
the chunks of the *active* versions, with an FTS5 index for search. Readers only ever see
whole versions: a new version is staged, verified, and made active in one transaction
that also supersedes the old one. Every chunk row is scoped to a tenant (the document's
`access_scope`), and search never crosses tenants.

This module does I/O by design; the chunks themselves come from the pure core.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .config import ChunkConfig
from .digests import digest, sha
from .documents import DocumentRecord, revision_of
from .errors import ErrorCode, ExplorerError
from .index import ChunkRecord, document_chunks
from .loading import LoadResult
from .manifest import Manifest

DEFAULT_DB = Path(".explorer") / "index.db"
DEFAULT_TENANT = "default"
APP_ID = "chunk-boundary-explorer"
STORE_VERSION = "1"
STORES_CLEARED = ("chunks", "chunks_fts", "search_cache", "documents")
RETENTION = (
    "freed pages stay in the database file until VACUUM, and old WAL frames until the "
    "next checkpoint; no other copy is kept"
)
# Crash tests set this to a point name to make ingest stop there and wait to be killed.
PAUSE_VARIABLE = "EXPLORER_INGEST_PAUSE"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY, started TEXT NOT NULL, finished TEXT, config TEXT NOT NULL,
    added INTEGER NOT NULL DEFAULT 0, updated INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    documents_before INTEGER NOT NULL, chunks_before INTEGER NOT NULL,
    documents_after INTEGER, chunks_after INTEGER
);
CREATE TABLE document_status (
    run_id INTEGER NOT NULL REFERENCES runs, tenant TEXT NOT NULL, source_id TEXT NOT NULL,
    status TEXT NOT NULL, detail TEXT NOT NULL
);
CREATE TABLE documents (
    tenant TEXT NOT NULL, source_id TEXT NOT NULL, active_version INTEGER,
    PRIMARY KEY (tenant, source_id)
);
CREATE TABLE versions (
    version_id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, source_id TEXT NOT NULL,
    version TEXT NOT NULL, document_revision TEXT NOT NULL, config_digest TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('staged', 'active', 'superseded', 'deleted')),
    chunk_count INTEGER NOT NULL, run_id INTEGER NOT NULL REFERENCES runs
);
CREATE TABLE chunks (
    rowid INTEGER PRIMARY KEY, chunk_key TEXT NOT NULL UNIQUE,
    version_id INTEGER NOT NULL REFERENCES versions, tenant TEXT NOT NULL,
    source_id TEXT NOT NULL, chunk_id TEXT NOT NULL, ord INTEGER NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, text TEXT NOT NULL, text_sha256 TEXT NOT NULL
);
CREATE INDEX chunks_by_version ON chunks (version_id);
CREATE VIRTUAL TABLE chunks_fts USING fts5 (text);
CREATE TABLE search_cache (
    tenant TEXT NOT NULL, query TEXT NOT NULL, k INTEGER NOT NULL, hits TEXT NOT NULL,
    PRIMARY KEY (tenant, query, k)
);
CREATE TABLE receipts (
    receipt_id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs,
    tenant TEXT NOT NULL, source_id TEXT NOT NULL, versions TEXT NOT NULL,
    chunk_count INTEGER NOT NULL, stores TEXT NOT NULL, at TEXT NOT NULL,
    retention TEXT NOT NULL
);
"""
TABLES = (
    "meta", "runs", "document_status", "documents", "versions", "chunks", "chunks_fts",
    "search_cache", "receipts",
)  # fmt: skip


@dataclass(frozen=True)
class RunSummary:
    run_id: int
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int

    def line(self) -> str:
        return (
            f"run {self.run_id}: added {self.added}, updated {self.updated}, "
            f"unchanged {self.unchanged}, failed {self.failed}, deleted {self.deleted}"
        )


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


@contextmanager
def storage_errors(path: Path) -> Iterator[None]:
    """SQLite's own failures (locked, read-only, disk full, damaged) as a clear refusal."""
    try:
        yield
    except sqlite3.Error as error:
        raise ExplorerError(
            ErrorCode.INVALID_STORE, f"the index {str(path)!r} could not be used: {error}"
        ) from None


def tenant_of(access_scope: str | None) -> str:
    return access_scope or DEFAULT_TENANT


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _pause(point: str) -> None:
    if os.environ.get(PAUSE_VARIABLE) == point:
        print(f"paused at {point}", flush=True)
        time.sleep(3600)


def _search_terms(query: str) -> str:
    """A user's words as an FTS5 query: each a quoted term, any may match (ranked by BM25)."""
    words = re.findall(r"\w+", query)
    return " OR ".join(f'"{word}"' for word in words)


class Store:
    """The index file. Use as a context manager; every change is a transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, isolation_level=None)
        except (sqlite3.DatabaseError, OSError) as error:
            raise ExplorerError(ErrorCode.IO_ERROR, f"cannot open {str(path)!r}: {error}") from None
        try:
            self._open()  # before anything changes the file: a foreign one stays untouched
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
        except BaseException as error:
            self._db.close()  # a refused file is not left open
            if isinstance(error, sqlite3.DatabaseError):
                raise ExplorerError(
                    ErrorCode.INVALID_STORE, f"{str(path)!r} is not a usable index: {error}"
                ) from None
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self._db.close()

    def _open(self) -> None:
        names = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        if not names:
            with self._transaction():
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute(
                    "INSERT INTO meta VALUES ('app', ?), ('store_version', ?)",
                    (APP_ID, STORE_VERSION),
                )
            return
        meta = dict(self._db.execute("SELECT key, value FROM meta")) if "meta" in names else {}
        if meta.get("app") != APP_ID:
            raise ExplorerError(
                ErrorCode.INVALID_STORE, f"{str(self.path)!r} is an SQLite file of something else"
            )
        if meta.get("store_version") != STORE_VERSION:
            raise ExplorerError(
                ErrorCode.INVALID_STORE,
                f"{str(self.path)!r} has store version {meta.get('store_version')}, "
                f"this program reads {STORE_VERSION}",
            )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- reading ------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Rows per table (FTS shadow tables excluded)."""
        return {
            table: self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in TABLES
        }

    def _active_totals(self) -> tuple[int, int]:
        documents = self._db.execute(
            "SELECT count(*) FROM documents WHERE active_version IS NOT NULL"
        ).fetchone()[0]
        chunks = self._db.execute(
            "SELECT count(*) FROM chunks JOIN versions USING (version_id) "
            "WHERE versions.state = 'active'"
        ).fetchone()[0]
        return documents, chunks

    def tenants(self) -> list[str]:
        return [
            row[0] for row in self._db.execute("SELECT DISTINCT tenant FROM documents ORDER BY 1")
        ]

    def integrity(self) -> str:
        result: str = self._db.execute("PRAGMA integrity_check").fetchone()[0]
        return result

    def search(self, query: str, tenant: str, k: int = 5) -> list[Hit]:
        """BM25 over the active chunks of one tenant; answers are cached until it changes."""
        terms = _search_terms(query)
        if not terms:
            return []
        cached = self._db.execute(
            "SELECT hits FROM search_cache WHERE tenant = ? AND query = ? AND k = ?",
            (tenant, terms, k),
        ).fetchone()
        if cached is not None:
            return [Hit(**hit) for hit in json.loads(cached[0])]
        rows = self._db.execute(
            'SELECT c.source_id, v.version, c.start_line, c.end_line, c.start, c."end", '
            "c.chunk_id, snippet(chunks_fts, 0, '[', ']', '…', 12), bm25(chunks_fts) "
            "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            "JOIN versions v ON v.version_id = c.version_id "
            "WHERE chunks_fts MATCH ? AND c.tenant = ? AND v.state = 'active' "
            "ORDER BY bm25(chunks_fts) LIMIT ?",
            (terms, tenant, k),
        ).fetchall()
        hits = [Hit(*row) for row in rows]
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO search_cache VALUES (?, ?, ?, ?)",
                (tenant, terms, k, json.dumps([hit.__dict__ for hit in hits])),
            )
        return hits

    def history(self) -> list[dict[str, Any]]:
        columns = (
            "run_id, started, finished, added, updated, unchanged, failed, deleted, "
            "documents_before, documents_after, chunks_before, chunks_after"
        )
        cursor = self._db.execute(f"SELECT {columns} FROM runs ORDER BY run_id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def receipts(self) -> list[dict[str, Any]]:
        cursor = self._db.execute("SELECT * FROM receipts ORDER BY receipt_id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def document_statuses(self, run_id: int) -> list[tuple[str, str, str, str]]:
        return self._db.execute(
            "SELECT tenant, source_id, status, detail FROM document_status WHERE run_id = ?",
            (run_id,),
        ).fetchall()

    # -- writing ------------------------------------------------------------------------

    def ingest(self, manifest: Manifest, load: LoadResult, config: ChunkConfig) -> RunSummary:
        """One run: skip what is unchanged, stage-verify-switch what changed, record what
        failed (its old version stays served), and delete what the manifest removes."""
        doomed = self._deletions(manifest)
        documents_before, chunks_before = self._active_totals()
        scopes = {d.source_id: tenant_of(d.access_scope) for d in manifest.documents}
        with self._transaction():
            run_id = self._db.execute(
                "INSERT INTO runs (started, config, documents_before, chunks_before) "
                "VALUES (?, ?, ?, ?)",
                (_now(), json.dumps(config.as_json()), documents_before, chunks_before),
            ).lastrowid
            assert run_id is not None
            self._db.executemany(
                "INSERT INTO document_status VALUES (?, ?, ?, ?, ?)",
                [(run_id, scopes[s.source_id], s.source_id, s.status, s.detail)
                 for s in load.statuses],
            )  # fmt: skip
        tally = {"added": 0, "updated": 0, "unchanged": 0, "deleted": 0}
        for document in load.documents:
            tally[
                self._ingest_document(run_id, scopes[document["source_id"]], document, config)
            ] += 1
        for tenant, source_id in doomed:
            self._delete(run_id, tenant, source_id)
            tally["deleted"] += 1
        documents_after, chunks_after = self._active_totals()
        with self._transaction():
            self._db.execute(
                "UPDATE runs SET finished = ?, added = ?, updated = ?, unchanged = ?, "
                "failed = ?, deleted = ?, documents_after = ?, chunks_after = ? WHERE run_id = ?",
                (_now(), tally["added"], tally["updated"], tally["unchanged"],
                 len(load.failures), tally["deleted"], documents_after, chunks_after, run_id),
            )  # fmt: skip
        return RunSummary(run_id, tally["added"], tally["updated"], tally["unchanged"],
                          len(load.failures), tally["deleted"])  # fmt: skip

    def _deletions(self, manifest: Manifest) -> list[tuple[str, str]]:
        """What this run deletes; refused before anything is written if any is unknown."""
        live = {
            (tenant, source_id)
            for tenant, source_id in self._db.execute(
                "SELECT tenant, source_id FROM documents WHERE active_version IS NOT NULL"
            )
        }
        doomed = []
        for gone in manifest.deleted:
            key = (tenant_of(gone.access_scope), gone.source_id)
            if key not in live:
                raise ExplorerError(
                    ErrorCode.DELETE_UNKNOWN_DOCUMENT,
                    f"the manifest deletes {gone.source_id!r} (tenant {key[0]!r}), "
                    "which the index does not serve",
                )
            doomed.append(key)
        if manifest.complete:
            listed = {(tenant_of(d.access_scope), d.source_id) for d in manifest.documents}
            scopes = {tenant for tenant, _ in listed}
            doomed += sorted(k for k in live - listed if k[0] in scopes and k not in doomed)
        return doomed

    def _ingest_document(
        self, run_id: int, tenant: str, document: DocumentRecord, config: ChunkConfig
    ) -> str:
        source_id = document["source_id"]
        config_digest = digest(config.as_json())
        active = self._db.execute(
            "SELECT v.version_id, v.document_revision, v.config_digest FROM documents d "
            "JOIN versions v ON v.version_id = d.active_version "
            "WHERE d.tenant = ? AND d.source_id = ?",
            (tenant, source_id),
        ).fetchone()
        if active is not None and active[1:] == (document["document_revision"], config_digest):
            return "unchanged"
        chunks = document_chunks(document, config)
        with self._transaction():  # an earlier, interrupted run's staging is rebuilt
            self._drop_versions(tenant, source_id, "staged")
            version_id = self._db.execute(
                "INSERT INTO versions (tenant, source_id, version, document_revision, "
                "config_digest, state, chunk_count, run_id) VALUES (?, ?, ?, ?, ?, 'staged', ?, ?)",
                (tenant, source_id, document["version"], document["document_revision"],
                 config_digest, len(chunks), run_id),
            ).lastrowid  # fmt: skip
            assert version_id is not None
            self._write_chunks(tenant, version_id, chunks)
        _pause("staged")
        self._verify(version_id, document, len(chunks))
        with self._transaction():
            if active is not None:
                self._drop_chunks(active[0])
                self._db.execute(
                    "UPDATE versions SET state = 'superseded' WHERE version_id = ?", (active[0],)
                )
            self._db.execute(
                "UPDATE versions SET state = 'active' WHERE version_id = ?", (version_id,)
            )
            self._db.execute(
                "INSERT INTO documents VALUES (?, ?, ?) ON CONFLICT (tenant, source_id) "
                "DO UPDATE SET active_version = excluded.active_version",
                (tenant, source_id, version_id),
            )
            self._db.execute("DELETE FROM search_cache WHERE tenant = ?", (tenant,))
        return "added" if active is None else "updated"

    def _write_chunks(self, tenant: str, version_id: int, chunks: Sequence[ChunkRecord]) -> None:
        for position, chunk in enumerate(chunks):
            if position == len(chunks) // 2:
                _pause("mid-stage")
            rowid = self._db.execute(
                "INSERT INTO chunks (chunk_key, version_id, tenant, source_id, chunk_id, ord, "
                "start, \"end\", start_line, end_line, text, text_sha256) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sha(f"{tenant}\x00{chunk['chunk_id']}"), version_id, tenant, chunk["source_id"],
                 chunk["chunk_id"], chunk["order"], chunk["start"], chunk["end"],
                 chunk["start_line"], chunk["end_line"], chunk["text"], chunk["text_sha256"]),
            ).lastrowid  # fmt: skip
            self._db.execute(
                "INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)", (rowid, chunk["text"])
            )

    def _verify(self, version_id: int, document: DocumentRecord, expected: int) -> None:
        """Read the staged version back: every chunk is its source slice, digests hold."""
        text = document["text"]
        rows = self._db.execute(
            'SELECT start, "end", text, text_sha256 FROM chunks WHERE version_id = ? ORDER BY ord',
            (version_id,),
        ).fetchall()
        stored_revision = self._db.execute(
            "SELECT document_revision FROM versions WHERE version_id = ?", (version_id,)
        ).fetchone()[0]
        good = (
            len(rows) == expected
            and stored_revision == revision_of(document)
            and all(text[s:e] == t and sha(t) == h for s, e, t, h in rows)
        )
        if not good:
            raise ExplorerError(
                ErrorCode.INVALID_STORE,
                f"the staged version of {document['source_id']!r} did not verify; "
                "the active version stays served",
            )

    def _drop_chunks(self, version_id: int) -> int:
        rowids = [r[0] for r in self._db.execute(
            "SELECT rowid FROM chunks WHERE version_id = ?", (version_id,))]  # fmt: skip
        self._db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])
        self._db.execute("DELETE FROM chunks WHERE version_id = ?", (version_id,))
        return len(rowids)

    def _drop_versions(self, tenant: str, source_id: str, state: str) -> list[int]:
        ids = [r[0] for r in self._db.execute(
            "SELECT version_id FROM versions WHERE tenant = ? AND source_id = ? AND state = ?",
            (tenant, source_id, state))]  # fmt: skip
        for version_id in ids:
            self._drop_chunks(version_id)
            self._db.execute("DELETE FROM versions WHERE version_id = ?", (version_id,))
        return ids

    def _delete(self, run_id: int, tenant: str, source_id: str) -> None:
        """Remove a document from every store, and write a receipt that says so."""
        with self._transaction():
            versions = [r[0] for r in self._db.execute(
                "SELECT version_id FROM versions WHERE tenant = ? AND source_id = ? "
                "AND state IN ('active', 'staged')", (tenant, source_id))]  # fmt: skip
            removed = sum(self._drop_chunks(v) for v in versions)
            self._db.executemany(
                "UPDATE versions SET state = 'deleted' WHERE version_id = ?",
                [(v,) for v in versions],
            )
            self._db.execute(
                "DELETE FROM documents WHERE tenant = ? AND source_id = ?", (tenant, source_id)
            )
            self._db.execute("DELETE FROM search_cache WHERE tenant = ?", (tenant,))
            self._db.execute(
                "INSERT INTO receipts (run_id, tenant, source_id, versions, chunk_count, stores, "
                "at, retention) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, tenant, source_id, json.dumps(versions), removed,
                 json.dumps(STORES_CLEARED), _now(), RETENTION),
            )  # fmt: skip
