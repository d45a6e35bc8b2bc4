"""Semantic chunking with a hard maximum (docs/contract.md §5d): sentences, the distance
curve between neighbouring windows of them, and the chunks the curve implies.

Each section of the grammar (as heading-aware has them) is split into sentences: its
prose units by the sentence rule (`explorer.chunking.sentences`), every other unit
(code, a table, a top-level list's item) one sentence. Between sentences i and i + 1 of
one section lies a gap, whose distance is `1 - cos(embed(left), embed(right))`: left is
the text of the `window` sentences ending at i, right of those starting at i + 1, both
cut at the section's edges. The threshold is the `breakpoint_percentile`-th percentile
of the document's distances (numpy's linear interpolation); a gap whose distance is
above it is a breakpoint. Each section is cut at its breakpoints; a piece over the
maximum is cut again at its highest-distance gap (the earliest on a tie), recursively;
one sentence over the maximum is cut in fixed windows of the maximum, as fixed-char
cuts (whitespace-only windows dropped).

Each distinct window is embedded once per document, in the embedder's batches; what is
held is one float32 matrix of the windows' vectors, then one distance per gap. The
distances are kept (`_DISTANCES`, a few documents') so that a new percentile or maximum
of the same document, grammar, window and embedder embeds nothing again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from hashlib import sha256
from itertools import pairwise
from threading import Lock
from typing import TYPE_CHECKING

from ...embedders import Embedder, batch_size, embed_texts, embedder_named
from ...errors import ErrorCode, ExplorerError
from ...grammars import GrammarSection, Unit
from ...grammars.v1 import Span
from ..config import ChunkConfig, Semantic, grammar_for
from ..sentences import sentences as prose_sentences
from ..tokens import UNITS

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Distances = NDArray[np.float64]

# Gaps whose distances are computed at once from the window matrix (two float64 blocks
# of this many rows): the rest of the memory is the matrix itself.
_GAPS_AT_ONCE = 4096
# What one embedding call may hold, as characters padded to its longest window.
_PADDED_CHARS = 128 * 1024
# Documents whose distances are kept, by (text SHA-256, grammar, window, embedder).
_KEPT = 32
_DISTANCES: OrderedDict[tuple[str, str, int, str, int], Distances] = OrderedDict()
_KEEPING = Lock()


@dataclass(frozen=True)
class Sentences:
    """A document's sentences in order, and each section with its sentences' range
    `[first, stop)`."""

    spans: list[Span]
    sections: list[tuple[GrammarSection, int, int]]

    def gaps(self) -> Iterator[int]:
        """Each gap as the number of the sentence before it, in document order."""
        for _, first, stop in self.sections:
            yield from range(first, stop - 1)


def document_sentences(text: str, config: ChunkConfig) -> Sentences:
    spans: list[Span] = []
    sections: list[tuple[GrammarSection, int, int]] = []
    for section in grammar_for(config).sections(text):
        first = len(spans)
        for (start, end), prose in section.sentence_units(text):
            if prose:
                spans.extend(prose_sentences(text, start, end))
            else:
                spans.append((start, end))
        sections.append((section, first, len(spans)))
    return Sentences(spans, sections)


def _windows(sentences: Sentences, window: int) -> tuple[list[Span], list[Span]]:
    """Each gap's left and right windows, as spans of the text."""
    spans = sentences.spans
    left: list[Span] = []
    right: list[Span] = []
    for _, first, stop in sentences.sections:
        for i in range(first, stop - 1):
            left.append((spans[max(first, i - window + 1)][0], spans[i][1]))
            right.append((spans[i + 1][0], spans[min(stop - 1, i + window)][1]))
    return left, right


def _embedded_distances(
    text: str, left: list[Span], right: list[Span], embedder: Embedder
) -> Distances:
    """`1 - cos` of each gap's windows, each distinct window embedded once, in batches."""
    import numpy as np

    rows: dict[Span, int] = {}
    left_rows = [rows.setdefault(span, len(rows)) for span in left]
    right_rows = [rows.setdefault(span, len(rows)) for span in right]
    order = list(rows)
    vectors = np.empty((len(order), embedder.dimensions), dtype=np.float32)
    at = 0
    for count in _batch_sizes(order, batch_size(embedder)):
        texts = [text[a:b] for a, b in order[at : at + count]]
        vectors[at : at + count] = embed_texts(embedder, texts)
        at += count
    distances: Distances = np.empty(len(left), dtype=np.float64)
    for at in range(0, len(left), _GAPS_AT_ONCE):
        a = vectors[left_rows[at : at + _GAPS_AT_ONCE]].astype(np.float64)
        b = vectors[right_rows[at : at + _GAPS_AT_ONCE]].astype(np.float64)
        distances[at : at + len(a)] = 1.0 - np.einsum("ij,ij->i", a, b)
    return distances


def _batch_sizes(spans: list[Span], most: int) -> Iterator[int]:
    """How many windows each call embeds, in order: at most `most`, and at most
    `_PADDED_CHARS` once each is counted as long as the batch's longest (an embedder
    pads a batch to its longest text, as WordLlama does); a longer window alone."""
    count = longest = 0
    for start, end in spans:
        longer = max(longest, end - start)
        if count and (count == most or (count + 1) * longer > _PADDED_CHARS):
            yield count
            count, longer = 0, end - start
        count, longest = count + 1, longer
    if count:
        yield count


def gap_distances(text: str, config: ChunkConfig, left: list[Span], right: list[Span]) -> Distances:
    """The document's distances, computed once per text, grammar, window and embedder
    (kept for `_KEPT` documents; the app's sessions share them, so under a lock)."""
    settings = _settings(config)
    named = settings.embedder
    key = (
        sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        config.grammar_name,
        settings.window,
        named.name,
        named.dimensions,
    )
    with _KEEPING:
        kept = _DISTANCES.get(key)
        if kept is not None:
            _DISTANCES.move_to_end(key)
            return kept
    embedder = embedder_named(named.name, named.dimensions)
    distances = _embedded_distances(text, left, right, embedder)
    with _KEEPING:
        _DISTANCES[key] = distances
        while len(_DISTANCES) > _KEPT:
            _DISTANCES.popitem(last=False)
    return distances


def _settings(config: ChunkConfig) -> Semantic:
    if config.semantic is None:
        raise ExplorerError(
            ErrorCode.UNSUPPORTED_CHUNK_CONFIG, "a semantic column's config needs 'semantic'"
        )
    return config.semantic


@dataclass(frozen=True)
class Curve:
    """A document's curve and the chunks it implies.

    - `sentences`, and per gap (document order): `gap_before` (the sentence before it),
      `left`, `right`, `distances`;
    - `threshold` (None without gaps) and `breakpoints` (gap numbers, in order);
    - `chunks` (each with its section) and `forced`: where the maximum cut (an offset
      of the text: a gap's, or a fixed window's start inside one sentence)."""

    sentences: Sentences
    gap_before: list[int]
    left: list[Span]
    right: list[Span]
    distances: Distances
    threshold: float | None
    breakpoints: list[int]
    chunks: list[tuple[GrammarSection, Span]]
    forced: list[int]

    def offset(self, gap: int) -> int:
        """Where the sentence after gap `gap` starts."""
        return self.sentences.spans[self.gap_before[gap] + 1][0]


def document_curve(text: str, config: ChunkConfig) -> Curve:
    import numpy as np

    settings = _settings(config)
    sentences = document_sentences(text, config)
    left, right = _windows(sentences, settings.window)
    distances = gap_distances(text, config, left, right)
    threshold = (
        float(np.percentile(distances, settings.breakpoint_percentile)) if len(left) else None
    )
    above = [] if threshold is None else np.flatnonzero(distances > threshold).tolist()
    gap_before = list(sentences.gaps())
    chunks, forced = _cut(text, config, sentences, distances, set(above))
    return Curve(sentences, gap_before, left, right, distances, threshold, above, chunks, forced)


def _cut(
    text: str,
    config: ChunkConfig,
    sentences: Sentences,
    distances: Distances,
    breakpoints: set[int],
) -> tuple[list[tuple[GrammarSection, Span]], list[int]]:
    """Each section cut at its breakpoints, then as the maximum requires; and where the
    maximum cut, in order."""
    cutter = _Cutter(text, UNITS[config.unit_name], config.size())
    gap = 0  # the number of the section's first gap
    for section, first, stop in sentences.sections:
        count = stop - first
        cuts = [j for j in range(count - 1) if gap + j in breakpoints]
        own = sentences.spans[first:stop]
        cutter.section(section, own, distances[gap : gap + count - 1], cuts)
        gap += count - 1
    return cutter.chunks, sorted(cutter.forced)


class _Cutter:
    def __init__(self, text: str, unit: Unit, size: int) -> None:
        self.text, self.unit, self.size = text, unit, size
        self.chunks: list[tuple[GrammarSection, Span]] = []
        self.forced: list[int] = []

    def section(
        self, section: GrammarSection, own: list[Span], gaps: Distances, cuts: list[int]
    ) -> None:
        """One section's sentences `own`, the distances of its gaps, its breakpoints."""
        text, unit, size = self.text, self.unit, self.size
        measures = unit.measure_units(text, own)
        table: _RangeMax | None = None

        def measure(a: int, b: int) -> int:
            summed = measures.run(a, b)
            if summed is not None:
                return summed
            return unit.measure_span(text, own[a][0], own[b][1])

        bounds = [-1, *cuts, len(own) - 1]
        for low, high in pairwise(bounds):
            stack = [(low + 1, high)]
            while stack:
                a, b = stack.pop()
                if measure(a, b) <= size:
                    self.chunks.append((section, (own[a][0], own[b][1])))
                elif a == b:
                    windows = list(unit.cut(text, own[a][0], own[a][1], size))
                    self.forced.extend(start for start, _ in windows[1:])
                    self.chunks.extend(
                        (section, window)
                        for window in windows
                        if not text[window[0] : window[1]].isspace()
                    )
                else:
                    table = table or _RangeMax(gaps)
                    j = table.first_highest(a, b - 1)
                    self.forced.append(own[j + 1][0])
                    stack.extend(((j + 1, b), (a, j)))


class _RangeMax:
    """The highest value of any range of `values`, the earliest on a tie, in constant
    time after `n log n` (a sparse table of positions)."""

    def __init__(self, values: Distances) -> None:
        import numpy as np

        self.values = values
        level = np.arange(len(values))
        self.levels = [level]
        width = 1
        while 2 * width <= len(values):
            left, right = level[: len(level) - width], level[width:]
            level = np.where(values[left] >= values[right], left, right)
            self.levels.append(level)
            width *= 2

    def first_highest(self, a: int, b: int) -> int:
        """The position of the highest value in `values[a..b]` (both included)."""
        k = (b - a + 1).bit_length() - 1
        x = int(self.levels[k][a])
        y = int(self.levels[k][b - (1 << k) + 1])
        return x if self.values[x] >= self.values[y] else y


class SemanticPolicy:
    """The policy `semantic`: a document's sections cut where its curve implies."""

    name = "semantic"
    default_max_chars: int | None = 1000

    def section_spans(self, text: str, config: ChunkConfig) -> list[tuple[GrammarSection, Span]]:
        return document_curve(text, config).chunks


def curve_json(curve: Curve) -> dict[str, object]:
    """The curve as `explorer curve --json` prints it (docs/contract.md §5d)."""
    return {
        "sentences": [list(span) for span in curve.sentences.spans],
        "gaps": [
            {
                "offset": curve.offset(gap),
                "left": list(curve.left[gap]),
                "right": list(curve.right[gap]),
                "distance": float(distance),
            }
            for gap, distance in enumerate(curve.distances.tolist())
        ],
        "threshold": curve.threshold,
        "breakpoints": [curve.offset(gap) for gap in curve.breakpoints],
        "forced": curve.forced,
        "chunks": [list(span) for _, span in curve.chunks],
    }
