"""The vector cache: vectors by (embedder name, text SHA-256), in a table of the store's
shape (`vectors`: embedder, text_sha256, vector), so the persistent index and
`evaluate` keep them alike. A text an embedder has embedded once is never embedded
again; each batch of new vectors is committed as soon as it is computed, so a run that
fails (or is killed) part-way leaves what it computed for the next run to reuse.

`evaluate` keeps its cache in `.explorer/vectors.db` of the working directory (or
`--vector-cache PATH`, `none` for none); the store keeps it in its own index file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..digests import sha
from ..errors import ErrorCode, ExplorerError
from .embedding import Embedder, batch_size, blob_bytes, embed_texts, from_blobs, to_blob

if TYPE_CHECKING:
    from .embedding import Vectors

# This program's name in the `meta` table of its SQLite files: a persistent index holds it.
APP_ID = "chunk-boundary-explorer"
DEFAULT_VECTOR_CACHE = Path(".explorer") / "vectors.db"
NO_CACHE = "none"
BUSY_SECONDS = 30.0
SQL_PARAMETERS = 500  # per IN (…) list: well under SQLite's limit
UNIT_TOLERANCE = 1e-3  # a stored vector's length may differ from 1 by float32 rounding only
VECTORS_TABLE = (
    "CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, embedder TEXT NOT NULL, "
    "text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, UNIQUE (embedder, text_sha256))"
)
# The table's columns as `PRAGMA table_info` gives them: (name, type, not null, key).
_VECTORS_COLUMNS = [
    ("rowid", "INTEGER", 0, 1),
    ("embedder", "TEXT", 1, 0),
    ("text_sha256", "TEXT", 1, 0),
    ("vector", "BLOB", 1, 0),
]


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """`BEGIN IMMEDIATE` … `COMMIT`; on any failure a rollback that never hides the cause
    (SQLite may already have rolled back itself, e.g. when the disk is full)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise


def slices(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for begin in range(0, len(items), size):
        yield items[begin : begin + size]


def digests_among(
    db: sqlite3.Connection, query: str, parameters: tuple[object, ...], digests: Sequence[str]
) -> set[str]:
    """The digests `query` selects among `digests`: its first column, where `query`
    ends in `text_sha256 IN ({marks})` and takes `parameters` before the digests."""
    found: set[str] = set()
    for part in slices(digests, SQL_PARAMETERS):
        marks = ",".join("?" * len(part))
        found.update(row[0] for row in db.execute(query.format(marks=marks), (*parameters, *part)))
    return found


def cached(db: sqlite3.Connection, embedder: str, digests: Sequence[str]) -> set[str]:
    """Which of `digests` have a vector from `embedder`."""
    query = "SELECT text_sha256 FROM vectors WHERE embedder = ? AND text_sha256 IN ({marks})"
    return digests_among(db, query, (embedder,), digests)


def embed_missing(
    db: sqlite3.Connection,
    embedder: Embedder,
    texts: Mapping[str, str],
    on_batch: Callable[[int], None] = lambda done: None,
    shown_before: int = 0,
) -> int:
    """Embed the `texts` (by SHA-256) the cache lacks, batch by batch, each batch
    committed; how many were computed. `embedding_failed` (saying how far it got) if the
    embedder raises or misanswers; an API's refusal keeps its code (`learn_dimensions`
    first). `shown_before` cached vectors are counted as computed
    in what it says (the store's view for a tenant that did not bring them)."""
    have = cached(db, embedder.name, list(texts))
    missing = [digest for digest in texts if digest not in have]
    learn_dimensions(db, embedder)
    done = shown_before
    for part in slices(missing, batch_size(embedder)):
        try:
            vectors = embed_texts(embedder, [texts[digest] for digest in part])
        except ExplorerError as error:
            raise ExplorerError(
                error.code,
                f"the embedder {embedder.name!r} failed after {done} of "
                f"{len(missing) + shown_before} new vectors ({len(texts)} texts): {error.detail}",
            ) from None
        with transaction(db):
            db.executemany(
                "INSERT OR IGNORE INTO vectors (embedder, text_sha256, vector) VALUES (?, ?, ?)",
                [(embedder.name, d, to_blob(v)) for d, v in zip(part, vectors, strict=True)],
            )
        done += len(part)
        on_batch(done)
    return len(missing)


def learn_dimensions(db: sqlite3.Connection, embedder: Embedder) -> None:
    """An embedder whose dimensions are still unknown (`openai:` without `--dimensions`)
    learns them from the vectors cached under its name, before any is read or checked."""
    learn = getattr(embedder, "learn", None)
    if not embedder.dimensions and callable(learn):
        size = db.execute(
            "SELECT length(vector) FROM vectors WHERE embedder = ? LIMIT 1", (embedder.name,)
        ).fetchone()
        if size is not None:
            learn(size[0] // 4)


def _vectors_of(db: sqlite3.Connection, embedder: Embedder, digests: Sequence[str]) -> Vectors:
    """The cached vectors of `digests`, one row each, in their order."""
    found: dict[str, bytes] = {}
    for part in slices(list(dict.fromkeys(digests)), SQL_PARAMETERS):
        found.update(_cached_rows(db, embedder, part))
    return from_blobs([found[digest] for digest in digests], embedder.dimensions)


def _cached_rows(
    db: sqlite3.Connection, embedder: Embedder, digests: Sequence[str]
) -> list[tuple[str, bytes]]:
    marks = ",".join("?" * len(digests))
    rows: list[tuple[str, bytes]] = db.execute(
        f"SELECT text_sha256, vector FROM vectors WHERE embedder = ? AND text_sha256 IN ({marks})",
        (embedder.name, *digests),
    ).fetchall()
    return rows


def drop_unusable(db: sqlite3.Connection, embedder: Embedder, digests: Sequence[str]) -> int:
    """Delete the cached vectors of `digests` that an embedder's answer would have been
    refused for, so that they are computed again: another size than the embedder's, a
    NaN or an infinity, or not unit length (as every vector is stored). How many."""
    import numpy as np

    size = blob_bytes(embedder.dimensions)
    unusable: list[str] = []
    for part in slices(digests, SQL_PARAMETERS):
        rows = _cached_rows(db, embedder, part)
        sized = [(digest, blob) for digest, blob in rows if len(blob) == size]
        unusable.extend(digest for digest, blob in rows if len(blob) != size)
        if sized:
            matrix = from_blobs([blob for _, blob in sized], embedder.dimensions)
            norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
            unit = np.abs(norms - 1.0) <= UNIT_TOLERANCE  # False for a NaN or an infinity
            unusable.extend(
                digest for (digest, _), good in zip(sized, unit, strict=True) if not good
            )
    if unusable:
        with transaction(db):
            db.executemany(
                "DELETE FROM vectors WHERE embedder = ? AND text_sha256 = ?",
                [(embedder.name, digest) for digest in unusable],
            )
    return len(unusable)


@dataclass
class VectorCache:
    """An open cache, and what it has done: vectors `computed` by the embedder (of them,
    `replaced`: cached ones found unusable) and `reused` from the cache, over every text
    asked for (repeats within one call count once)."""

    db: sqlite3.Connection
    where: str
    computed: int = 0
    reused: int = 0
    replaced: int = 0

    @classmethod
    def open(cls, spec: str | Path) -> VectorCache:
        """`PATH` (created with its folder if new) or `none` (kept in memory, this run
        only). A file that is neither such a cache nor a persistent index (§10c), or that
        SQLite cannot read, is `io_error`, and is left as it was."""
        if str(spec) == NO_CACHE:
            return cls(cls._ready(sqlite3.connect(":memory:", isolation_level=None)), "none")
        path = Path(spec)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS)
        except (sqlite3.Error, OSError) as error:
            raise _unusable(path, str(error)) from None
        try:
            return cls(cls._ready(db), str(path))
        except sqlite3.Error as error:
            db.close()
            raise _unusable(path, str(error)) from None
        except ForeignFile as foreign:
            db.close()
            raise _unusable(path, str(foreign)) from None

    @staticmethod
    def _ready(db: sqlite3.Connection) -> sqlite3.Connection:
        """The cache's table made in a new (blank) file; any other file checked, before
        anything is written to it."""
        if not _tables(db) and db.execute("PRAGMA page_count").fetchone()[0] == 0:
            with transaction(db):  # two first runs: the second finds the table made
                db.execute(VECTORS_TABLE)
        _require_cache(db)
        # A cache: a batch lost to a power cut is computed again, so commits need not
        # wait for the disk (WAL, synchronous NORMAL: one batch commit costs no fsync).
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def vectors(self, embedder: Embedder, texts: Sequence[str]) -> Vectors:
        """Unit vectors of `texts`, one row each: those the cache lacks, or holds
        unusable (`drop_unusable`), embedded (and kept), the others read back."""
        digests = [sha(text) for text in texts]
        unique = dict(zip(digests, texts, strict=True))
        try:
            learn_dimensions(self.db, embedder)
            self.replaced += drop_unusable(self.db, embedder, list(unique))
            computed = embed_missing(self.db, embedder, unique)
            vectors = _vectors_of(self.db, embedder, digests)
        except sqlite3.Error as error:
            raise ExplorerError(
                ErrorCode.IO_ERROR, f"the vector cache {self.where!r} failed: {error}"
            ) from None
        self.computed += computed
        self.reused += len(unique) - computed
        return vectors

    def said(self, embedder: str) -> str:
        """What the command says of its vectors on standard error."""
        replaced = (
            f" ({self.replaced} replacing an unusable cached vector)" if self.replaced else ""
        )
        return (
            f"vectors: {self.computed} computed{replaced}, {self.reused} reused "
            f"(embedder {embedder!r}, cache {self.where})"
        )

    def close(self) -> None:
        self.db.close()


class ForeignFile(Exception):
    """An SQLite file that is neither a vector cache nor a persistent index: why."""


def _unusable(path: Path, why: str) -> ExplorerError:
    return ExplorerError(ErrorCode.IO_ERROR, f"cannot use {str(path)!r} as a vector cache: {why}")


def _tables(db: sqlite3.Connection) -> set[str]:
    """The file's own tables (SQLite's `sqlite_…` aside)."""
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {name for (name,) in rows if not name.startswith("sqlite_")}


def _require_cache(db: sqlite3.Connection) -> None:
    """A vector cache holds the `vectors` table alone; a persistent index holds it among
    its own (its `meta` names this program). Anything else is another program's file,
    whose `vectors` table (if any) this one must not write to."""
    tables = _tables(db)
    if tables != {"vectors"} and not ("meta" in tables and _meta_app(db) == APP_ID):
        shown = ", ".join(sorted(tables)[:5]) or "none"
        raise ForeignFile(
            f"it is an SQLite file of something else, not a vector cache (tables: {shown})"
        )
    columns = db.execute(
        "SELECT name, type, \"notnull\", pk FROM pragma_table_info('vectors')"
    ).fetchall()
    unique = [
        [column for (column,) in db.execute("SELECT name FROM pragma_index_info(?)", (index,))]
        for (index,) in db.execute("SELECT name FROM pragma_index_list('vectors') WHERE \"unique\"")
    ]
    if columns != _VECTORS_COLUMNS or ["embedder", "text_sha256"] not in unique:
        raise ForeignFile("its table 'vectors' is not a vector cache's (other columns or keys)")


def _meta_app(db: sqlite3.Connection) -> object:
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
    except sqlite3.Error:  # a `meta` table of another shape
        return None
    return None if row is None else row[0]
