"""Fixed-size windows, restarted at every section: the baseline."""

from __future__ import annotations

from collections.abc import Iterator

from ...grammars import GrammarSection
from ...grammars.v1 import Span
from ..config import ChunkConfig
from ..tokens import UNITS


class FixedChar:
    """Windows of the section's body of at most the size each (in characters, `range(start,
    end, size)`); with overlap they advance by `size - overlap` (see `Unit.cut`).
    Whitespace-only windows are dropped."""

    name = "fixed-char"
    default_max_chars: int | None = 80

    def spans(self, text: str, section: GrammarSection, config: ChunkConfig) -> Iterator[Span]:
        unit = UNITS[config.unit_name]
        windows = unit.cut(text, section.start, section.end, config.size(), config.overlap or 0)
        for start, end in windows:
            if not text[start:end].isspace():
                yield (start, end)
