"""The scoreboard: how each column (a policy and its config) did, at a glance.

One row per column (checks kept, chunk count, sizes, flagged chunks), a matrix of span
checks by columns, and the chunk sizes binned for a histogram. Pure data: the app shows
it, `render.render_matrix` draws the matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import median_low
from typing import Literal, cast

from ..checking.checks import CheckResult, ResolvedCheck, SpanResult, together_only_by_overlap
from ..checking.flags import FLAG_SHORT, FLAGS
from ..checking.report import FlagCounts, SkippedCheck
from ..chunking.index import ChunkRecord
from ..pipeline import Column
from .display import size_words

# "together by overlap": together only in a chunk that repeats the end of the one before.
Verdict = Literal["together", "together by overlap", "split", "not evaluated"]
HISTOGRAM_BINS = 20


@dataclass(frozen=True)
class ColumnScore:
    name: str
    config: Mapping[str, object]
    checks_kept: int
    checks_evaluated: int
    chunks: int
    sizes: tuple[int, int, int] | None  # min, median (the lower middle), max in characters
    flags: FlagCounts  # per flag, and "flagged": chunks with any


def chunk_size(chunk: ChunkRecord) -> int:
    """A chunk's size in characters (code points)."""
    return chunk["end"] - chunk["start"]


def column_score(column: Column) -> ColumnScore:
    checks = column.result["checks"]
    sizes = [chunk_size(c) for c in column.index["chunks"]]
    return ColumnScore(
        name=column.name,
        config=column.result["config"],
        checks_kept=sum(1 for c in checks if c["together"]),
        checks_evaluated=len(checks),
        chunks=column.result["chunk_count"],
        sizes=(min(sizes), median_low(sizes), max(sizes)) if sizes else None,
        flags=column.result["flags"],
    )


def score_rows(scores: Sequence[ColumnScore], skipped: int = 0) -> list[dict[str, str]]:
    """The scoreboard as table rows; every count with thousands separators."""

    rows = []
    for score in scores:
        if score.checks_evaluated:
            kept = f"{score.checks_kept:,}/{score.checks_evaluated:,}"
        else:
            kept = "no check evaluated" if skipped else "no checks"
        low, middle, high = score.sizes or (0, 0, 0)
        per_flag: Mapping[str, int] = cast(Mapping[str, int], score.flags)
        rows.append(
            {
                "Column": score.name,
                "Size": size_words(score.config),
                "Checks kept": kept,
                "Chunks": f"{score.chunks:,}",
                "Chars min / median / max": f"{low:,} / {middle:,} / {high:,}",
                "Flagged chunks": f"{score.flags['flagged']:,}",
                **{FLAG_SHORT[flag]: f"{per_flag[flag]:,}" for flag in FLAGS},
            }
        )
    return rows


@dataclass(frozen=True)
class Cell:
    verdict: Verdict
    where: str  # the chunk of each span, or why the check was not evaluated


@dataclass(frozen=True)
class MatrixRow:
    check_id: str
    source_id: str
    cells: tuple[Cell, ...]  # one per column, in column order


def where(span: SpanResult, orders: Mapping[str, int]) -> str:
    """The chunk (its order) that holds a span, or the chunks that split it."""
    containing = span["containing_chunk_ids"]
    overlapping = span["overlapping_chunk_ids"]
    if containing:
        return "chunk " + ", ".join(str(orders[c]) for c in containing)
    if overlapping:
        return "split across " + ", ".join(str(orders[c]) for c in overlapping)
    return "in no chunk"


def _verdict(check: ResolvedCheck, result: CheckResult, column: Column) -> Verdict:
    if not result["together"]:
        return "split"
    if column.config.overlap and together_only_by_overlap(check, column.index["chunks"]):
        return "together by overlap"
    return "together"


def check_matrix(
    columns: Sequence[Column], checks: Sequence[ResolvedCheck], skipped: Sequence[SkippedCheck]
) -> list[MatrixRow]:
    """One row per span check (`checks`, resolved, in the columns' order of results): its
    verdict in each column; a check of a document that did not load is in every column
    'not evaluated', with the reason."""
    rows: list[MatrixRow] = []
    orders = [{c["chunk_id"]: c["order"] for c in col.index["chunks"]} for col in columns]
    for position, check in enumerate(checks):
        cells = []
        for column, order in zip(columns, orders, strict=True):
            result = column.result["checks"][position]
            spans = " · ".join(f"{s['label']}: {where(s, order)}" for s in result["spans"])
            cells.append(Cell(_verdict(check, result, column), spans))
        rows.append(MatrixRow(check.id, check.source_id, tuple(cells)))
    for skip in skipped:
        cell = Cell("not evaluated", skip["reason"])
        rows.append(MatrixRow(skip["id"], skip["source_id"], (cell,) * len(columns)))
    return rows


@dataclass(frozen=True)
class Histogram:
    """Chunk sizes of every column in the same bins: `[edges[i], edges[i] + width)`;
    with `beyond`, the last bin holds every size from its edge up (a few outliers,
    gathered so that one huge chunk does not squeeze all the others into one bar)."""

    width: int
    edges: tuple[int, ...]
    counts: Mapping[str, tuple[int, ...]]  # column name -> count per bin
    beyond: bool = False


def _nice_width(span: int, bins: int) -> int:
    raw = max(1, -(-span // bins))
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000):
        if step >= raw:
            return step
    return raw


def size_histogram(columns: Sequence[Column], bins: int = HISTOGRAM_BINS) -> Histogram:
    """Every column's chunk sizes in common bins of a round width, from 0: up to the
    largest size, or, when that is more than twice the largest of the columns' 99th
    percentiles, up to that percentile, the larger sizes (at most 1 % of any column's
    chunks) gathered in one last bin."""
    sizes = {col.name: [chunk_size(c) for c in col.index["chunks"]] for col in columns}
    ordered = [sorted(values) for values in sizes.values() if values]
    largest = max((values[-1] for values in ordered), default=0)
    # Nearest rank: the size that 99 % of the column's chunks do not exceed.
    percentile = max((values[-(-99 * len(values) // 100) - 1] for values in ordered), default=0)
    reach = percentile if largest > 2 * percentile else largest
    width = _nice_width(reach + 1, bins)
    count = reach // width + 1 + (reach < largest)
    counts = {}
    for name, values in sizes.items():
        binned = [0] * count
        for value in values:
            binned[min(value // width, count - 1)] += 1
        counts[name] = tuple(binned)
    return Histogram(width, tuple(i * width for i in range(count)), counts, reach < largest)
