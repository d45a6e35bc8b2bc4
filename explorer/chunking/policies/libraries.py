"""Live columns (docs/contract.md §5c): policies that call the chunking libraries people
use, so their own splitter, with their own parameters, stands beside heading-aware.

Each config records the library's distribution, its version and every keyword it is
called with (`library`), besides the size and overlap in the config's own keys. A
rebuild (`validate`) calls the same library and refuses when the installed version
differs. Sizes in tokens count cl100k_base offline (explorer/tokens.py); nothing is
downloaded. Offsets come from the library where it gives them, else chunks are located
in order (explorer/locate.py).

A library is called on input someone else chose (a link, an upload, a file), so every
call is bounded (`Limits.library_seconds`): on the command line it runs in a child
process killed past the limit (`library_timeout`); in the app it runs in the server's
process, where nothing can stop a regular expression that holds the GIL, so a parameter
that makes the library run one is refused there (`unsafe_parameter`). Whatever the
library raises ends as `library_failed`, naming the column, never as a traceback.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ...embedders import embed_texts, wordllama, wordllama_name
from ...errors import ErrorCode, ExplorerError
from ...grammars.v1 import Span
from ...limits import DEFAULT_LIMITS, MAX_LIBRARY_SECONDS, Limits
from ...models import describe
from ..config import MAX_CHARS_LIMIT, ChunkConfig, ParameterValue
from ..deadline import Failed, call_within, describe_failure
from ..locate import locate_pieces
from ..tokens import count_tokens, encoding

if TYPE_CHECKING:
    import tiktoken

# How a library's call ends when it does not answer: the codes of this module alone.
LIBRARY_CALL_CODES = frozenset(
    {ErrorCode.UNSAFE_PARAMETER, ErrorCode.LIBRARY_TIMEOUT, ErrorCode.LIBRARY_FAILED}
)
# A library's chunks: each one's text, and its start where the library gives one.
Pieces = list[tuple[str, int | None]]


def _unsupported(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.UNSUPPORTED_CHUNK_CONFIG, detail)


# A list a parameter holds, and each string in it, are bounded: a link's or an upload's
# parameters are someone else's, and the libraries loop over them for every line or piece.
MAX_PARAMETER_ITEMS = 100
MAX_PARAMETER_CHARS = 100
_Text = Annotated[str, Field(max_length=MAX_PARAMETER_CHARS)]


class Parameters(BaseModel):
    """A library's keywords besides size and overlap, each with the library's default."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    def regex(self) -> str | None:
        """The parameter that makes the library run a regular expression it is given
        (unbounded time: backtracking), if one does."""
        return None


class _Size:
    """What every library call is given: the size and overlap, and their unit."""

    def __init__(self, config: ChunkConfig) -> None:
        self.size = config.size() if config.sized else 0  # 0: a library that takes none
        self.overlap = config.overlap or 0
        self.tokens = config.unit is not None


class LibraryPolicy:
    """A policy that calls a library on the whole document (a `DocumentPolicy`)."""

    name: ClassVar[str]
    distribution: ClassVar[str]
    modules: ClassVar[tuple[str, ...]]  # what a call imports: loaded before a child forks
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

    def require_stoppable(self, config: ChunkConfig, limits: Limits = DEFAULT_LIMITS) -> None:
        """Refuse a parameter that runs a regular expression where no deadline can stop
        it: without `limits.library_seconds` (the app: links, uploads, the sidebar)."""
        assert config.library is not None  # `check` ran when the config was parsed
        regex = self.parameters.model_validate(config.library.parameters).regex()
        if regex is not None and limits.library_seconds is None:
            raise ExplorerError(
                ErrorCode.UNSAFE_PARAMETER,
                f"{config.label()}: {regex} makes the library run regular expressions, "
                "which can take unbounded time, so they run only under a time limit: the "
                "--library-seconds of compare, index, chunk-map, evaluate and validate",
            )

    def document_spans(
        self,
        text: str,
        config: ChunkConfig,
        limits: Limits = DEFAULT_LIMITS,
        name: str = "the document",
    ) -> list[Span]:
        """The library's chunks of `text` (the document `name`), within `limits`."""
        self.require_stoppable(config, limits)
        assert config.library is not None
        parameters = self.parameters.model_validate(config.library.parameters)
        size = _Size(config)
        seconds = limits.library_seconds
        try:
            if seconds is None:
                return self.spans(text, size, parameters, name)
            self.load(size)  # once here, not in every child
            return call_within(
                seconds,
                lambda: ExplorerError(
                    ErrorCode.LIBRARY_TIMEOUT,
                    f"{config.label()} did not finish {name!r} within {seconds:,} s, the "
                    f"limit; raise it with --library-seconds N (at most "
                    f"{MAX_LIBRARY_SECONDS:,}) or give the library other parameters",
                ),
                self.spans,
                text,
                size,
                parameters,
                name,
            )
        except ExplorerError:
            raise
        except Exception as error:  # whatever the library raised (`Failed`: in the child)
            detail = str(error) if isinstance(error, Failed) else describe_failure(error)
            raise ExplorerError(
                ErrorCode.LIBRARY_FAILED, f"{config.label()} failed on {name!r}: {detail}"
            ) from None

    def load(self, size: _Size) -> None:
        """Import what a call needs and load its tokenizer, so that a child forked
        afterwards starts with them."""
        for module in self.modules:
            importlib.import_module(module)
        if size.tokens:
            encoding()

    def spans(self, text: str, size: _Size, parameters: Any, name: str) -> list[Span]:
        """The library's chunks as spans of `text`: at its offsets, else located."""
        return locate_pieces(text, self.pieces(text, size, parameters), name)

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        """What the library returns for `text`."""
        raise NotImplementedError


class _Recursive(Parameters):
    """`RecursiveCharacterTextSplitter`'s keywords."""

    separators: Annotated[list[_Text], Field(max_length=MAX_PARAMETER_ITEMS)] = [
        "\n\n",
        "\n",
        " ",
        "",
    ]
    keep_separator: bool | Literal["start", "end"] = True
    is_separator_regex: bool = False
    strip_whitespace: bool = True

    def regex(self) -> str | None:
        return "is_separator_regex=true" if self.is_separator_regex else None


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
    modules = ("langchain_text_splitters",)
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

    headers_to_split_on: Annotated[
        list[Annotated[list[_Text], Field(max_length=MAX_PARAMETER_ITEMS)]],
        Field(max_length=MAX_PARAMETER_ITEMS),
    ] = [
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
    modules = ("langchain_text_splitters",)
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
    min_characters_per_chunk: Annotated[int, Field(ge=1, le=MAX_CHARS_LIMIT)] = 24


@cache
def _ordinary_encoding() -> tiktoken.Encoding:
    """cl100k_base without its special tokens, for Chonkie, which calls `encode`: text
    such as `<|endoftext|>` is then plain text, as our counts read it (`encode_ordinary`),
    not a refusal."""
    import tiktoken

    base = encoding()
    return tiktoken.Encoding(
        name=f"{base.name}_ordinary",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={},
    )


def _chonkie_tokenizer(size: _Size) -> Any:
    """Chonkie counts characters, or offline cl100k_base tokens; never a download."""
    return _ordinary_encoding() if size.tokens else "character"


class _Chonkie(LibraryPolicy):
    distribution = "chonkie"
    modules = ("chonkie",)

    def load(self, size: _Size) -> None:
        super().load(size)
        _chonkie_tokenizer(size)


class ChonkieRecursive(_Chonkie):
    """Chonkie's `RecursiveChunker` with its default rules."""

    name = "chonkie-recursive"
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


class ChonkieToken(_Chonkie):
    """Chonkie's `TokenChunker`: windows of the size, in characters or tokens.

    In tokens, its chunk texts are decoded token windows, which hold U+FFFD where a
    window's edge splits a character: they are not the document's text, so they are
    placed by their tokens instead (`_token_spans`)."""

    name = "chonkie-token"
    parameters = Parameters

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from chonkie import TokenChunker

        chunker = TokenChunker(
            tokenizer=_chonkie_tokenizer(size), chunk_size=size.size, chunk_overlap=size.overlap
        )
        return [(c.text, c.start_index) for c in chunker.chunk(text)]

    def spans(self, text: str, size: _Size, parameters: Any, name: str) -> list[Span]:
        if not size.tokens:
            return super().spans(text, size, parameters, name)
        from chonkie import TokenChunker

        chunker = TokenChunker(
            tokenizer=_chonkie_tokenizer(size), chunk_size=size.size, chunk_overlap=size.overlap
        )
        counts = [c.token_count for c in chunker.chunk(text)]
        return _token_spans(text, _ordinary_encoding(), size.size - size.overlap, counts)


def _token_spans(
    text: str, encoding: tiktoken.Encoding, step: int, counts: list[int]
) -> list[Span]:
    """Token windows as spans of `text`: window n holds `counts[n]` tokens from token
    `n * step` on (as `TokenChunker` cuts them). A window's edge inside a character
    widens it to the whole character; a window inside one character (a size of one
    token on an emoji) gives that character once."""
    data = text.encode("utf-8")
    tokens = encoding.encode(text)
    bounds = [0, *accumulate(map(len, encoding.decode_tokens_bytes(tokens)))]

    def back(offset: int) -> int:  # to the start of the character holding byte `offset`
        while offset < len(data) and 0x80 <= data[offset] < 0xC0:
            offset -= 1
        return offset

    def ahead(offset: int) -> int:  # to the end of the character before byte `offset`
        while offset < len(data) and 0x80 <= data[offset] < 0xC0:
            offset += 1
        return offset

    byte_spans = [
        (back(bounds[n * step]), ahead(bounds[n * step + count])) for n, count in enumerate(counts)
    ]
    # Byte offsets to code points, in one pass over the sorted offsets.
    chars: dict[int, int] = {}
    previous = at = 0
    for offset in sorted({offset for span in byte_spans for offset in span}):
        at += len(data[previous:offset].decode("utf-8"))
        chars[offset], previous = at, offset
    spans: list[Span] = []
    for start, end in byte_spans:
        span = (chars[start], chars[end])
        if not spans or span != spans[-1]:
            spans.append(span)
    return spans


class _WithWordLlama(Parameters):
    """A semantic library's keywords begin with the embedder it is given: WordLlama, by
    its name and version (`wordllama_name`); a config of another is refused."""

    embedder: Annotated[str, Field(default_factory=wordllama_name, max_length=200)]

    @field_validator("embedder")
    @classmethod
    def _installed(cls, name: str) -> str:
        if name != wordllama_name():
            raise ValueError(f"the embedder is {wordllama_name()!r} (installed), not {name!r}")
        return name


class _ChonkieSemantic(_WithWordLlama):
    """`SemanticChunker`'s keywords (its `threshold` and `filter_tolerance`, fractions,
    as whole percents: a config holds no floats)."""

    threshold_percent: Annotated[int, Field(ge=1, le=99)] = 80
    similarity_window: Annotated[int, Field(ge=1, le=20)] = 3
    min_sentences_per_chunk: Annotated[int, Field(ge=1, le=1000)] = 1
    min_characters_per_sentence: Annotated[int, Field(ge=1, le=MAX_CHARS_LIMIT)] = 24
    skip_window: Annotated[int, Field(ge=0, le=20)] = 0
    filter_window: Annotated[int, Field(ge=2, le=99)] = 5
    filter_polyorder: Annotated[int, Field(ge=0, le=10)] = 3
    filter_tolerance_percent: Annotated[int, Field(ge=0, le=100)] = 20


class _WordLlamaForChonkie:
    """WordLlama as Chonkie's `BaseEmbeddings` (made a subclass when Chonkie is imported,
    `_chonkie_embeddings`), counting characters or offline tokens as the column does."""

    def __init__(self, tokenizer: Any) -> None:
        self._embedder = wordllama()
        self._tokenizer = tokenizer

    def embed(self, text: str) -> Any:
        return embed_texts(self._embedder, [text])[0]

    def embed_batch(self, texts: list[str]) -> list[Any]:
        return list(embed_texts(self._embedder, list(texts))) if texts else []

    @property
    def dimension(self) -> int:
        return self._embedder.dimensions

    def get_tokenizer(self) -> Any:
        return self._tokenizer


@cache
def _chonkie_embeddings() -> type:
    from chonkie.embeddings.base import BaseEmbeddings

    return type("WordLlamaEmbeddings", (_WordLlamaForChonkie, BaseEmbeddings), {})


class ChonkieSemantic(_Chonkie):
    """Chonkie's `SemanticChunker` with WordLlama (offline) as its embeddings; its chunks
    carry exact offsets (`start_index`). Its size is Chonkie's `chunk_size`."""

    name = "chonkie-semantic"
    parameters = _ChonkieSemantic
    takes_overlap = False

    def load(self, size: _Size) -> None:
        super().load(size)
        _chonkie_embeddings()
        wordllama()

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        from chonkie import SemanticChunker

        tokenizer = _chonkie_tokenizer(size)
        chunker = SemanticChunker(
            embedding_model=_chonkie_embeddings()(tokenizer),
            chunk_size=size.size,
            threshold=parameters.threshold_percent / 100,
            similarity_window=parameters.similarity_window,
            min_sentences_per_chunk=parameters.min_sentences_per_chunk,
            min_characters_per_sentence=parameters.min_characters_per_sentence,
            skip_window=parameters.skip_window,
            filter_window=parameters.filter_window,
            filter_polyorder=parameters.filter_polyorder,
            filter_tolerance=parameters.filter_tolerance_percent / 100,
        )
        return [(c.text, c.start_index) for c in chunker.chunk(text)]


LANGCHAIN_SENTENCES = r"(?<=[.?!])\s+"


class _LangChainSemantic(_WithWordLlama):
    """`SemanticChunker`'s keywords; `breakpoint_threshold_amount` a decimal number as
    text (a config holds no floats) or `default` (the type's own), `min_chunk_size` 0
    for none."""

    buffer_size: Annotated[int, Field(ge=1, le=20)] = 1
    breakpoint_threshold_type: Literal[
        "percentile", "standard_deviation", "interquartile", "gradient"
    ] = "percentile"
    breakpoint_threshold_amount: Annotated[
        str, Field(pattern=r"^(default|[0-9]{1,3}(\.[0-9]{1,4})?)$")
    ] = "default"
    sentence_split_regex: _Text = LANGCHAIN_SENTENCES
    min_chunk_size: Annotated[int, Field(ge=0, le=MAX_CHARS_LIMIT)] = 0

    def regex(self) -> str | None:
        if self.sentence_split_regex == LANGCHAIN_SENTENCES:
            return None  # LangChain's own, linear
        return "sentence_split_regex"


class _WordLlamaForLangChain:
    """WordLlama as LangChain's `Embeddings` (made a subclass when LangChain is imported,
    `_langchain_embeddings`)."""

    def __init__(self) -> None:
        self._embedder = wordllama()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        rows: list[list[float]] = embed_texts(self._embedder, list(texts)).tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@cache
def _langchain_embeddings() -> type:
    from langchain_core.embeddings import Embeddings

    return type("WordLlamaEmbeddings", (_WordLlamaForLangChain, Embeddings), {})


class LangChainSemantic(LibraryPolicy):
    """LangChain's `SemanticChunker` (langchain-experimental) with WordLlama (offline) as
    its `Embeddings`. It takes no size: it has no maximum. Its chunks join their
    sentences with single spaces, and its `start_index` adds up chunk lengths (not
    where each chunk lies), so its chunks are located ignoring whitespace."""

    name = "langchain-semantic"
    distribution = "langchain-experimental"
    modules = ("langchain_experimental.text_splitter",)
    parameters = _LangChainSemantic
    takes_overlap = False
    default_max_chars: int | None = None

    def load(self, size: _Size) -> None:
        super().load(size)
        _langchain_embeddings()
        wordllama()

    def pieces(self, text: str, size: _Size, parameters: Any) -> Pieces:
        import warnings

        with warnings.catch_warnings():  # its package says it is no longer maintained
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_experimental.text_splitter import SemanticChunker

        amount = parameters.breakpoint_threshold_amount
        chunker = SemanticChunker(
            _langchain_embeddings()(),
            buffer_size=parameters.buffer_size,
            breakpoint_threshold_type=parameters.breakpoint_threshold_type,
            breakpoint_threshold_amount=None if amount == "default" else float(amount),
            sentence_split_regex=parameters.sentence_split_regex,
            min_chunk_size=parameters.min_chunk_size or None,
        )
        return [(piece, None) for piece in chunker.split_text(text) if piece.strip()]


class Semchunk(LibraryPolicy):
    """semchunk's `chunk`, with its offsets; counting characters or offline tokens."""

    name = "semchunk"
    distribution = "semchunk"
    modules = ("semchunk.semchunk",)
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
    ChonkieSemantic(),
    LangChainSemantic(),
    Semchunk(),
)

__all__ = ["LIBRARIES", "LIBRARY_CALL_CODES", "LibraryPolicy", "Parameters"]
