"""Applying a plan: log the run, stage-verify-switch each change, delete, then purge.

The caller holds the run lock (one run at a time), and every switch re-reads the active
version inside its own `BEGIN IMMEDIATE`, so a reader sees the whole old or the whole new
version and a document is served in exactly one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pydantic import Field

from ..chunking.config import ChunkConfig
from ..chunking.index import ChunkRecord, document_chunks
from ..digests import sha
from ..errors import ErrorCode, ExplorerError
from ..models import StrictModel
from ..retrieval.embedding import EMBEDDER_FAILURES, Embedder
from ..retrieval.vectors import transaction
from ..sources.documents import DocumentRecord, revision_of
from .embed import ORPHAN_VECTORS_KEPT, Embedded, drop_orphans, embed_chunks, vectors_verified
from .plan import Outcome, Plan, Step

# Called with a point's name ("mid-stage", "staged", "embedded-batch") as a run passes
# it; crash tests pass one that stops the process there.
Checkpoint = Callable[[str], None]

STORES_CLEARED = ("chunks", "chunks_fts", "search_cache", "documents", "vectors")
PURGE_PENDING = (
    "purge pending: the text may remain in freed pages, full-text segments and the WAL "
    "until a run's purge step (FTS optimize, VACUUM, WAL truncate) completes"
)
PURGED = (
    "purged at {at}: full-text segments merged (FTS optimize), the file rebuilt (VACUUM) "
    "and the WAL truncated; no copy of the text remains in this index, only its version "
    "rows (ids, revisions), the run log and this receipt"
)


def no_checkpoint(point: str) -> None:
    """The default: a run passes its checkpoints without stopping."""


# Called before each document a run writes, once the ones before are committed: raises an
# `ExplorerError` (the app's scratch cap: `scratch_full`) when the index may grow no more.
Room = Callable[[], None]


def no_limit() -> None:
    """The default: the index grows as far as the disk lets it."""


class RunSummary(StrictModel):
    """What a run did; with `kind` and its documents' statuses, `ingest --json`."""

    run_id: int
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int
    embedder: str | None = Field(description="the run's embedder; null: no vectors")
    vectors_computed: int = Field(description="vectors the embedder computed in this run")
    vectors_reused: int = Field(description="staged chunks whose vector came from the cache")

    def line(self) -> str:
        return (
            f"run {self.run_id}: added {self.added}, updated {self.updated}, "
            f"unchanged {self.unchanged}, failed {self.failed}, deleted {self.deleted}"
        )

    def vectors_line(self) -> str:
        if self.embedder is None:
            return "vectors: none (no embedder)"
        return (
            f"vectors: computed {self.vectors_computed}, reused {self.vectors_reused} "
            f"({self.embedder})"
        )


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def active_totals(db: sqlite3.Connection, tenants: str | None) -> tuple[int, int]:
    """Active documents and chunks: of the tenants in the JSON list `tenants`, or of all
    when it is None."""
    documents: int = db.execute(
        f"SELECT count(*) FROM documents WHERE active_version IS NOT NULL AND {_among('tenant')}",
        (tenants, tenants),
    ).fetchone()[0]
    chunks: int = db.execute(
        "SELECT count(*) FROM chunks JOIN versions USING (version_id) "
        f"WHERE versions.state = 'active' AND {_among('chunks.tenant')}",
        (tenants, tenants),
    ).fetchone()[0]
    return documents, chunks


def _among(column: str) -> str:
    """`column` is one of a JSON list given twice as parameters (null: any value)."""
    return f"(? IS NULL OR {column} IN (SELECT value FROM json_each(?)))"


def apply_plan(
    db: sqlite3.Connection,
    plan: Plan,
    config: ChunkConfig,
    embedder: Embedder | None,
    checkpoint: Checkpoint,
    room: Room = no_limit,
) -> RunSummary:
    """The run, logged. When `room` refuses, no other document is written: the ones
    written stay served, the others are logged as failed with its code (their previous
    versions stay served), deletions still happen, the run is finished, and its refusal
    is raised, saying so."""
    tenants = None if plan.tenants is None else json.dumps(sorted(plan.tenants))
    documents_before, chunks_before = active_totals(db, tenants)
    with transaction(db):
        run_id = db.execute(
            "INSERT INTO runs (started, config, documents_before, chunks_before, embedder, "
            "tenants) VALUES (?, ?, ?, ?, ?, ?)",
            (
                now(),
                json.dumps(config.as_json()),
                documents_before,
                chunks_before,
                plan.embedder,
                tenants,
            ),
        ).lastrowid
        assert run_id is not None
        db.executemany(
            "INSERT INTO document_status VALUES (?, ?, ?, ?, ?)",
            [(run_id, s.tenant, s.source_id, s.status, s.detail) for s in plan.statuses],
        )
    computed = reused = failed = 0
    written = {Outcome.ADDED: 0, Outcome.UPDATED: 0}
    full: ExplorerError | None = None
    for step in plan.steps:
        if step.document is not None:
            full = full or _refusal(room)
            if full is not None:
                with transaction(db):
                    _log_failure(db, run_id, step, full, "not written")
                failed += 1
                continue
            written_ok, embedded = _write(
                db, run_id, step, step.document, plan, config, embedder, checkpoint
            )
            computed += embedded.computed
            reused += embedded.reused
            if written_ok:
                written[step.outcome] += 1
            else:
                failed += 1
        elif step.outcome is Outcome.DELETED:
            _delete(db, run_id, step.tenant, step.source_id)
    with transaction(db):
        drop_orphans(db, ORPHAN_VECTORS_KEPT)
    if plan.count(Outcome.DELETED) or _purge_pending(db):
        purge(db)
    documents_after, chunks_after = active_totals(db, tenants)
    summary = RunSummary(
        run_id=run_id,
        added=written[Outcome.ADDED],
        updated=written[Outcome.UPDATED],
        unchanged=plan.count(Outcome.UNCHANGED),
        failed=plan.failed + failed,
        deleted=plan.count(Outcome.DELETED),
        embedder=plan.embedder,
        vectors_computed=computed,
        vectors_reused=reused,
    )
    with transaction(db):
        db.execute(
            "UPDATE runs SET finished = ?, added = ?, updated = ?, unchanged = ?, "
            "failed = ?, deleted = ?, documents_after = ?, chunks_after = ?, "
            "vectors_computed = ?, vectors_reused = ? WHERE run_id = ?",
            (
                now(),
                summary.added,
                summary.updated,
                summary.unchanged,
                summary.failed,
                summary.deleted,
                documents_after,
                chunks_after,
                computed,
                reused,
                run_id,
            ),
        )
    if full is not None:
        kept = summary.added + summary.updated
        raise ExplorerError(
            full.code,
            f"{full.detail}. The run stopped there: the {kept} document(s) it wrote stay "
            f"served, and {failed} were not written (the run's failures list them)",
        )
    return summary


def _refusal(room: Room) -> ExplorerError | None:
    """Why the index may grow no more, or None."""
    try:
        room()
    except ExplorerError as error:
        return error
    return None


def _write(
    db: sqlite3.Connection,
    run_id: int,
    step: Step,
    document: DocumentRecord,
    plan: Plan,
    config: ChunkConfig,
    embedder: Embedder | None,
    checkpoint: Checkpoint,
) -> tuple[bool, Embedded]:
    """Stage the new version, embed it, read both back, then switch to it in one
    transaction; whether it was switched to, and the vectors computed and reused. If the
    embedder failed, the version is recorded as failed, its staging dropped (the vectors
    computed so far stay cached for the retry), and the old version stays served."""
    tenant, source_id = step.tenant, step.source_id
    chunks = document_chunks(document, config)
    with transaction(db):  # an interrupted run's staging is rebuilt (no other run is live)
        _drop_versions(db, tenant, source_id, "staged")
        version_id = db.execute(
            "INSERT INTO versions (tenant, source_id, version, document_revision, "
            "config_digest, state, chunk_count, run_id, embedder) "
            "VALUES (?, ?, ?, ?, ?, 'staged', ?, ?, ?)",
            (
                tenant,
                source_id,
                document["version"],
                document["document_revision"],
                plan.config_digest,
                len(chunks),
                run_id,
                plan.embedder,
            ),
        ).lastrowid
        assert version_id is not None
        _write_chunks(db, tenant, version_id, chunks, plan.embedder, checkpoint)
    checkpoint("staged")
    embedded = Embedded(0, 0)
    if embedder is not None:
        progress = [0]

        def on_batch(done: int) -> None:
            progress[0] = done
            checkpoint("embedded-batch")

        try:
            seen_by = tenant if plan.private else None
            embedded = embed_chunks(db, embedder, chunks, on_batch, seen_by, version_id)
        except ExplorerError as error:
            if error.code not in EMBEDDER_FAILURES:
                raise
            _fail(db, run_id, step, version_id, error)
            return False, Embedded(progress[0], 0)
    _verify(db, version_id, document, len(chunks), embedder)
    with transaction(db):
        for (active,) in db.execute(
            "SELECT version_id FROM versions WHERE tenant = ? AND source_id = ? "
            "AND state = 'active'",
            (tenant, source_id),
        ).fetchall():
            _drop_chunks(db, active)
            db.execute("UPDATE versions SET state = 'superseded' WHERE version_id = ?", (active,))
        db.execute("UPDATE versions SET state = 'active' WHERE version_id = ?", (version_id,))
        db.execute(
            "INSERT INTO documents VALUES (?, ?, ?) ON CONFLICT (tenant, source_id) "
            "DO UPDATE SET active_version = excluded.active_version",
            (tenant, source_id, version_id),
        )
        db.execute("DELETE FROM search_cache WHERE tenant = ?", (tenant,))
    return True, embedded


def _fail(
    db: sqlite3.Connection, run_id: int, step: Step, version_id: int, error: ExplorerError
) -> None:
    """The staged version becomes a failed one (its rows go; the vectors stay cached),
    and the run's log says why, with the code."""
    with transaction(db):
        _drop_chunks(db, version_id)
        db.execute("UPDATE versions SET state = 'failed' WHERE version_id = ?", (version_id,))
        _log_failure(db, run_id, step, error)


def _log_failure(
    db: sqlite3.Connection, run_id: int, step: Step, error: ExplorerError, what: str = ""
) -> None:
    """The document's status in the run's log: the code, and its old version stays."""
    said = f"{what}: {error.detail}" if what else error.detail
    detail = f"{said}; the previous version (if any) stays served"
    changed = db.execute(
        "UPDATE document_status SET status = ?, detail = ? "
        "WHERE run_id = ? AND tenant = ? AND source_id = ?",
        (error.code.value, detail, run_id, step.tenant, step.source_id),
    ).rowcount
    if not changed:
        db.execute(
            "INSERT INTO document_status VALUES (?, ?, ?, ?, ?)",
            (run_id, step.tenant, step.source_id, error.code.value, detail),
        )


def _write_chunks(
    db: sqlite3.Connection,
    tenant: str,
    version_id: int,
    chunks: Sequence[ChunkRecord],
    embedder: str | None,
    checkpoint: Checkpoint,
) -> None:
    """A chunk row's key is its tenant, id and embedder: re-embedding a version with
    another embedder stages the same chunks beside the active ones."""
    for position, chunk in enumerate(chunks):
        if position == len(chunks) // 2:
            checkpoint("mid-stage")
        rowid = db.execute(
            "INSERT INTO chunks (chunk_key, version_id, tenant, source_id, chunk_id, ord, "
            'start, "end", start_line, end_line, text, text_sha256, section_title, pages) '
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                sha(f"{tenant}\x00{chunk['chunk_id']}\x00{embedder or ''}"),
                version_id,
                tenant,
                chunk["source_id"],
                chunk["chunk_id"],
                chunk["order"],
                chunk["start"],
                chunk["end"],
                chunk["start_line"],
                chunk["end_line"],
                chunk["text"],
                chunk["text_sha256"],
                chunk["section_title"],
                json.dumps(chunk["pages"]) if "pages" in chunk else None,
            ),
        ).lastrowid
        db.execute("INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)", (rowid, chunk["text"]))


def _verify(
    db: sqlite3.Connection,
    version_id: int,
    document: DocumentRecord,
    expected: int,
    embedder: Embedder | None,
) -> None:
    """Read the staged version back: every chunk is its source slice, digests hold, and
    every chunk has one vector of the right size from the run's embedder."""
    text = document["text"]
    rows = db.execute(
        'SELECT start, "end", text, text_sha256 FROM chunks WHERE version_id = ? ORDER BY ord',
        (version_id,),
    ).fetchall()
    stored = db.execute(
        "SELECT document_revision FROM versions WHERE version_id = ? AND state = 'staged'",
        (version_id,),
    ).fetchone()
    good = (
        stored is not None
        and stored[0] == revision_of(document)
        and len(rows) == expected
        and all(text[s:e] == t and sha(t) == h for s, e, t, h in rows)
        and (
            embedder is None
            or vectors_verified(db, version_id, embedder.name, embedder.dimensions) == expected
        )
    )
    if not good:
        raise ExplorerError(
            ErrorCode.INVALID_STORE,
            f"the staged version of {document['source_id']!r} did not verify; "
            "the active version stays served",
        )


def _drop_chunks(db: sqlite3.Connection, version_id: int) -> int:
    rowids = [
        (row[0],)
        for row in db.execute("SELECT rowid FROM chunks WHERE version_id = ?", (version_id,))
    ]
    db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", rowids)
    db.execute("DELETE FROM chunks WHERE version_id = ?", (version_id,))
    return len(rowids)


def _drop_versions(db: sqlite3.Connection, tenant: str, source_id: str, state: str) -> None:
    for (version_id,) in db.execute(
        "SELECT version_id FROM versions WHERE tenant = ? AND source_id = ? AND state = ?",
        (tenant, source_id, state),
    ).fetchall():
        _drop_chunks(db, version_id)
        db.execute("DELETE FROM versions WHERE version_id = ?", (version_id,))


def _delete(db: sqlite3.Connection, run_id: int, tenant: str, source_id: str) -> None:
    """Remove a document from every store, and write a receipt that says so."""
    with transaction(db):
        versions = [
            row[0]
            for row in db.execute(
                "SELECT version_id FROM versions WHERE tenant = ? AND source_id = ? "
                "AND state IN ('active', 'staged')",
                (tenant, source_id),
            )
        ]
        removed = sum(_drop_chunks(db, version) for version in versions)
        db.executemany(
            "UPDATE versions SET state = 'deleted' WHERE version_id = ?", [(v,) for v in versions]
        )
        db.execute("DELETE FROM documents WHERE tenant = ? AND source_id = ?", (tenant, source_id))
        db.execute("DELETE FROM search_cache WHERE tenant = ?", (tenant,))
        drop_orphans(db, keep=0)  # vectors of its texts that no other chunk uses
        db.execute(
            "INSERT INTO receipts (run_id, tenant, source_id, versions, chunk_count, stores, "
            "at, retention) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                tenant,
                source_id,
                json.dumps(versions),
                removed,
                json.dumps(STORES_CLEARED),
                now(),
                PURGE_PENDING,
            ),
        )


def _purge_pending(db: sqlite3.Connection) -> bool:
    return (
        db.execute(
            "SELECT 1 FROM receipts WHERE retention = ? LIMIT 1", (PURGE_PENDING,)
        ).fetchone()
        is not None
    )


def purge(db: sqlite3.Connection) -> None:
    """Make deleted text unrecoverable from the file: merge the full-text segments, rebuild
    the file, truncate the WAL; only then do the pending receipts say so. A reader that
    still holds an old snapshot keeps the WAL alive: the receipts stay pending until the
    next run's purge."""
    db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
    db.execute("VACUUM")
    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        return
    with transaction(db):
        db.execute(
            "UPDATE receipts SET retention = ? WHERE retention = ?",
            (PURGED.format(at=now()), PURGE_PENDING),
        )
    # The receipt update itself is a WAL frame without deleted text; fold it in too.
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
