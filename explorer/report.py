"""The comparison report (SPEC §8): every policy's index and span checks, side by side."""

from __future__ import annotations

from typing import TypedDict

from pydantic import Field

from .checks import CheckResult
from .config import ChunkConfig
from .index import Index
from .models import StrictModel, VersionOne
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
