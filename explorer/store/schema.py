"""The index file: its tables, opening it (created once, even under a race), transactions,
and SQLite's own failures as `ExplorerError`s."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..errors import ErrorCode, ExplorerError
from ..retrieval.vectors import APP_ID, transaction

STORE_VERSION = "4"
# How long a statement waits for another connection's write lock before `store_busy`.
BUSY_SECONDS = 5.0

# The tables as store version 1 (before embeddings) made them. A new index runs this and
# then every migration, in one transaction, so it is always what a migrated one is.
SCHEMA_1 = """
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

# Store version 1 to 2: the vector cache, the embedder of each run and version, a
# `failed` version state (SQLite cannot change a CHECK in place, so `versions` is
# rebuilt), chunks' section titles (empty for chunks written before), and an emptied
# search cache (its answers had another shape).
_MIGRATE_1_TO_2 = """
ALTER TABLE runs ADD COLUMN embedder TEXT;
ALTER TABLE runs ADD COLUMN vectors_computed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN vectors_reused INTEGER NOT NULL DEFAULT 0;
CREATE TABLE versions_2 (
    version_id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, source_id TEXT NOT NULL,
    version TEXT NOT NULL, document_revision TEXT NOT NULL, config_digest TEXT NOT NULL,
    state TEXT NOT NULL
        CHECK (state IN ('staged', 'active', 'superseded', 'deleted', 'failed')),
    chunk_count INTEGER NOT NULL, run_id INTEGER NOT NULL REFERENCES runs, embedder TEXT
);
INSERT INTO versions_2 SELECT *, NULL FROM versions;
DROP TABLE versions;
ALTER TABLE versions_2 RENAME TO versions;
ALTER TABLE chunks ADD COLUMN section_title TEXT NOT NULL DEFAULT '';
CREATE INDEX chunks_by_text ON chunks (text_sha256);
CREATE TABLE vectors (
    rowid INTEGER PRIMARY KEY, embedder TEXT NOT NULL, text_sha256 TEXT NOT NULL,
    vector BLOB NOT NULL, UNIQUE (embedder, text_sha256)
);
DELETE FROM search_cache;
UPDATE meta SET value = '2' WHERE key = 'store_version';
"""
# Store version 2 to 3: a PDF's chunks keep their pages (a JSON list; NULL elsewhere), and
# the search cache is emptied (its hits now say their pages).
_MIGRATE_2_TO_3 = """
ALTER TABLE chunks ADD COLUMN pages TEXT;
DELETE FROM search_cache;
UPDATE meta SET value = '3' WHERE key = 'store_version';
"""
# Store version 3 to 4: the tenants a run was limited to (a JSON list; NULL: every tenant),
# whose documents and chunks alone its before and after count.
_MIGRATE_3_TO_4 = """
ALTER TABLE runs ADD COLUMN tenants TEXT;
UPDATE meta SET value = '4' WHERE key = 'store_version';
"""
_MIGRATIONS = {"1": _MIGRATE_1_TO_2, "2": _MIGRATE_2_TO_3, "3": _MIGRATE_3_TO_4}
TABLES = (
    "meta",
    "runs",
    "document_status",
    "documents",
    "versions",
    "chunks",
    "chunks_fts",
    "search_cache",
    "receipts",
    "vectors",
)

_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_IO = (
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_PERM,
)


def storage_error(error: sqlite3.Error, path: Path) -> ExplorerError:
    """SQLite's failure as one of three codes: busy, the disk (`io_error`), or the file."""
    primary = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if primary in _BUSY:
        return ExplorerError(
            ErrorCode.STORE_BUSY, f"the index {str(path)!r} is busy ({error}); try again"
        )
    if primary in _IO:
        return ExplorerError(
            ErrorCode.IO_ERROR, f"the index {str(path)!r} could not be written or read: {error}"
        )
    return ExplorerError(
        ErrorCode.INVALID_STORE, f"the index {str(path)!r} could not be used: {error}"
    )


def connect(path: Path, create: bool = True) -> sqlite3.Connection:
    """The index at `path`, created if the file is new or empty (unless not `create`:
    then a missing or empty file is `io_error`, and nothing is written); any other file
    is refused untouched (`invalid_store`). Raises `sqlite3.Error` for SQLite's own
    failures."""
    if not create and (not path.is_file() or path.stat().st_size == 0):
        raise ExplorerError(ErrorCode.IO_ERROR, f"no index at {str(path)!r}: run ingest first")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS)
    except (sqlite3.Error, OSError) as error:
        raise ExplorerError(ErrorCode.IO_ERROR, f"cannot open {str(path)!r}: {error}") from None
    try:
        _create_or_check(db, path)  # before anything changes the file: a foreign one stays
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        db.close()  # a refused file is not left open
        raise
    return db


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master")}


def _is_blank(db: sqlite3.Connection) -> bool:
    """No page written yet: a file that is new (or zero bytes), not one that another
    program initialised without tables (its header already holds a page)."""
    pages: int = db.execute("PRAGMA page_count").fetchone()[0]
    return pages == 0


def _foreign(path: Path) -> ExplorerError:
    return ExplorerError(
        ErrorCode.INVALID_STORE, f"{str(path)!r} is an SQLite file of something else"
    )


def _create_or_check(db: sqlite3.Connection, path: Path) -> None:
    if not _tables(db):
        if not _is_blank(db):
            raise _foreign(path)
        with transaction(db):  # a second first run waits here, then finds the schema made
            if not _tables(db):
                _run_script(db, SCHEMA_1)
                db.execute("INSERT INTO meta VALUES ('app', ?), ('store_version', '1')", (APP_ID,))
                for migration in _MIGRATIONS.values():
                    _run_script(db, migration)
    names = _tables(db)
    meta = dict(db.execute("SELECT key, value FROM meta")) if "meta" in names else {}
    if meta.get("app") != APP_ID:
        raise _foreign(path)
    if meta.get("store_version") in _MIGRATIONS:
        _migrate(db)
        meta = dict(db.execute("SELECT key, value FROM meta"))
    if meta.get("store_version") != STORE_VERSION:
        raise ExplorerError(
            ErrorCode.INVALID_STORE,
            f"{str(path)!r} has store version {meta.get('store_version')}, "
            f"this program reads {STORE_VERSION}",
        )


def _run_script(db: sqlite3.Connection, script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _migrate(db: sqlite3.Connection) -> None:
    """Each migration from the file's version on, once: a second opener waits on the write
    lock, then finds it done. Foreign keys are not yet enforced on this connection, so
    `versions` can be rebuilt under the chunks that refer to it."""
    with transaction(db):
        while True:
            version = db.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
            if version is None or version[0] not in _MIGRATIONS:
                break
            _run_script(db, _MIGRATIONS[version[0]])
