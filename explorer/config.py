"""Chunk configurations (SPEC §5): the exact shape that enters every chunk id."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .errors import ErrorCode, ExplorerError
from .models import StrictModel, VersionOne

MAX_CHARS_LIMIT = 1_000_000


class ChunkConfig(StrictModel):
    """`{"strategy", "version": 1, "max_chars"}`; `max_chars` is null for unsized policies."""

    strategy: str
    version: VersionOne
    max_chars: Annotated[int, Field(ge=1, le=MAX_CHARS_LIMIT)] | None

    def as_json(self) -> dict[str, str | int | None]:
        return {"strategy": self.strategy, "version": self.version, "max_chars": self.max_chars}

    def size(self) -> int:
        """The size of a sized policy; refused for a config that has none."""
        if self.max_chars is None:
            raise ExplorerError(
                ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{self.strategy} needs max_chars"
            )
        return self.max_chars
