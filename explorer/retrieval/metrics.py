"""Metrics over character ranges, those of chunking_evaluation: ranges are `(source_id,
start, end)` (ranges of different documents never intersect). With R the union of a
question's reference ranges and c_i its retrieved chunks:
recall = |R ∩ C| / |R|; precision = |R ∩ C| / Σ|c_i| (every retrieved character counts,
overlapping ones too); IoU = |R ∩ C| / (Σ|c_i| + |R \\ C|), where C is the union of
the c_i; hit = one retrieved chunk contains all of R.

Beside them: Precision_Ω (chunking_evaluation's `_full_precision_score`, which needs every
chunk of the column, not only the retrieved), the reciprocal rank of the first retrieved
chunk that meets a reference, and binary nDCG."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

Range = tuple[str, int, int]  # (source_id, start, end), half-open, in characters


def union(ranges: Sequence[Range]) -> list[Range]:
    """The same characters as sorted, disjoint, non-touching ranges."""
    merged: list[Range] = []
    for source_id, start, end in sorted(ranges):
        if start >= end:
            continue
        if merged and merged[-1][0] == source_id and start <= merged[-1][2]:
            last = merged[-1]
            merged[-1] = (source_id, last[1], max(last[2], end))
        else:
            merged.append((source_id, start, end))
    return merged


def size(ranges: Sequence[Range]) -> int:
    """Σ|r|: every character of every range, overlaps counted again."""
    return sum(end - start for _, start, end in ranges)


def overlap(a: Sequence[Range], b: Sequence[Range]) -> int:
    """|union(a) ∩ union(b)|: the characters both cover, each counted once."""
    total = 0
    left, right = union(a), union(b)
    i = j = 0
    while i < len(left) and j < len(right):
        (sa, a0, a1), (sb, b0, b1) = left[i], right[j]
        if sa == sb:
            total += max(0, min(a1, b1) - max(a0, b0))
        if (sa, a1) <= (sb, b1):
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True)
class Scores:
    recall: float
    precision: float
    iou: float
    hit: bool


def contains(outer: Range, inner: Range) -> bool:
    return outer[0] == inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2]


def score(references: Sequence[Range], retrieved: Sequence[Range]) -> Scores:
    """The four figures of one question (see the module's docstring). With nothing
    retrieved, precision is 0."""
    wanted = union(references)
    wanted_size = size(wanted)
    if wanted_size == 0:
        raise ValueError("a question needs a non-empty reference")
    found = overlap(wanted, retrieved)
    retrieved_size = size(retrieved)
    return Scores(
        recall=found / wanted_size,
        precision=found / retrieved_size if retrieved_size else 0.0,
        iou=found / (retrieved_size + wanted_size - found),
        hit=any(all(contains(chunk, part) for part in wanted) for chunk in retrieved),
    )


def meets(chunk: Range, reference: Range) -> bool:
    """A chunk meets a reference when they share a character (a non-empty intersection)."""
    return chunk[0] == reference[0] and max(chunk[1], reference[1]) < min(chunk[2], reference[2])


def reciprocal_rank(references: Sequence[Range], retrieved: Sequence[Range]) -> float:
    """1 / the rank of the first retrieved chunk that meets a reference, else 0."""
    for rank, chunk in enumerate(retrieved, 1):
        if any(meets(chunk, reference) for reference in references):
            return 1.0 / rank
    return 0.0


def ndcg(references: Sequence[Range], retrieved: Sequence[Range], relevant: int) -> float:
    """Binary nDCG: DCG = Σ rel_i / log2(i + 1) over the retrieved list (rel_i: chunk i
    meets a reference), over the ideal DCG of min(relevant, n) relevant chunks first,
    `relevant` being the column's chunks that meet a reference; 0 when there are none."""
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(relevant, len(retrieved)) + 1))
    if ideal == 0:
        return 0.0
    gained = sum(
        1.0 / math.log2(i + 1)
        for i, chunk in enumerate(retrieved, 1)
        if any(meets(chunk, reference) for reference in references)
    )
    return gained / ideal


class Coverage(NamedTuple):
    """What a question's figures need of all of a column's chunks, not only the retrieved:
    `precision_omega`, and `relevant`, how many chunks meet a reference (nDCG's R)."""

    precision_omega: float
    relevant: int


class DocumentChunks:
    """A column's chunks of one document, as ranges, for `coverage` to scan at once."""

    def __init__(self, source_id: str, ranges: Sequence[tuple[int, int]]) -> None:
        import numpy as np

        self.source_id = source_id
        self.starts = np.fromiter((s for s, _ in ranges), dtype=np.int64, count=len(ranges))
        self.ends = np.fromiter((e for _, e in ranges), dtype=np.int64, count=len(ranges))

    def coverage(self, references: Sequence[Range]) -> Coverage:
        """Precision_Ω as chunking_evaluation defines it (`_full_precision_score`): with
        C the union of the chunks that touch or meet a reference (max(starts) ≤
        min(ends): a chunk that ends where a reference starts counts) and R the union of
        the references, C's intersection with R over their union, in characters; 0 when
        no chunk touches a reference."""
        import numpy as np

        touching = np.zeros(len(self.starts), dtype=bool)
        meeting = np.zeros(len(self.starts), dtype=bool)
        for source_id, start, end in references:
            if source_id != self.source_id:
                continue
            low = np.maximum(self.starts, start)
            high = np.minimum(self.ends, end)
            touching |= low <= high
            meeting |= low < high
        chunks = [
            (self.source_id, int(s), int(e))
            for s, e in zip(self.starts[touching], self.ends[touching], strict=True)
        ]
        if not chunks:
            return Coverage(0.0, 0)
        wanted = union(references)
        found = overlap(chunks, wanted)
        whole = size(union(chunks)) + size(wanted) - found
        return Coverage(found / whole if whole else 0.0, int(meeting.sum()))
