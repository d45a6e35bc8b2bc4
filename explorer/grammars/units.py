"""What a grammar measures a block with, so a grammar and a policy are written once for
every unit (characters or tokens: `explorer.chunking.tokens` has both)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

from .v1 import Span


class Measures(NamedTuple):
    """Units in order (`Unit.measure_units`): each one's measure, the gap's to the next,
    and how runs of them measure as a whole.

    `joined[k]` is the measure of `text[s_0:s_k]` (s_k: unit k's start) taken unit by
    unit, and `breaks[k]` how many of s_1…s_k are places where the measure of the two
    sides does not add up to the whole's. A run `[a, b]` with no such place inside
    measures `joined[b] - joined[a] + costs[b]`, exactly; `Measures.run` says so.
    """

    costs: list[int]
    gaps: list[int]
    joined: list[int]
    breaks: list[int]

    def run(self, a: int, b: int) -> int | None:
        """The exact measure of units `a..b` (inclusive) as one text, or None when it
        must be measured on its own."""
        if self.breaks[b] != self.breaks[a]:
            return None
        return self.joined[b] - self.joined[a] + self.costs[b]


class Unit(Protocol):
    """What a size is counted in, so that a policy is written once for every unit."""

    @property
    def name(self) -> str:
        """The config's `unit`."""

    def measure(self, text: str) -> int:
        """The size of `text` on its own."""

    def measure_span(self, text: str, start: int, end: int) -> int:
        """`measure(text[start:end])`, without the copy where the unit can."""

    def measure_units(
        self, text: str, units: Sequence[Span], known: Sequence[int | None] = ()
    ) -> Measures:
        """The measures of units in order that do not overlap, with which to measure any
        run of them (`Measures.run`) without measuring its text again; `known`, if
        given, holds each unit's measure where it was taken already (None: not)."""

    def reach(self, text: str, start: int, end: int, size: int) -> int:
        """Where the first window of `cut` (no overlap) ends, found without cutting the
        rest of the span, and not kept: a long line's pieces ask it once each."""

    def cut(self, text: str, start: int, end: int, size: int, overlap: int = 0) -> Iterable[Span]:
        """Windows of `text[start:end]`, each measuring at most `size` on its own.

        With `overlap` 0 the windows tile the span, in order and non-empty. Otherwise
        each window after the first starts `overlap` units before the previous one ends,
        so windows advance by `size - overlap`; the last window is the first that
        reaches `end`. A window that would be empty holds one character instead, even
        when that character alone measures more than `size`.
        """
