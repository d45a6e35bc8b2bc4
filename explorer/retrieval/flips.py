"""`explorer diff`: two columns of the pipeline (`explore`), where their boundaries
differ (checking/diff.py), and, given questions, which ones one column answers and the
other does not, with the loser's boundaries that cut the answer.

A hit is `evaluate`'s (metrics.py): one retrieved chunk holds the whole answer, among
the top k or, with a budget, those of them the budget keeps. Both columns' questions are
measured as `evaluate` measures them (`evaluate_chunks`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple, NotRequired

from typing_extensions import TypedDict

from ..checking.diff import DiffFigures, DocumentDiff, column_boundaries, diff_documents
from ..chunking.config import ConfigJson
from ..errors import ErrorCode, ExplorerError
from ..limits import DEFAULT_LIMITS, Limits
from ..models import strict_shape
from ..pipeline import Column, Exploration
from .evaluate import (
    DEFAULT_K,
    MAX_K,
    Budget,
    QuestionResult,
    ReferenceRange,
    evaluate_chunks,
    require_budget,
)
from .questions import QuestionSet, place_questions, require_written
from .retrievers import Embed, RetrieverName, retriever

DIFF_VERSION = 1


@strict_shape
class Side(TypedDict):
    name: str
    config: ConfigJson
    index_id: str


@strict_shape
class FlippedQuestion(TypedDict):
    """A question one column hits and the other misses; `cut_by`: the loser's
    boundaries strictly inside one of its references."""

    id: str
    source_id: str
    winner: Literal["a", "b"]
    references: list[ReferenceRange]
    cut_by: list[int]


@strict_shape
class HitCounts(TypedDict):
    a_only: int
    b_only: int
    both: int
    neither: int


@strict_shape
class Diff(TypedDict):
    diff_version: int
    a: Side
    b: Side
    tolerance: int
    documents: list[DocumentDiff]
    summary: DiffFigures
    notes: NotRequired[list[str]]
    retriever: NotRequired[RetrieverName]
    k: NotRequired[int]
    budget: NotRequired[Budget | None]
    hits: NotRequired[HitCounts]
    questions: NotRequired[list[FlippedQuestion]]


class Flips(NamedTuple):
    questions: list[FlippedQuestion]
    hits: HitCounts


def require_pair(columns: Sequence[object]) -> None:
    """A diff compares exactly two columns."""
    if len(columns) != 2:
        raise ExplorerError(
            ErrorCode.USAGE,
            f"diff takes exactly two columns (--policy … or --chunks NAME=FILE), "
            f"not {len(columns)}",
        )


def require_tolerance(tolerance: int) -> None:
    if tolerance < 0:
        raise ExplorerError(
            ErrorCode.USAGE, f"the tolerance is a number of characters from 0, not {tolerance}"
        )


def shared_texts(exploration: Exploration, a: Column, b: Column) -> dict[str, str]:
    """The documents both columns cut, in index order (a grammar may leave some out)."""
    cut_by_b = {document["source_id"] for document in b.index["documents"]}
    return {
        document["source_id"]: exploration.text(document["source_id"])
        for document in a.index["documents"]
        if document["source_id"] in cut_by_b
    }


def cuts(bounds: Sequence[int], start: int, end: int) -> list[int]:
    """The boundaries strictly inside [start, end), of sorted `bounds`."""
    return list(bounds[bisect_right(bounds, start) : bisect_left(bounds, end)])


def flips(
    results_a: Sequence[QuestionResult],
    results_b: Sequence[QuestionResult],
    bounds_a: Mapping[str, Sequence[int]],
    bounds_b: Mapping[str, Sequence[int]],
) -> Flips:
    """Each question one column hits and the other misses, and how many questions each
    column alone, both and neither hit. The results are `evaluate`'s, the same questions
    in the same order."""
    flipped: list[FlippedQuestion] = []
    counts = {"a_only": 0, "b_only": 0, "both": 0, "neither": 0}
    for a, b in zip(results_a, results_b, strict=True):
        if a["hit"] and b["hit"]:
            counts["both"] += 1
            continue
        if not (a["hit"] or b["hit"]):
            counts["neither"] += 1
            continue
        winner: Literal["a", "b"] = "a" if a["hit"] else "b"
        counts[f"{winner}_only"] += 1
        loser = (bounds_b if winner == "a" else bounds_a).get(a["source_id"], [])
        cut_by = sorted({at for r in a["references"] for at in cuts(loser, r["start"], r["end"])})
        flipped.append(
            {
                "id": a["id"],
                "source_id": a["source_id"],
                "winner": winner,
                "references": a["references"],
                "cut_by": cut_by,
            }
        )
    hits: HitCounts = {
        "a_only": counts["a_only"],
        "b_only": counts["b_only"],
        "both": counts["both"],
        "neither": counts["neither"],
    }
    return Flips(flipped, hits)


def _side(column: Column) -> Side:
    return {
        "name": column.name,
        "config": column.result["config"],
        "index_id": column.index["index_id"],
    }


class Measured(NamedTuple):
    """How the questions are measured: `evaluate`'s retriever, k, embedder and budget
    (None: the top k whole)."""

    questions: QuestionSet
    retriever: RetrieverName = "bm25"
    k: int = DEFAULT_K
    embed: Embed | None = None
    budget: Budget | None = None


def diff_columns(
    exploration: Exploration,
    a: Column,
    b: Column,
    tolerance: int = 0,
    measured: Measured | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Diff:
    """Column `a` (the reference) against `b`: their boundaries in every document both
    cut, and, with `measured`, the questions that flip between them."""
    require_tolerance(tolerance)
    texts = shared_texts(exploration, a, b)
    bounds_a = column_boundaries(texts, (c for c in a.index["chunks"] if c["source_id"] in texts))
    bounds_b = column_boundaries(texts, (c for c in b.index["chunks"] if c["source_id"] in texts))
    found = diff_documents(texts, bounds_a, bounds_b, tolerance)
    diff: Diff = {
        "diff_version": DIFF_VERSION,
        "a": _side(a),
        "b": _side(b),
        "tolerance": tolerance,
        "documents": found.documents,
        "summary": found.summary,
    }
    left = [s for s in exploration.source_ids if s not in texts]
    if left:
        diff["notes"] = [
            f"{len(left)} document(s) are cut by one column only and left out of the "
            f"boundaries: {', '.join(map(repr, left[:5]))}"
        ]
    if measured is not None:
        if not 1 <= measured.k <= MAX_K:
            raise ExplorerError(ErrorCode.USAGE, f"k must be from 1 to {MAX_K}, not {measured.k}")
        require_budget(measured.budget)
        require_written(measured.questions)
        search = retriever(measured.retriever, measured.embed)
        all_texts = {s: exploration.text(s) for s in exploration.source_ids}
        placed = place_questions(measured.questions, all_texts)
        results = [
            evaluate_chunks(
                column.index["chunks"], placed, search, measured.k, limits, measured.budget
            )
            for column in (a, b)
        ]
        every_a = column_boundaries(all_texts, a.index["chunks"])
        every_b = column_boundaries(all_texts, b.index["chunks"])
        flipped = flips(results[0], results[1], every_a, every_b)
        diff["retriever"] = measured.retriever
        diff["k"] = measured.k
        diff["budget"] = measured.budget
        diff["hits"] = flipped.hits
        diff["questions"] = flipped.questions
    return diff


def summary_text(diff: Diff) -> str:
    """`diff` without --json: a few lines a person reads."""
    s = diff["summary"]
    a, b = diff["a"], diff["b"]
    lines = [
        f"A {a['name']}  vs  B {b['name']}  ({len(diff['documents'])} documents, "
        f"tolerance {diff['tolerance']})",
        f"boundaries: shared {s['shared']:,}, only A {s['only_a_count']:,}, "
        f"only B {s['only_b_count']:,}",
        f"B against A: precision {s['boundary_precision']:.3f}  recall "
        f"{s['boundary_recall']:.3f}  F1 {s['boundary_f1']:.3f}  Pk {s['pk']:.3f}  "
        f"WindowDiff {s['windowdiff']:.3f}",
    ]
    if "hits" in diff:
        h, budget = diff["hits"], diff.get("budget")
        kept = f", budget {budget['size']:,} {budget['unit']}" if budget else ""
        lines.append(
            f"questions ({diff['retriever']}, k={diff['k']}{kept}): A only {h['a_only']}, "
            f"B only {h['b_only']}, both {h['both']}, neither {h['neither']}"
        )
        for q in diff.get("questions", []):
            where = ", ".join(f"{r['start']}-{r['end']}" for r in q["references"])
            loser = "B" if q["winner"] == "a" else "A"
            cut = (
                f"cut by {loser} at {', '.join(map(str, q['cut_by']))}"
                if q["cut_by"]
                else f"{loser} has no boundary inside (its parts lie apart, or the chunk "
                f"ranks below k{' or past the budget' if budget else ''})"
            )
            lines.append(
                f"  {q['id']}: {q['winner'].upper()} hits; {q['source_id']} [{where}] {cut}"
            )
    lines.extend(f"note: {note}" for note in diff.get("notes", []))
    return "\n".join(lines) + "\n"
