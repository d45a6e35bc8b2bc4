"""What `ingest`, `search` and `history` print with `--json`: one JSON document each,
its JSON Schema in `schemas/` (`store-ingest`, `store-search`, `store-history`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .apply import RunSummary
from .queries import Failure, Hit, Receipt, RunRow, RunState, SearchMode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DocumentOutcome(_Strict):
    tenant: str
    source_id: str
    status: str = Field(description="'ok', or the error code that kept it out of the run")
    detail: str


class IngestOutput(_Strict):
    kind: Literal["explorer/ingest"] = "explorer/ingest"
    run_id: int
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int
    embedder: str | None = Field(description="the run's embedder; null: no vectors")
    vectors_computed: int = Field(description="vectors the embedder computed in this run")
    vectors_reused: int = Field(description="staged chunks whose vector came from the cache")
    documents: list[DocumentOutcome]


class Citation(_Strict):
    source_id: str
    version: str
    start: int = Field(description="first character, in the normalized text")
    end: int = Field(description="one past the last character: [start, end)")
    start_line: int
    end_line: int
    section: str
    chunk_id: str
    snippet: str
    score: float = Field(description="higher is better: -BM25, cosine, or fused 1/(60+rank)")


class SearchOutput(_Strict):
    kind: Literal["explorer/search"] = "explorer/search"
    query: str
    tenant: str
    mode: SearchMode
    embedder: str | None
    k: int
    hits: list[Citation]


class RunOutput(_Strict):
    run_id: int
    started: str
    finished: str | None
    state: RunState
    added: int
    updated: int
    unchanged: int
    failed: int
    deleted: int
    documents_before: int
    documents_after: int | None
    chunks_before: int
    chunks_after: int | None
    embedder: str | None
    vectors_computed: int
    vectors_reused: int


class FailureOutput(_Strict):
    run_id: int
    tenant: str
    source_id: str
    code: str
    detail: str


class ReceiptOutput(_Strict):
    receipt_id: int
    run_id: int
    tenant: str
    source_id: str
    versions: list[int]
    chunk_count: int
    stores: list[str]
    at: str
    retention: str


class HistoryOutput(_Strict):
    kind: Literal["explorer/history"] = "explorer/history"
    runs: list[RunOutput]
    failures: list[FailureOutput]
    receipts: list[ReceiptOutput]


def ingest_output(summary: RunSummary, statuses: list[tuple[str, str, str, str]]) -> IngestOutput:
    fields = asdict(summary)
    return IngestOutput(
        **fields,
        documents=[
            DocumentOutcome(tenant=t, source_id=s, status=c, detail=d) for t, s, c, d in statuses
        ],
    )


def search_output(
    query: str, tenant: str, mode: SearchMode, embedder: str | None, k: int, hits: list[Hit]
) -> SearchOutput:
    return SearchOutput(
        query=query,
        tenant=tenant,
        mode=mode,
        embedder=embedder,
        k=k,
        hits=[Citation(**asdict(hit)) for hit in hits],
    )


def history_output(
    runs: list[RunRow], failures: list[Failure], receipts: list[Receipt]
) -> HistoryOutput:
    return HistoryOutput(
        runs=[RunOutput(**asdict(run)) for run in runs],
        failures=[FailureOutput(**asdict(failure)) for failure in failures],
        receipts=[ReceiptOutput(**asdict(receipt)) for receipt in receipts],
    )
