"""The comparison report (docs/contract.md §8): every policy's index and span checks,
side by side. These are its shapes, declared once: the pipeline (explorer/pipeline.py)
builds them as plain dicts, and explorer/schema.py derives the JSON Schema from them."""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from ..chunking.index import ConfigField, Index
from ..models import Count, VersionOne, strict_shape
from .checks import CheckResult

REPORT_VERSION = 1


@strict_shape
class FlagCounts(TypedDict):
    """How many of a column's chunks carry each quality flag (docs/contract.md §12), and
    `flagged`: how many carry at least one."""

    over_size: Count
    tiny: Count
    mid_sentence: Count
    in_code_block: Count
    dangling_reference: Count
    flagged: Count


@strict_shape
class PolicyResult(TypedDict):
    """One policy's column: its config, its index's id and size, and its span checks."""

    name: str
    config: ConfigField
    index_id: str
    chunk_count: Count
    checks: list[CheckResult]
    flags: FlagCounts
    notes: NotRequired[
        Annotated[
            list[str],
            Field(
                description="An imported chunk file's: which chunks were located ignoring "
                "whitespace, had CRLF offsets converted, or were skipped; a column under "
                "grammar v1: which documents it left out for want of a leading heading."
            ),
        ]
    ]


@strict_shape
class DocumentStatusEntry(TypedDict):
    source_id: str
    status: Annotated[str, Field(description="'ok' or the error code that refused the document.")]
    detail: str


@strict_shape
class SkippedCheck(TypedDict):
    """A check whose document did not load: named, never evaluated against nothing."""

    id: str
    source_id: str
    reason: str


@strict_shape
class Report(TypedDict):
    """The report `compare` writes and the app offers for download."""

    report_version: VersionOne
    policies: list[PolicyResult]
    documents: list[DocumentStatusEntry]
    skipped_checks: list[SkippedCheck]
    indexes: dict[str, Index]
