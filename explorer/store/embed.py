"""The embedding stage of a run, between staging and verification, and its vector cache.

Vectors are cached by (embedder name, chunk text SHA-256): a text already embedded by
the same embedder, for any document of any tenant, is reused, never recomputed. A run
for a visitor limited to some tenants reports as reused only the texts the same
tenant's chunks already hold: one that only another tenant's chunks (or a failed run)
brought counts as computed, so the counts never tell a visitor what another tenant
holds. Each
batch of new vectors is committed as soon as it is computed, so a run that fails (or is
killed) part-way leaves what it computed for the retry to reuse.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..chunking.index import ChunkRecord
from ..retrieval.embedding import Embedder, blob_bytes
from ..retrieval.vectors import cached, digests_among, embed_missing

# Orphan vectors (no chunk row uses their text: superseded wording, failed staging) kept
# as a cache for reverts and retries; the oldest beyond this are dropped after each run.
ORPHAN_VECTORS_KEPT = 50_000


@dataclass(frozen=True)
class Embedded:
    """Per staged version, as the tenant may see it: vectors new to the tenant (computed,
    or cached by another tenant's chunks), and chunks whose text the tenant's chunks
    already held (computed + reused = chunks staged)."""

    computed: int
    reused: int


def _held_elsewhere(
    db: sqlite3.Connection, tenant: str, version_id: int, digests: Sequence[str]
) -> set[str]:
    """The texts that chunks of `tenant` other than the staged version's hold."""
    query = (
        "SELECT DISTINCT text_sha256 FROM chunks WHERE tenant = ? AND version_id != ? "
        "AND text_sha256 IN ({marks})"
    )
    return digests_among(db, query, (tenant, version_id), digests)


def embed_chunks(
    db: sqlite3.Connection,
    embedder: Embedder,
    chunks: Sequence[ChunkRecord],
    on_batch: Callable[[int], None],
    tenant: str | None = None,
    version_id: int = 0,
) -> Embedded:
    """Compute the vectors the cache lacks, batch by batch, each batch committed
    (`explorer.retrieval.vectors`, the cache `evaluate` uses too). `embedding_failed`
    (with how far it got) if the embedder raises or misanswers. With `tenant`, counted
    as that tenant may see them (the module's docstring), the staged version
    `version_id` aside: a text cached only for another tenant counts as computed."""
    texts = {chunk["text_sha256"]: chunk["text"] for chunk in chunks}
    have = cached(db, embedder.name, list(texts))
    own = have if tenant is None else _held_elsewhere(db, tenant, version_id, list(have))
    hidden = len(have) - len(own)  # cached by another tenant's chunks: shown as computed
    new = embed_missing(db, embedder, texts, on_batch, shown_before=hidden) + hidden
    return Embedded(new, len(chunks) - new)


def vectors_verified(
    db: sqlite3.Connection, version_id: int, embedder: str, dimensions: int
) -> int:
    """How many of a staged version's chunks have a vector of the right size from
    `embedder`."""
    count: int = db.execute(
        "SELECT count(*) FROM chunks c JOIN vectors v "
        "ON v.embedder = ? AND v.text_sha256 = c.text_sha256 "
        "WHERE c.version_id = ? AND length(v.vector) = ?",
        (embedder, version_id, blob_bytes(dimensions)),
    ).fetchone()[0]
    return count


_ORPHANS = (
    "SELECT v.rowid FROM vectors v WHERE NOT EXISTS "
    "(SELECT 1 FROM chunks c WHERE c.text_sha256 = v.text_sha256)"
)


def drop_orphans(db: sqlite3.Connection, keep: int) -> int:
    """Drop the vectors no chunk uses, all but the newest `keep`. Inside a transaction."""
    cursor = db.execute(
        f"DELETE FROM vectors WHERE rowid IN ({_ORPHANS} ORDER BY v.rowid DESC LIMIT -1 OFFSET ?)",
        (keep,),
    )
    return cursor.rowcount
