"""One chunk per unit of the grammar: a v1 paragraph, or a markdown block."""

from __future__ import annotations

from ...grammars import GrammarSection
from ...grammars.v1 import Span
from ..config import ChunkConfig


class Paragraph:
    name = "paragraph"
    default_max_chars: int | None = None

    def spans(self, text: str, section: GrammarSection, config: ChunkConfig) -> list[Span]:
        return section.units(text)
