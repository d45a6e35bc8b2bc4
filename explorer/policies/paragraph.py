"""One chunk per paragraph."""

from __future__ import annotations

from ..config import ChunkConfig
from ..grammar import Section, Span, section_paragraphs


class Paragraph:
    name = "paragraph"
    default_max_chars: int | None = None

    def spans(self, text: str, section: Section, config: ChunkConfig) -> list[Span]:
        return section_paragraphs(text, section)
