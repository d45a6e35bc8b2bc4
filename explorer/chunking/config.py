"""Chunk configurations (docs/contract.md §5): the exact shape that enters every chunk id.

A config records everything that decides where chunks fall: the policy, the grammar, the
unit sizes are counted in (and the tokenizer that counts them), the size and the
overlap. It has exactly one spelling, because it enters every `chunk_id`: a key is
written only when it differs from grammar v1's meaning, and a default written out
(`"grammar": "v1"`, `"unit": "chars"`, `"overlap": 0`, or any optional key as null) is
refused rather than accepted, so one configuration never has two sets of ids. A v1
character config without overlap is therefore exactly `{"strategy", "version",
"max_chars"}`, as it always was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from ..digests import canonical_bytes
from ..errors import ErrorCode, ExplorerError
from ..grammars import GRAMMARS, V1_GRAMMAR, Grammar
from ..models import Hex64, PlainText, StrictModel, VersionOne

MAX_CHARS_LIMIT = 1_000_000
MAX_TOKENS_LIMIT = 1_000_000
DEFAULT_GRAMMAR = "v1"
DEFAULT_UNIT = "chars"

Size = Annotated[int, Field(ge=1, le=MAX_CHARS_LIMIT)]
TokenSize = Annotated[int, Field(ge=1, le=MAX_TOKENS_LIMIT)]
# Keys that may be left out but never given as null (null would be a second spelling).
_NEVER_NULL = (
    "grammar",
    "unit",
    "tokenizer",
    "max_tokens",
    "overlap",
    "library",
    "chunk_file",
    "semantic",
)
_TOKEN_KEYS = ("unit", "tokenizer", "max_tokens")

# A library's keyword argument, as JSON without floats (ids hash configs as integers).
ParameterValue = str | int | bool | list[str] | list[list[str]]
ConfigJson = dict[str, str | int | dict[str, object] | None]
ChunkFileShape = Literal["langchain", "llamaindex", "chonkie", "plain"]


class Library(StrictModel):
    """The library a live column calls (docs/contract.md §5c): its distribution's name and
    version, and every keyword it is called with besides the size and overlap."""

    name: PlainText
    version: PlainText
    parameters: dict[str, ParameterValue]


class ChunkFile(StrictModel):
    """Where an imported column's chunks come from (docs/contract.md §5c): the SHA-256 of
    the file's bytes and the shape it was read as."""

    sha256: Hex64
    shape: ChunkFileShape


MAX_WINDOW = 20
DEFAULT_WINDOW = 2
DEFAULT_PERCENTILE = 95


class EmbedderName(StrictModel):
    """The embedder a semantic column's curve is computed with: its name (which holds
    its version, e.g. `wordllama-0.4.0.post1/l2_supercat/256`) and its dimensions."""

    name: Annotated[PlainText, Field(min_length=1, max_length=200)]
    dimensions: Annotated[int, Field(ge=1, le=4096)]


class Semantic(StrictModel):
    """A semantic column's curve (docs/contract.md §5d): the percentile of the document's
    distances above which a gap is a breakpoint (a whole number), how many sentences
    each side of a gap is embedded (`window`), and the embedder."""

    breakpoint_percentile: Annotated[int, Field(ge=0, le=100)]
    window: Annotated[int, Field(ge=1, le=MAX_WINDOW)]
    embedder: EmbedderName


def _schema(schema: dict[str, Any]) -> None:
    """Say in the JSON Schema what `_one_spelling` checks: the optional keys are never
    null, and a config has `max_chars` or, in tokens, `unit`, `tokenizer` and
    `max_tokens`, never both."""
    properties = schema["properties"]
    for key in _NEVER_NULL:
        options = properties[key].pop("anyOf")
        properties[key].update(next(o for o in options if o.get("type") != "null"))
        properties[key].pop("default", None)
    schema["oneOf"] = [
        {"required": ["max_chars"], "properties": {k: False for k in _TOKEN_KEYS}},
        {"required": list(_TOKEN_KEYS), "properties": {"max_chars": False}},
    ]


class ChunkConfig(StrictModel):
    """One policy's configuration; a value, so a caller may hold several side by side.

    - `max_chars`: the size in code points; null for an unsized policy. Required unless
      `unit` is `"tokens"`, and then absent.
    - `unit: "tokens"` with `tokenizer: "cl100k_base"` and `max_tokens`: the size in
      tokens instead.
    - `grammar: "markdown"`: sections and blocks as CommonMark sees them (else grammar v1).
    - `overlap`: how much of a chunk the next chunk of its section repeats, in the size's
      unit; `0 < overlap < size`.
    """

    model_config = ConfigDict(json_schema_extra=_schema)

    strategy: str
    version: VersionOne
    grammar: Literal["markdown"] | None = None
    unit: Literal["tokens"] | None = None
    tokenizer: Literal["cl100k_base"] | None = None
    max_chars: Size | None = None
    max_tokens: TokenSize | None = None
    overlap: Size | None = None
    library: Library | None = None
    chunk_file: ChunkFile | None = None
    semantic: Semantic | None = None

    def __hash__(self) -> int:
        # Settings hold configs in sets; a library's parameters are a dict.
        return hash(canonical_bytes(self.as_json()))

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in _NEVER_NULL:
                if key in data and data[key] is None:
                    raise ValueError(f"{key!r} may be left out, never null")
            if data.get("unit") == "tokens":
                if "max_chars" in data:
                    raise ValueError("a config in tokens takes max_tokens, not max_chars")
                for key in _TOKEN_KEYS:
                    if key not in data:
                        raise ValueError(f'a config with "unit": "tokens" needs {key!r}')
            else:
                if "max_chars" not in data:
                    raise ValueError("'max_chars' is required (null for an unsized policy)")
                for key in ("tokenizer", "max_tokens"):
                    if key in data:
                        raise ValueError(f'{key!r} needs "unit": "tokens"')
        return data

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkConfig:
        if self.overlap is not None:
            size = self.max_tokens if self.max_tokens is not None else self.max_chars
            if size is None:
                raise ValueError("overlap needs a size")
            if self.overlap >= size:
                raise ValueError(f"overlap {self.overlap} must be less than the size, {size}")
        return self

    def as_json(self) -> ConfigJson:
        """The config as it enters ids: only the keys given, in a fixed order."""
        out: ConfigJson = {"strategy": self.strategy, "version": self.version}
        if self.grammar is not None:
            out["grammar"] = self.grammar
        if self.unit is not None:
            out["unit"] = self.unit
            out["tokenizer"] = self.tokenizer
            out["max_tokens"] = self.max_tokens
        else:
            out["max_chars"] = self.max_chars
        if self.overlap is not None:
            out["overlap"] = self.overlap
        if self.library is not None:
            out["library"] = self.library.model_dump()
        if self.chunk_file is not None:
            out["chunk_file"] = self.chunk_file.model_dump()
        if self.semantic is not None:
            out["semantic"] = self.semantic.model_dump()
        return out

    @property
    def grammar_name(self) -> str:
        """`"v1"` or `"markdown"`."""
        return self.grammar or DEFAULT_GRAMMAR

    @property
    def unit_name(self) -> str:
        """`"chars"` or `"tokens"`."""
        return self.unit or DEFAULT_UNIT

    @property
    def size_key(self) -> str:
        """The key that holds the size: `max_chars` or `max_tokens`."""
        return "max_tokens" if self.unit is not None else "max_chars"

    @property
    def sized(self) -> bool:
        return (self.max_tokens if self.unit is not None else self.max_chars) is not None

    def size(self) -> int:
        """The size of a sized policy, in its unit; refused for a config that has none."""
        size = self.max_tokens if self.unit is not None else self.max_chars
        if size is None:
            raise ExplorerError(
                ErrorCode.UNSUPPORTED_CHUNK_CONFIG, f"{self.strategy} needs {self.size_key}"
            )
        return size

    def label(self) -> str:
        """A short human name, e.g. `heading-aware, max_tokens 256, overlap 32, markdown`:
        enough to tell two columns of one policy apart."""
        parts = [self.strategy]
        if self.sized:
            parts.append(f"{self.size_key} {self.size()}")
        if self.overlap is not None:
            parts.append(f"overlap {self.overlap}")
        if self.semantic is not None:
            parts.append(f"p{self.semantic.breakpoint_percentile} w{self.semantic.window}")
        if self.grammar is not None:
            parts.append(f"{self.grammar} grammar")
        return ", ".join(parts)


def grammar_for(config: ChunkConfig) -> Grammar:
    return GRAMMARS[config.grammar_name]


def loading_grammar(configs: Iterable[ChunkConfig]) -> Grammar:
    """The grammar documents load under for columns cut with `configs`: the one grammar
    our policies' columns cut under, v1 (whose sections need a leading heading) when
    they cut under several, and markdown (any text) when there is none. A library's
    column, or a chunk file's, cuts whole documents and so never asks for a heading."""
    grammars = {config.grammar_name for config in configs if config.library is None}
    if not grammars:
        return GRAMMARS["markdown"]
    return GRAMMARS[grammars.pop()] if len(grammars) == 1 else V1_GRAMMAR
