"""The registry of grammars: how a document falls into sections and units.

A config's `grammar` picks one (`"v1"` when absent). Policies see only `GrammarSection`,
so they are written once for every grammar.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from . import grammar
from .config import ChunkConfig
from .grammar import Span
from .tokens import Unit


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

    def split(self, text: str, unit: Span, size: int, measure: Unit) -> list[Span]:
        """A unit that measures more than `size`, in the pieces the grammar allows."""
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
        """Every section with a unit, in document order."""
        ...


class V1:
    name = "v1"

    @property
    def annotation(self) -> dict[str, str | int]:
        return {"grammar_version": grammar.GRAMMAR_VERSION}

    def admit(self, text: str) -> None:
        grammar.require_heading(text)

    def sections(self, text: str) -> Sequence[GrammarSection]:
        return grammar.sections(text)


class Markdown:
    """markdown-it-py is imported with the first document read under this grammar."""

    name = "markdown"

    @property
    def annotation(self) -> dict[str, str | int]:
        return {"grammar": self.name}

    def admit(self, text: str) -> None:
        """Every non-blank text has a section (a preamble at least)."""

    def sections(self, text: str) -> Sequence[GrammarSection]:
        from . import markdown_grammar

        return markdown_grammar.sections(text)


V1_GRAMMAR = V1()
GRAMMARS: dict[str, Grammar] = {g.name: g for g in (V1_GRAMMAR, Markdown())}


def grammar_for(config: ChunkConfig) -> Grammar:
    return GRAMMARS[config.grammar_name]


def loading_grammar(configs: Iterable[ChunkConfig]) -> Grammar:
    """The grammar documents load under for columns cut with `configs`: markdown when
    every one is cut under it, else v1, whose sections need a leading heading (a
    library's column and a chunk file's place their chunks in v1 sections)."""
    grammars = {config.grammar_name for config in configs}
    return GRAMMARS[grammars.pop()] if len(grammars) == 1 else V1_GRAMMAR


__all__ = [
    "GRAMMARS",
    "V1_GRAMMAR",
    "Grammar",
    "GrammarSection",
    "grammar_for",
    "loading_grammar",
]
