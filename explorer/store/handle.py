"""`Store`: the open index file. Every method turns SQLite's own failures into an
`ExplorerError` by itself, so no caller has to remember to."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ..chunking.config import ChunkConfig
from ..chunking.index import admitted
from ..digests import digest
from ..retrieval.embedding import Embedder
from ..sources.loading import LoadResult
from ..sources.manifest import Manifest
from . import queries
from .apply import Checkpoint, Room, RunSummary, apply_plan, no_checkpoint, no_limit
from .lock import RUN_WAIT_SECONDS, run_in_progress, run_lock
from .plan import Key, StatusRow, check_scope, delete_plan, deletions, plan_run
from .queries import Failure, Hit, Receipt, RunRow, SearchMode, ServedDocument
from .schema import connect, storage_error

P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    @functools.wraps(method)
    def wrapper(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as error:
            raise storage_error(error, self.path) from None

    return wrapper


def _quiet(message: str) -> None:
    """The default for `on_wait`: say nothing."""


class Store:
    """The index file. Use as a context manager: plan -> apply for a run, queries to read."""

    @_translated
    def __init__(self, path: Path, create: bool = True) -> None:
        """`create`: make the index if the file is missing or empty; else refuse it."""
        self.path = path
        self._db = connect(path, create)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_: object) -> None:
        self._db.close()

    @_translated
    def ingest(
        self,
        manifest: Manifest,
        load: LoadResult,
        config: ChunkConfig,
        *,
        embedder: Embedder | None = None,
        checkpoint: Checkpoint = no_checkpoint,
        on_wait: Callable[[str], object] = _quiet,
        wait_seconds: float = RUN_WAIT_SECONDS,
        tenants: frozenset[str] | None = None,
        allow_deletions: bool = True,
        room: Room = no_limit,
    ) -> RunSummary:
        """One run: skip what is unchanged, stage-embed-verify-switch what changed (with
        `embedder`; None: no vectors), record what failed (its old version stays served),
        delete what the manifest removes. Runs on
        one index take turns: a second waits at most `wait_seconds`, telling `on_wait`.
        `tenants` (None: any) and `allow_deletions` bound what the run may change;
        `room`, asked before each document is written, how far the index may grow
        (`apply_plan`)."""
        with run_lock(self.path, wait_seconds, on_wait):
            served = queries.served_versions(self._db)
            if tenants is not None:  # another tenant's documents answer as unknown ones
                served = {key: now for key, now in served.items() if key[0] in tenants}
            name = embedder.name if embedder is not None else None
            # a document the config's grammar cannot cut fails, and its old version stays
            plan = plan_run(
                manifest, admitted(load, config), digest(config.as_json()), served, name
            )
            check_scope(plan, tenants, allow_deletions)
            plan = replace(plan, tenants=tenants)
            return apply_plan(self._db, plan, config, embedder, checkpoint, room)

    @_translated
    def delete(
        self,
        keys: Sequence[Key],
        config: ChunkConfig,
        *,
        on_wait: Callable[[str], object] = _quiet,
        wait_seconds: float = RUN_WAIT_SECONDS,
        tenants: frozenset[str] | None = None,
        allow_deletions: bool = True,
    ) -> RunSummary:
        """One run that deletes `keys` (tenant, source_id) and nothing else, with a receipt
        for each, as a manifest's `deleted` does; `config` is the run's recorded config."""
        with run_lock(self.path, wait_seconds, on_wait):
            served = queries.served_versions(self._db)
            if tenants is not None:  # another tenant's documents answer as unknown ones
                served = {key: now for key, now in served.items() if key[0] in tenants}
            plan = delete_plan(keys, served, digest(config.as_json()))
            check_scope(plan, tenants, allow_deletions)
            plan = replace(plan, tenants=tenants)
            return apply_plan(self._db, plan, config, None, no_checkpoint)

    @_translated
    def would_delete(self, manifest: Manifest, tenants: frozenset[str] | None = None) -> list[Key]:
        """The (tenant, source_id) a run of `manifest` for `tenants` (None: any) would
        delete now: a preview, nothing is written; another tenant's documents are not
        among them, as a run does not see them."""
        served = queries.served_versions(self._db)
        if tenants is not None:
            served = {key: now for key, now in served.items() if key[0] in tenants}
        return deletions(manifest, served)

    @_translated
    def search(
        self,
        query: str,
        tenant: str,
        k: int = 5,
        mode: SearchMode = SearchMode.BM25,
        embedder: Embedder | None = None,
    ) -> list[Hit]:
        """One tenant's active chunks by BM25, by cosine to the query's vector (from the
        embedder the chunks were embedded with), or both fused by reciprocal rank
        (`invalid_query` past the limits, or without an embedder for vectors)."""
        return queries.search(self._db, query, tenant, k, mode, embedder)

    @_translated
    def failures(self) -> list[Failure]:
        return queries.failures(self._db)

    @_translated
    def history(self, tenants: frozenset[str] | None = None) -> list[RunRow]:
        """Every run, or for a visitor limited to `tenants` the runs limited to them."""
        return queries.history(self._db, run_in_progress(self.path), tenants)

    @_translated
    def receipts(self) -> list[Receipt]:
        return queries.receipts(self._db)

    @_translated
    def documents(self, tenant: str) -> list[ServedDocument]:
        """What the index serves to `tenant`: each document's active version."""
        return queries.served_documents(self._db, tenant)

    @_translated
    def tenants(self) -> list[str]:
        return queries.tenants(self._db)

    @_translated
    def counts(self) -> dict[str, int]:
        return queries.counts(self._db)

    @_translated
    def document_statuses(self, run_id: int) -> list[StatusRow]:
        return queries.document_statuses(self._db, run_id)

    @_translated
    def integrity(self) -> str:
        result: str = self._db.execute("PRAGMA integrity_check").fetchone()[0]
        return result
