"""The one small interface every chunking policy implements."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from ...grammars import GrammarSection
from ...grammars.v1 import Span
from ...limits import Limits
from ..config import ChunkConfig


class Policy(Protocol):
    """Cuts one section into ordered, non-empty spans, in the config's unit and grammar.

    Without overlap the spans never overlap. With `config.overlap`, a span may begin
    inside the previous one (never before its start), and starts and ends both strictly
    increase.
    """

    @property
    def name(self) -> str:
        """The config's `strategy` and the name people choose it by."""

    @property
    def default_max_chars(self) -> int | None:
        """None for a policy that takes no size (nor a unit or an overlap)."""

    def spans(self, text: str, section: GrammarSection, config: ChunkConfig) -> Iterable[Span]: ...


@runtime_checkable
class DocumentPolicy(Protocol):
    """A policy that cuts a whole document at once, as a chunking library does: its spans
    may overlap or leave gaps, and each chunk belongs to the section its start lies in."""

    @property
    def name(self) -> str: ...

    @property
    def default_max_chars(self) -> int | None: ...

    def document_spans(
        self, text: str, config: ChunkConfig, limits: Limits = ..., name: str = ...
    ) -> list[Span]:
        """The document's chunks in order, as `(start, end)` of `text` (the document
        `name`), within `limits`."""
        ...
