"""What `ingest`, `search`, `history` and `documents` print with `--json`: one JSON
document each, its JSON Schema in `schemas/` (`store-ingest`, `store-search`,
`store-history`, `store-documents`). Each is
made of the store's own typed rows, so a shape is declared once, where it is read."""

from __future__ import annotations

from typing import Literal

from ..models import StrictModel
from .apply import RunSummary
from .plan import StatusRow
from .queries import Failure, Hit, Receipt, RunRow, SearchMode, ServedDocument


class _IngestKind(StrictModel):
    kind: Literal["explorer/ingest"] = "explorer/ingest"


# pydantic orders fields from the last base: `kind` first, as in every other document.
class IngestOutput(RunSummary, _IngestKind):
    """A run's summary and how each of its documents fared."""

    documents: list[StatusRow]


class SearchOutput(StrictModel):
    kind: Literal["explorer/search"] = "explorer/search"
    query: str
    tenant: str
    mode: SearchMode
    embedder: str | None
    k: int
    hits: list[Hit]


class HistoryOutput(StrictModel):
    kind: Literal["explorer/history"] = "explorer/history"
    runs: list[RunRow]
    failures: list[Failure]
    receipts: list[Receipt]


class DocumentsOutput(StrictModel):
    kind: Literal["explorer/documents"] = "explorer/documents"
    tenant: str
    documents: list[ServedDocument]


def ingest_output(summary: RunSummary, statuses: list[StatusRow]) -> IngestOutput:
    return IngestOutput(**dict(summary), documents=statuses)


def search_output(
    query: str, tenant: str, mode: SearchMode, embedder: str | None, k: int, hits: list[Hit]
) -> SearchOutput:
    return SearchOutput(query=query, tenant=tenant, mode=mode, embedder=embedder, k=k, hits=hits)


def history_output(
    runs: list[RunRow], failures: list[Failure], receipts: list[Receipt]
) -> HistoryOutput:
    return HistoryOutput(runs=runs, failures=failures, receipts=receipts)


def documents_output(tenant: str, documents: list[ServedDocument]) -> DocumentsOutput:
    return DocumentsOutput(tenant=tenant, documents=documents)
