"""Neighbouring units of one section, grouped greedily up to a size, optionally overlapping."""

from __future__ import annotations

from itertools import accumulate

from ...grammars import GrammarSection
from ...grammars.units import Unit
from ...grammars.v1 import Span
from ..config import ChunkConfig
from ..tokens import UNITS


class HeadingAware:
    name = "heading-aware"
    default_max_chars: int | None = 220

    def spans(self, text: str, section: GrammarSection, config: ChunkConfig) -> list[Span]:
        """Units join a chunk while it measures at most the size.

        A unit larger than the size is first cut as the grammar allows: grammar v1 keeps a
        paragraph whole (the size is a target there, as the seed's ids record), the
        markdown grammar cuts a block between lines. With overlap, see `_Packer.run`.
        """
        unit = UNITS[config.unit_name]
        packer = _Packer(text, section, config.size(), unit)
        return packer.run(config.overlap or 0)


def _cut(
    text: str, section: GrammarSection, size: int, unit: Unit, units: list[Span], costs: list[int]
) -> tuple[list[Span], list[int | None]]:
    """The units (measuring `costs`), each larger than the size replaced by the pieces
    the grammar cuts it in (those not blank); and the measure of each where known.

    A single piece is a piece too: it may be narrower than its unit (a one-line block
    one newline over the size is the line without it, §4b), so its own span is kept;
    where it is the whole unit (a v1 paragraph), the unit's measure is known."""
    kept: list[Span] = []
    known: list[int | None] = []
    for (start, end), cost in zip(units, costs, strict=True):
        if cost <= size:
            kept.append((start, end))
            known.append(cost)
            continue
        for piece, measure in section.split(text, (start, end), size, unit):
            if not text[piece[0] : piece[1]].isspace():
                kept.append(piece)
                known.append(cost if piece == (start, end) else measure)
    return kept, known


class _Packer:
    """The section's units with their measures, each measured once.

    A run of units `[a, b]` (inclusive) is first estimated as the sum of its units' and
    the gaps' measures, then measured as a whole. In characters the estimate is exact
    (`end - start`); in tokens it is not (encodings merge or split at the edges), so a
    group the estimate admits is measured and gives back units until it fits. A run's
    measure is a sum of measures taken once (`Measures.run`) except where a unit starts
    a line on which token counts may not add up; there its text is counted again.
    """

    def __init__(self, text: str, section: GrammarSection, size: int, unit: Unit) -> None:
        self.text, self.size, self.unit = text, size, unit
        units = section.units(text)
        measures = unit.measure_units(text, units)
        if any(cost > size for cost in measures.costs):
            units, known = _cut(text, section, size, unit, units, measures.costs)
            measures = unit.measure_units(text, units, known)
        self.starts = [start for start, _ in units]
        self.ends = [end for _, end in units]
        self.costs, self.gaps, self.measures = measures.costs, measures.gaps, measures
        # prefix[k]: the estimated measure of units 0..k-1, each with its gap.
        estimates = (cost + gap for cost, gap in zip(self.costs, self.gaps, strict=True))
        self.prefix = list(accumulate(estimates, initial=0))

    def estimate(self, a: int, b: int) -> int:
        return self.prefix[b + 1] - self.prefix[a] - self.gaps[b]

    def measure(self, a: int, b: int) -> int:
        summed = self.measures.run(a, b)
        if summed is not None:
            return summed
        return self.unit.measure_span(self.text, self.starts[a], self.ends[b])

    def extend(self, first: int, new: int) -> tuple[int, bool]:
        """The last unit of the chunk `[first, …]` that must hold unit `new`, and whether
        the chunk fits: it takes units after `new` while the estimate allows, then gives
        them back until its own measure fits."""
        last = new
        while last + 1 < len(self.starts) and self.estimate(first, last + 1) <= self.size:
            last += 1
        while True:
            fits = self.measure(first, last) <= self.size
            if fits or last == new:
                return last, fits
            last -= 1

    def repeated(self, previous: int, new: int, overlap: int) -> int:
        """The first of the trailing units of the previous chunk `[previous, new - 1]` that
        the next chunk repeats: the longest run measuring at most `overlap` that leaves
        room for unit `new` (the run and it measure at most the size together), never the
        previous chunk's first unit (so starts strictly increase)."""
        first = new
        while first - 1 > previous and self.estimate(first - 1, new - 1) <= overlap:
            first -= 1
        while first < new and self.measure(first, new - 1) > overlap:
            first += 1
        while first < new and self.measure(first, new) > self.size:
            first += 1
        return first

    def run(self, overlap: int) -> list[Span]:
        """Chunks in order. With `overlap`, each chunk after the section's first starts with
        the longest run of the previous chunk's trailing units that measures at most
        `overlap` and leaves room for one new unit (`repeated`), then takes new units while
        the whole measures at most the size; it always takes one new unit at least. A unit
        larger than the size (a v1 paragraph) is a chunk of its own."""
        chunks: list[Span] = []
        new = 0
        previous = -1
        while new < len(self.starts):
            first = self.repeated(previous, new, overlap) if overlap and chunks else new
            last, _ = self.extend(first, new)
            chunks.append((self.starts[first], self.ends[last]))
            previous, new = first, last + 1
        return chunks
