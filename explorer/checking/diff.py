"""Where two columns cut a document differently (`explorer diff`, the app's diff view).

A column's boundaries in a document are every chunk's start and end offsets, without 0
and the text's length (with overlap, both the start and the end of a chunk count).
Column A is the reference; B is measured against it.

- Matching: a boundary of A and one of B match when they are at most `tolerance`
  characters apart; one to one, greedy in offset order (the lower of two unmatched
  boundaries is settled first). `shared` counts the matched pairs, `only_a` and
  `only_b` are the boundaries left unmatched on each side.
- `boundary_precision` = shared / |B|, `boundary_recall` = shared / |A| (1.0 when the
  side counted has no boundary), `boundary_f1` their harmonic mean (0.0 when both are 0).
- `pk` (Beeferman et al. 1999) and `windowdiff` (Pevzner & Hearst 2002), A the reference,
  over the character positions 0 … N-1 of a text of N characters: a boundary at offset
  b separates characters b-1 and b. There are N-k windows, one per pair of positions
  (i, i+k) with 0 <= i < N-k; a window holds the boundaries at offsets i+1 … i+k. Pk
  counts the windows where one column has a boundary in it and the other has none,
  WindowDiff those where the two counts differ; each divided by N-k. This is
  nltk.metrics.segmentation's pk and windowdiff on strings of N-1 characters, one per
  gap between neighbouring characters ("1" where a boundary lies). A text of at most k
  characters has no window: both are 0.
- `k` is half of A's mean segment length, N / (|A| + 1) / 2, rounded as Python rounds
  (halves to even), at least 1.
- Over all documents (`summary`): the counts added up, precision, recall and F1 of the
  sums, and Pk and WindowDiff as the windows in error over all documents' windows.

Both metrics are computed in time linear in the number of boundaries, not characters:
the count of a column's boundaries in window i changes only where a boundary enters
(i = b - k) or leaves (i = b), so a sweep over those events covers every window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from heapq import merge
from itertools import groupby
from typing import NamedTuple

from typing_extensions import TypedDict

from ..chunking.index import ChunkRecord
from ..models import strict_shape

MAX_LISTED = 10_000  # boundaries listed per side and document; the counts are always given


def boundaries(spans: Iterable[tuple[int, int]], length: int) -> list[int]:
    """Every start and end of `spans` inside a text of `length` characters, sorted, once
    each, without 0 and `length`."""
    return sorted({offset for span in spans for offset in span} - {0, length})


class Matched(NamedTuple):
    only_a: list[int]
    only_b: list[int]
    shared: int


def match(a: Sequence[int], b: Sequence[int], tolerance: int = 0) -> Matched:
    """One-to-one matching of sorted boundaries at most `tolerance` apart, greedy in
    offset order."""
    only_a: list[int] = []
    only_b: list[int] = []
    shared = i = j = 0
    while i < len(a) and j < len(b):
        if abs(a[i] - b[j]) <= tolerance:
            shared += 1
            i += 1
            j += 1
        elif a[i] < b[j]:
            only_a.append(a[i])
            i += 1
        else:
            only_b.append(b[j])
            j += 1
    only_a.extend(a[i:])
    only_b.extend(b[j:])
    return Matched(only_a, only_b, shared)


def window_k(a: Sequence[int], length: int) -> int:
    """Half of A's mean segment length, rounded, at least 1."""
    return max(1, round(length / (len(a) + 1) / 2))


class WindowErrors(NamedTuple):
    """Windows in error under Pk and under WindowDiff, of `windows` in all."""

    pk: int
    windowdiff: int
    windows: int


def window_errors(a: Sequence[int], b: Sequence[int], length: int, k: int) -> WindowErrors:
    """Pk's and WindowDiff's windows in error, by a sweep over where each column's count
    of boundaries in the window changes (see the module's docstring)."""
    windows = max(0, length - k)
    # (window where the change happens, column, +1 or -1): window i holds b iff b-k <= i < b.
    events = merge(
        ((offset - k, 0, 1) for offset in a),
        ((offset, 0, -1) for offset in a),
        ((offset - k, 1, 1) for offset in b),
        ((offset, 1, -1) for offset in b),
    )
    counts = [0, 0]
    pk = windowdiff = 0
    at = 0  # the first window not yet counted
    for window, changes in groupby(events, key=lambda event: event[0]):
        stop = min(max(window, 0), windows)
        if stop > at:
            if (counts[0] > 0) != (counts[1] > 0):
                pk += stop - at
            if counts[0] != counts[1]:
                windowdiff += stop - at
            at = stop
        for _, column, step in changes:
            counts[column] += step
    return WindowErrors(pk, windowdiff, windows)


@strict_shape
class DiffFigures(TypedDict):
    only_a_count: int
    only_b_count: int
    shared: int
    boundary_precision: float
    boundary_recall: float
    boundary_f1: float
    pk: float
    windowdiff: float


@strict_shape
class DocumentDiff(TypedDict):
    """One document: its figures, the boundaries on one side only (at most `MAX_LISTED`
    each), Pk's window `k` and how many windows were counted."""

    source_id: str
    only_a: list[int]
    only_a_count: int
    only_b: list[int]
    only_b_count: int
    shared: int
    boundary_precision: float
    boundary_recall: float
    boundary_f1: float
    pk: float
    windowdiff: float
    k: int
    windows: int


def _figure(value: float) -> float:
    return round(value, 6)


class _Counts(NamedTuple):
    a: int
    b: int
    shared: int
    pk: int
    windowdiff: int
    windows: int

    def figures(self) -> DiffFigures:
        precision = self.shared / self.b if self.b else 1.0
        recall = self.shared / self.a if self.a else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "only_a_count": self.a - self.shared,
            "only_b_count": self.b - self.shared,
            "shared": self.shared,
            "boundary_precision": _figure(precision),
            "boundary_recall": _figure(recall),
            "boundary_f1": _figure(f1),
            "pk": _figure(self.pk / self.windows) if self.windows else 0.0,
            "windowdiff": _figure(self.windowdiff / self.windows) if self.windows else 0.0,
        }


def _document(
    source_id: str, a: Sequence[int], b: Sequence[int], length: int, tolerance: int
) -> tuple[DocumentDiff, _Counts]:
    matched = match(a, b, tolerance)
    k = window_k(a, length)
    errors = window_errors(a, b, length, k)
    counts = _Counts(len(a), len(b), matched.shared, *errors)
    figures = counts.figures()
    document: DocumentDiff = {
        "source_id": source_id,
        "only_a": matched.only_a[:MAX_LISTED],
        "only_a_count": figures["only_a_count"],
        "only_b": matched.only_b[:MAX_LISTED],
        "only_b_count": figures["only_b_count"],
        "shared": figures["shared"],
        "boundary_precision": figures["boundary_precision"],
        "boundary_recall": figures["boundary_recall"],
        "boundary_f1": figures["boundary_f1"],
        "pk": figures["pk"],
        "windowdiff": figures["windowdiff"],
        "k": k,
        "windows": errors.windows,
    }
    return document, counts


def document_diff(
    source_id: str, a: Sequence[int], b: Sequence[int], length: int, tolerance: int = 0
) -> DocumentDiff:
    """One document's diff of boundaries `a` (the reference) and `b`, both sorted."""
    return _document(source_id, a, b, length, tolerance)[0]


def column_boundaries(
    texts: Mapping[str, str], chunks: Iterable[ChunkRecord]
) -> dict[str, list[int]]:
    """Each document's boundaries under one column's chunks (a document it has no chunk
    in has none)."""
    spans: dict[str, list[tuple[int, int]]] = {source_id: [] for source_id in texts}
    for chunk in chunks:
        spans[chunk["source_id"]].append((chunk["start"], chunk["end"]))
    return {source_id: boundaries(spans[source_id], len(texts[source_id])) for source_id in texts}


class BoundaryDiff(NamedTuple):
    documents: list[DocumentDiff]
    summary: DiffFigures


def diff_documents(
    texts: Mapping[str, str],
    a: Mapping[str, Sequence[int]],
    b: Mapping[str, Sequence[int]],
    tolerance: int = 0,
) -> BoundaryDiff:
    """Every document of `texts`, in order: its diff of `a`'s boundaries and `b`'s; and
    the figures over all of them (counts added up, rates of the sums)."""
    documents: list[DocumentDiff] = []
    totals = _Counts(0, 0, 0, 0, 0, 0)
    for source_id, text in texts.items():
        document, counts = _document(source_id, a[source_id], b[source_id], len(text), tolerance)
        documents.append(document)
        totals = _Counts(*(x + y for x, y in zip(totals, counts, strict=True)))
    return BoundaryDiff(documents, totals.figures())
