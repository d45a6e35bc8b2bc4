"""Metrics over character ranges, those of chunking_evaluation: ranges are `(source_id,
start, end)` (ranges of different documents never intersect). With R the union of a
question's reference ranges and c_i its retrieved chunks:
recall = |R ∩ C| / |R|; precision = |R ∩ C| / Σ|c_i| (every retrieved character counts,
overlapping ones too); IoU = |R ∩ C| / (Σ|c_i| + |R \\ C|), where C is the union of
the c_i; hit = one retrieved chunk contains all of R."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
