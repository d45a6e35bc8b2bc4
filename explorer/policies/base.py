"""The one small interface every chunking policy implements."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from ..config import ChunkConfig
from ..grammar import Section, Span


class Policy(Protocol):
    """Cuts one section into ordered, non-overlapping, non-empty spans."""

    @property
    def name(self) -> str:
        """The config's `strategy` and the name people choose it by."""

    @property
    def default_max_chars(self) -> int | None:
        """None for a policy that takes no size."""

    def spans(self, text: str, section: Section, config: ChunkConfig) -> Iterable[Span]: ...
