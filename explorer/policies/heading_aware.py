"""Neighbouring paragraphs of one section, grouped greedily up to a target size."""

from __future__ import annotations

from ..config import ChunkConfig
from ..grammar import Section, Span, section_paragraphs


class HeadingAware:
    name = "heading-aware"
    default_max_chars: int | None = 220

    def spans(self, text: str, section: Section, config: ChunkConfig) -> list[Span]:
        """A paragraph joins the group while the group stays within the target.

        The target is not a hard maximum: a paragraph longer than it stands alone, whole.
        """
        target = config.size()
        groups: list[Span] = []
        for start, end in section_paragraphs(text, section):
            if groups and end - groups[-1][0] <= target:
                groups[-1] = (groups[-1][0], end)
            else:
                groups.append((start, end))
        return groups
