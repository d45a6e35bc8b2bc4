"""The comparison report (SPEC §8): every policy's index and span checks, side by side."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

import orjson
from pydantic import Field

from .checks import CheckResult, ResolvedCheck, evaluate_checks, resolve_check
from .config import ChunkConfig
from .documents import DocumentRecord
from .errors import ErrorCode, ExplorerError
from .index import Encoder, Index, build_index, document_chunks, write_index
from .limits import DEFAULT_LIMITS, Limits
from .loading import LoadResult
from .manifest import SpanCheck
from .models import StrictModel, VersionOne
from .policies import POLICIES, make_config
from .validate import IndexModel

REPORT_VERSION = 1


class PolicyResult(TypedDict):
    name: str
    config: dict[str, str | int | None]
    index_id: str
    chunk_count: int
    checks: list[CheckResult]


class DocumentStatusEntry(TypedDict):
    source_id: str
    status: str
    detail: str


class SkippedCheck(TypedDict):
    id: str
    source_id: str
    reason: str


class Report(TypedDict):
    report_version: int
    policies: list[PolicyResult]
    documents: list[DocumentStatusEntry]
    skipped_checks: list[SkippedCheck]
    indexes: dict[str, Index]


def resolve_checks(
    load: LoadResult, checks: Sequence[SpanCheck]
) -> tuple[list[ResolvedCheck], list[SkippedCheck]]:
    """Resolve the checks of loaded documents; a failed document's checks are skipped
    (and said so), never evaluated against nothing."""
    texts = {d["source_id"]: d["text"] for d in load.documents}
    status = {s.source_id: s for s in load.statuses}
    resolved: list[ResolvedCheck] = []
    skipped: list[SkippedCheck] = []
    for check in checks:
        text = texts.get(check.source_id)
        if text is None:
            reason = f"its document did not load ({status[check.source_id].status})"
            skipped.append({"id": check.id, "source_id": check.source_id, "reason": reason})
        else:
            resolved.append(resolve_check(check, text))
    return resolved, skipped


def evaluate_policy(
    documents: Sequence[DocumentRecord],
    checks: Sequence[ResolvedCheck],
    config: ChunkConfig,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[PolicyResult, Index]:
    """One policy's index over the documents, and its span checks."""
    index = build_index(documents, config, limits)
    result: PolicyResult = {
        "name": config.strategy,
        "config": index["config"],
        "index_id": index["index_id"],
        "chunk_count": len(index["chunks"]),
        "checks": evaluate_checks(checks, index["chunks"], limits),
    }
    return result, index


def policy_configs(sizes: Mapping[str, int] | None = None) -> list[ChunkConfig]:
    """Every registered policy's config, in report order; `sizes` overrides defaults."""
    sizes = sizes or {}
    return [make_config(name, sizes.get(name)) for name in POLICIES]


def assemble_report(
    load: LoadResult,
    skipped: Sequence[SkippedCheck],
    evaluated: Sequence[tuple[PolicyResult, Index]],
) -> Report:
    documents: list[DocumentStatusEntry] = [
        {"source_id": s.source_id, "status": s.status, "detail": s.detail} for s in load.statuses
    ]
    return {
        "report_version": REPORT_VERSION,
        "policies": [result for result, _ in evaluated],
        "documents": documents,
        "skipped_checks": list(skipped),
        "indexes": {result["name"]: index for result, index in evaluated},
    }


def compare(
    load: LoadResult,
    checks: Sequence[SpanCheck],
    sizes: Mapping[str, int] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Report:
    """Build every registered policy's index over the loaded documents and run the checks.

    `sizes` maps a sized policy's name to its `max_chars`; others take their defaults.
    """
    resolved, skipped = resolve_checks(load, checks)
    evaluated = [
        evaluate_policy(load.documents, resolved, config, limits)
        for config in policy_configs(sizes)
    ]
    return assemble_report(load, skipped, evaluated)


def write_report(
    load: LoadResult,
    checks: Sequence[SpanCheck],
    sizes: Mapping[str, int] | None,
    write: Callable[[bytes], object],
    limits: Limits = DEFAULT_LIMITS,
    encode: Encoder | None = None,
) -> None:
    """`compare` as JSON bytes passed to `write` while each index is built (`write_index`,
    with `encode` if given): `json.loads` of them equals `compare(load, checks, sizes)`.
    The keys come in another order: `indexes` before `policies`, whose ids and checks are
    known only once each index has been written. The checks look at the chunks of their
    own documents alone, built again for them."""
    if not load.documents:
        raise ExplorerError(
            ErrorCode.NO_DOCUMENTS, "no document loaded, so there is nothing to chunk"
        )
    resolved, skipped = resolve_checks(load, checks)
    checked = {check.source_id for check in resolved}
    documents = [
        {"source_id": s.source_id, "status": s.status, "detail": s.detail} for s in load.statuses
    ]
    write(
        b'{"report_version":%d,\n"documents":%b,\n"skipped_checks":%b,\n"indexes":{'
        % (REPORT_VERSION, orjson.dumps(documents), orjson.dumps(list(skipped)))
    )
    policies: list[PolicyResult] = []
    checked_documents = [d for d in load.documents if d["source_id"] in checked]
    for position, config in enumerate(policy_configs(sizes)):
        write(b"%b%b:" % (b",\n" if position else b"\n", orjson.dumps(config.strategy)))
        summary = write_index(load.documents, config, write, limits=limits, encode=encode)
        kept = [c for d in checked_documents for c in document_chunks(d, config, limits)]
        policies.append(
            {
                "name": config.strategy,
                "config": config.as_json(),
                "index_id": summary.index_id,
                "chunk_count": summary.chunk_count,
                "checks": evaluate_checks(resolved, kept, limits),
            }
        )
    write(b'},\n"policies":%b}\n' % orjson.dumps(policies))


class SpanResultModel(StrictModel):
    label: str
    start: int
    end: int
    containing_chunk_ids: list[str]
    overlapping_chunk_ids: list[str]


class CheckResultModel(StrictModel):
    id: str
    source_id: str
    together: bool
    spans: list[SpanResultModel]


class PolicyResultModel(StrictModel):
    name: str
    config: ChunkConfig
    index_id: str
    chunk_count: int = Field(ge=0)
    checks: list[CheckResultModel]


class DocumentStatusModel(StrictModel):
    source_id: str
    status: str = Field(description="'ok' or the error code that refused the document.")
    detail: str


class SkippedCheckModel(StrictModel):
    id: str
    source_id: str
    reason: str


class ReportModel(StrictModel):
    """The wire shape of a comparison report (for its JSON Schema and for tests)."""

    report_version: VersionOne
    policies: list[PolicyResultModel]
    documents: list[DocumentStatusModel]
    skipped_checks: list[SkippedCheckModel]
    indexes: dict[str, IndexModel]
