"""The registry of grammars: how a document falls into sections and units.

A config's `grammar` picks one (`"v1"` when absent). Policies see only `GrammarSection`,
so they are written once for every grammar.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..memo import once
from . import v1 as grammar
from .units import Unit
from .v1 import Piece, Span


class GrammarSection(Protocol):
    """A section's place in the text, and the units a policy packs."""

    @property
    def heading_start(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...

    def units(self, text: str) -> list[Span]:
        """The section's units in order: v1 paragraphs or markdown blocks."""
        ...

    def split(self, text: str, unit: Span, size: int, measure: Unit) -> list[Piece]:
        """A unit that measures more than `size`, in the pieces the grammar allows, each
        with its measure where the grammar took it."""
        ...

    def sentence_units(self, text: str) -> list[tuple[Span, bool]]:
        """What the semantic policy splits into sentences, in order, tiling the units:
        each with whether it is prose (a v1 paragraph, a markdown paragraph: split by the
        sentence rule) or one sentence (code, a table, a top-level list's item, a quote,
        HTML, front matter)."""
        ...


class Grammar(Protocol):
    @property
    def name(self) -> str:
        """The config's `grammar` (`"v1"` when the config has none)."""

    @property
    def annotation(self) -> dict[str, str | int]:
        """What a chunk map's plan annotations say about the grammar."""

    def admit(self, text: str) -> None:
        """Refuse, with the document's own error code, a normalized text that this grammar
        cannot read (grammar v1: `heading_required`)."""

    def sections(self, text: str) -> Sequence[GrammarSection]:
        """Every section with a unit, in document order, of a text the grammar admits."""
        ...

    def any_sections(self, text: str) -> Sequence[GrammarSection]:
        """`sections` of any text (v1: text before the first heading is in none), for
        placing the chunks of a whole document, a library's or a chunk file's."""
        ...


class V1:
    name = "v1"

    @property
    def annotation(self) -> dict[str, str | int]:
        return {"grammar_version": grammar.GRAMMAR_VERSION}

    def admit(self, text: str) -> None:
        grammar.require_heading(text)

    def sections(self, text: str) -> Sequence[GrammarSection]:
        grammar.require_heading(text)
        return self.any_sections(text)

    def any_sections(self, text: str) -> Sequence[GrammarSection]:
        return once(text, self.name, lambda: tuple(grammar.headed_sections(text)))


class Markdown:
    """markdown-it-py is imported with the first document read under this grammar."""

    name = "markdown"

    @property
    def annotation(self) -> dict[str, str | int]:
        return {"grammar": self.name}

    def admit(self, text: str) -> None:
        """Every non-blank text has a section (a preamble at least)."""

    def sections(self, text: str) -> Sequence[GrammarSection]:
        from . import markdown as markdown_grammar

        return once(text, self.name, lambda: tuple(markdown_grammar.sections(text)))

    def any_sections(self, text: str) -> Sequence[GrammarSection]:
        return self.sections(text)


V1_GRAMMAR = V1()
GRAMMARS: dict[str, Grammar] = {g.name: g for g in (V1_GRAMMAR, Markdown())}


__all__ = [
    "GRAMMARS",
    "V1_GRAMMAR",
    "Grammar",
    "GrammarSection",
    "Unit",
]
