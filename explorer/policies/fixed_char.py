"""Fixed-size character windows, restarted at every section: the baseline."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import ChunkConfig
from ..grammar import Section, Span


class FixedChar:
    name = "fixed-char"
    default_max_chars: int | None = 80

    def spans(self, text: str, section: Section, config: ChunkConfig) -> Iterator[Span]:
        size = config.size()
        for start in range(section.start, section.end, size):
            end = min(start + size, section.end)
            if not text[start:end].isspace():
                yield (start, end)
