"""The plan of a run, decided before anything is written: pure, from the manifest, what
loaded, and what the index serves now."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from ..errors import ErrorCode, ExplorerError
from ..models import strict_shape
from ..sources.documents import DocumentRecord
from ..sources.loading import LoadResult
from ..sources.manifest import Manifest
from ..sources.manifest import scope_of as tenant_of

# (tenant, source_id): how the index keys a document.
Key = tuple[str, str]
# A code in a `--json` schema: its text, as in the core's other schemas (the codes are
# listed in docs/contract.md, so a new one changes no schema).
CODE_TEXT = WithJsonSchema({"type": "string"})


class Outcome(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DELETED = "deleted"


@dataclass(frozen=True)
class Served:
    """What identifies a document's active version: its revision, its chunking config
    and the embedder of its vectors (None: none)."""

    document_revision: str
    config_digest: str
    embedder: str | None = None


@dataclass(frozen=True)
class Step:
    tenant: str
    source_id: str
    outcome: Outcome
    document: DocumentRecord | None  # what to write, for ADDED and UPDATED


@strict_shape
@dataclass(frozen=True)
class StatusRow:
    """How a document of a run fared, as the run log records it."""

    tenant: str
    source_id: str
    status: Annotated[
        ErrorCode | Literal["ok"],
        CODE_TEXT,
        Field(description="'ok', or the error code that kept it out of the run"),
    ]
    detail: str


@dataclass(frozen=True)
class Plan:
    config_digest: str
    embedder: str | None
    steps: tuple[Step, ...]
    statuses: tuple[StatusRow, ...]  # every manifest entry's load status, for the run log
    failed: int
    # The tenants a visitor's run is limited to (None: every tenant): its vectors are
    # counted as the tenant sees them (explorer/store/embed.py), and its before and after
    # over these tenants alone, never telling what another tenant holds.
    tenants: frozenset[str] | None = None

    @property
    def private(self) -> bool:
        return self.tenants is not None

    def count(self, outcome: Outcome) -> int:
        return sum(step.outcome is outcome for step in self.steps)


def plan_run(
    manifest: Manifest,
    load: LoadResult,
    config_digest: str,
    served: Mapping[Key, Served],
    embedder: str | None = None,
) -> Plan:
    """Skip what is unchanged, write what is new or changed (another embedder's vectors
    count as a change), delete what the manifest removes; refused
    (`delete_unknown_document`) before anything is written."""
    steps = []
    for document in load.documents:
        key = (tenant_of(document.get("access_scope")), document["source_id"])
        now = served.get(key)
        if now == Served(document["document_revision"], config_digest, embedder):
            steps.append(Step(*key, Outcome.UNCHANGED, None))
        else:
            outcome = Outcome.ADDED if now is None else Outcome.UPDATED
            steps.append(Step(*key, outcome, document))
    steps += [Step(*key, Outcome.DELETED, None) for key in deletions(manifest, served)]
    statuses = tuple(
        StatusRow(
            tenant_of(entry.get("access_scope")), status.source_id, status.status, status.detail
        )
        for entry, status in zip(manifest.documents, load.statuses, strict=True)
    )
    return Plan(config_digest, embedder, tuple(steps), statuses, len(load.failures))


def deletions(manifest: Manifest, served: Mapping[Key, Served]) -> list[Key]:
    """What a run of `manifest` deletes from what the index serves: its `deleted`
    (`delete_unknown_document` for one it does not serve), and with `complete`, every
    document of its tenants that it does not list."""
    doomed = _served(
        [(tenant_of(gone.access_scope), gone.source_id) for gone in manifest.deleted],
        served,
        "the manifest deletes",
    )
    if manifest.complete:
        listed = {(tenant_of(d.get("access_scope")), d["source_id"]) for d in manifest.documents}
        scopes = {tenant for tenant, _ in listed}
        doomed += sorted(k for k in served.keys() - listed if k[0] in scopes and k not in doomed)
    return doomed


def _served(keys: Sequence[Key], served: Mapping[Key, Served], who: str) -> list[Key]:
    """`keys`, each served (`delete_unknown_document` for one that is not)."""
    for tenant, source_id in keys:
        if (tenant, source_id) not in served:
            raise ExplorerError(
                ErrorCode.DELETE_UNKNOWN_DOCUMENT,
                f"{who} {source_id!r} (tenant {tenant!r}), which the index does not serve",
            )
    return list(keys)


def delete_plan(keys: Sequence[Key], served: Mapping[Key, Served], config_digest: str) -> Plan:
    """A run that only deletes `keys` (tenant, source_id), as a manifest's `deleted` does."""
    doomed = _served(keys, served, "the run deletes")
    steps = tuple(Step(*key, Outcome.DELETED, None) for key in dict.fromkeys(doomed))
    return Plan(config_digest, None, steps, (), 0)


def check_scope(plan: Plan, tenants: frozenset[str] | None, allow_deletions: bool) -> None:
    """Refuse (`not_allowed`) a plan that touches a tenant outside `tenants` (None: any)
    or deletes when deletions are not allowed; checked before anything is written."""
    touched = [(s.tenant, s.source_id) for s in plan.statuses]
    touched += [(s.tenant, s.source_id) for s in plan.steps]
    for tenant, source_id in touched:
        if tenants is not None and tenant not in tenants:
            raise ExplorerError(
                ErrorCode.NOT_ALLOWED,
                f"{source_id!r} belongs to tenant {tenant!r}, which this session may not change",
            )
    for step in plan.steps:
        if step.outcome is Outcome.DELETED and not allow_deletions:
            raise ExplorerError(
                ErrorCode.NOT_ALLOWED,
                f"the run would delete {step.source_id!r} (tenant {step.tenant!r}), "
                "and deletions are not allowed here",
            )
