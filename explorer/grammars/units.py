"""What a grammar measures a block with, so a grammar and a policy are written once for
every unit (characters or tokens: `explorer.chunking.tokens` has both)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .v1 import Span


class Unit(Protocol):
    """What a size is counted in, so that a policy is written once for every unit."""

    @property
    def name(self) -> str:
        """The config's `unit`."""

    def measure(self, text: str) -> int:
        """The size of `text` on its own."""

    def measure_span(self, text: str, start: int, end: int) -> int:
        """`measure(text[start:end])`, without the copy where the unit can."""

    def cut(self, text: str, start: int, end: int, size: int, overlap: int = 0) -> Iterable[Span]:
        """Windows of `text[start:end]`, each measuring at most `size` on its own.

        With `overlap` 0 the windows tile the span, in order and non-empty. Otherwise
        each window after the first starts `overlap` units before the previous one ends,
        so windows advance by `size - overlap`; the last window is the first that
        reaches `end`. A window that would be empty holds one character instead, even
        when that character alone measures more than `size`.
        """
