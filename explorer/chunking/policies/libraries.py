"""Live columns (docs/contract.md §5c): policies that call the chunking libraries people
use, so their own splitter, with their own parameters, stands beside heading-aware.

Each config records the library's distribution, its version and every keyword it is
called with (`library`), besides the size and overlap in the config's own keys. A
rebuild (`validate`) calls the same library and refuses when the installed version
differs. Sizes in tokens count cl100k_base offline (explorer/tokens.py); nothing is
downloaded. Offsets come from the library where it gives them, else chunks are located
in order (explorer/locate.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from ...errors import ErrorCode, ExplorerError
from ...grammars.v1 import Span
from ...models import describe
from ..config import ChunkConfig, ParameterValue
from ..locate import locate_pieces
from ..tokens import count_tokens, encoding

# A library's chunks: each one's text, and its start where the library gives one.
Pieces = list[tuple[str, int | None]]


def _unsupported(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, detail)


class Parameters(BaseModel):
    """A library's keywords besides size and overlap, each with the library's default."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class _Size:
    """What every library call is given: the size and overlap, and their unit."""

    def __init__(self, config: ChunkConfig) -> None:
        self.size = config.size()
        self.overlap = config.overlap or 0
        self.tokens = config.unit is not None


class LibraryPolicy:
    """A policy that calls a library on the whole document (a `DocumentPolicy`)."""

    name: ClassVar[str]
    distribution: ClassVar[str]
    parameters: ClassVar[type[Parameters]]
    takes_overlap: ClassVar[bool] = True
    default_max_chars: int | None = 500

    def installed_version(self) -> str:
        # Imported here: importlib.metadata costs every command ~15 ms to import, and only
        # a library's column asks for a version.
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(self.distribution)
        except PackageNotFoundError:
            raise _unsupported(
                f"{self.name} needs {self.distribution}, which is not installed "
                "(pip install -r requirements.txt)"
            ) from None

    def default_parameters(self) -> dict[str, ParameterValue]:
        """Every parameter at the library's default."""
        return self.parameters().model_dump()

    def library(self, given: dict[str, ParameterValue]) -> dict[str, object]:
        """The config's `library`: the installed version and every parameter, the ones
        not given at the library's default."""
        try:
            parameters = self.parameters.model_validate(given)
        except ValidationError as error:
            raise _unsupported(f"{self.name}: {describe(error)}") from None
        return {
            "name": self.distribution,
            "version": self.installed_version(),
            "parameters": parameters.model_dump(),
        }

    def check(self, config: ChunkConfig) -> None:
        """Refuse a config this policy cannot rebuild: every parameter is recorded, and
        the library installed is the version that built it."""
        library = config.library
        if library is None or library.name != self.distribution:
            raise _unsupported(f"{self.name} records library {self.distribution!r}")
        installed = self.installed_version()
        if library.version != installed:
            raise _unsupported(
                f"{self.name} was built with {self.distribution} {library.version}, but "
                f"{installed} is installed: install {self.distribution}=={library.version} "
                "to rebuild it"
            )
        try:
            self.parameters.model_validate(library.parameters)
        except ValidationError as error:
            raise _unsupported(f"{self.name}: {describe(error)}") from None
        missing = sorted(set(self.parameters.model_fields) - set(library.parameters))
        if missing:
            raise _unsupported(f"{self.name} records every parameter; {missing[0]!r} is missing")
        if config.overlap is not None and not self.takes_overlap:
            raise _unsupported(f"{self.name} takes no overlap")
        if config.grammar is not None:
            raise _unsupported(f"{self.name} cuts whole documents; it takes no grammar")

    def document_spans(self, text: str, config: ChunkConfig) -> list[Span]:
        assert config.library is not None  # `check` ran when the config was parsed
        parameters = self.parameters.model_validate(config.library.parameters)
        return locate_pieces(text, self.pieces(text, _Size(config), parameters))

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        """What the library returns for `text`."""
        raise NotImplementedError


class _Recursive(Parameters):
    """`RecursiveCharacterTextSplitter`'s keywords."""

    separators: list[str] = ["\n\n", "\n", " ", ""]
    keep_separator: bool | Literal["start", "end"] = True
    is_separator_regex: bool = False
    strip_whitespace: bool = True


def _recursive_splitter(size: _Size, parameters: _Recursive) -> Any:
    """`RecursiveCharacterTextSplitter` in characters, or counting offline cl100k_base
    tokens through `from_tiktoken_encoder`; `add_start_index` gives the offsets."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    keywords: dict[str, Any] = {
        **_recursive_keywords(parameters),
        "chunk_size": size.size,
        "chunk_overlap": size.overlap,
        "add_start_index": True,
    }
    if size.tokens:
        return RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name=encoding().name, disallowed_special=(), **keywords
        )
    return RecursiveCharacterTextSplitter(**keywords)


def _recursive_keywords(parameters: _Recursive) -> dict[str, Any]:
    return {name: getattr(parameters, name) for name in _Recursive.model_fields}


class LangChainRecursive(LibraryPolicy):
    """LangChain's `RecursiveCharacterTextSplitter`, its default separators."""

    name = "langchain-recursive"
    distribution = "langchain-text-splitters"
    parameters = _Recursive

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        documents = _recursive_splitter(size, parameters).create_documents([text])
        return [(d.page_content, _start_index(d.metadata)) for d in documents]


def _start_index(metadata: dict[str, Any]) -> int | None:
    """LangChain's `start_index`; -1 (not found) as none."""
    start = metadata.get("start_index")
    return start if isinstance(start, int) and start >= 0 else None


class _Markdown(_Recursive):
    """`MarkdownHeaderTextSplitter`'s keywords, then the recursive splitter's."""

    headers_to_split_on: list[list[str]] = [
        ["#", "Header 1"],
        ["##", "Header 2"],
        ["###", "Header 3"],
    ]
    strip_headers: bool = True
    return_each_line: bool = False


class LangChainMarkdown(LibraryPolicy):
    """`MarkdownHeaderTextSplitter`, then `RecursiveCharacterTextSplitter` on each of its
    documents, as LangChain's docs recommend. Its chunks lose their heading lines and
    their line breaks are rejoined, so they are located ignoring whitespace."""

    name = "langchain-markdown"
    distribution = "langchain-text-splitters"
    parameters = _Markdown

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from langchain_text_splitters import MarkdownHeaderTextSplitter

        headers = MarkdownHeaderTextSplitter(
            headers_to_split_on=[(mark, name) for mark, name in parameters.headers_to_split_on],
            return_each_line=parameters.return_each_line,
            strip_headers=parameters.strip_headers,
        )
        recursive = _recursive_splitter(size, parameters)
        documents = recursive.split_documents(headers.split_text(text))
        return [(d.page_content, None) for d in documents]


class _ChonkieRecursive(Parameters):
    rules: Literal["default"] = "default"
    min_characters_per_chunk: int = 24


def _chonkie_tokenizer(size: _Size) -> Any:
    """Chonkie counts characters, or offline cl100k_base tokens; never a download."""
    return encoding() if size.tokens else "character"


class ChonkieRecursive(LibraryPolicy):
    """Chonkie's `RecursiveChunker` with its default rules."""

    name = "chonkie-recursive"
    distribution = "chonkie"
    parameters = _ChonkieRecursive
    takes_overlap = False

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from chonkie import RecursiveChunker

        chunker = RecursiveChunker(
            tokenizer=_chonkie_tokenizer(size),
            chunk_size=size.size,
            min_characters_per_chunk=parameters.min_characters_per_chunk,
        )
        return [(c.text, c.start_index) for c in chunker.chunk(text)]


class ChonkieToken(LibraryPolicy):
    """Chonkie's `TokenChunker`: windows of the size, in characters or tokens."""

    name = "chonkie-token"
    distribution = "chonkie"
    parameters = Parameters

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from chonkie import TokenChunker

        chunker = TokenChunker(
            tokenizer=_chonkie_tokenizer(size), chunk_size=size.size, chunk_overlap=size.overlap
        )
        return [(c.text, c.start_index) for c in chunker.chunk(text)]


class Semchunk(LibraryPolicy):
    """semchunk's `chunk`, with its offsets; counting characters or offline tokens."""

    name = "semchunk"
    distribution = "semchunk"
    parameters = Parameters

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from semchunk.semchunk import chunk

        # With offsets=True, semchunk returns the chunks and their (start, end).
        found = chunk(
            text,
            chunk_size=size.size,
            token_counter=count_tokens if size.tokens else len,
            offsets=True,
            overlap=size.overlap or None,
        )
        chunks, offsets = cast(tuple[list[str], list[tuple[int, int]]], found)
        return [(piece, start) for piece, (start, _) in zip(chunks, offsets, strict=True)]


LIBRARIES: Sequence[LibraryPolicy] = (
    LangChainRecursive(),
    LangChainMarkdown(),
    ChonkieRecursive(),
    ChonkieToken(),
    Semchunk(),
)

__all__ = ["LIBRARIES", "LibraryPolicy", "Parameters"]
