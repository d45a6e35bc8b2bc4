"""`explorer export --snippet`: Python that defines `chunk(text: str) -> list[str]` and
cuts a text as a column does, in the user's own pipeline.

- A library's column: its import, its constructor (or call) with every parameter the
  column's config records, and the call. The texts are the library's own: for
  `langchain-markdown`, without the heading lines and with lines rejoined, as LangChain
  returns them (the explorer locates them in the document ignoring whitespace).
- A column of our policies: the `explorer` API call (`chunk_texts`) with the config.
- An imported chunk file's column has no code: its chunks came from a file.

Sizes in tokens count `cl100k_base` as tiktoken loads it (the explorer reads the same
ranks offline), ordinary text only: `<|endoftext|>` in a text is plain text.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ErrorCode, ExplorerError
from .config import ChunkConfig
from .policies import CHUNK_FILE_STRATEGY, LIBRARY_POLICIES

_ORDINARY_TOKENS = """\
import tiktoken

_CL100K = tiktoken.get_encoding("cl100k_base")
# cl100k_base without special tokens, as the explorer counts: "<|endoftext|>" is text.
TOKENIZER = tiktoken.Encoding(
    name="cl100k_base_ordinary",
    pat_str=_CL100K._pat_str,
    mergeable_ranks=_CL100K._mergeable_ranks,
    special_tokens={},
)
"""


def _keywords(pairs: list[tuple[str, object]], indent: str = "    ") -> str:
    return "".join(f"{indent}{name}={value!r},\n" for name, value in pairs)


def _recursive(config: ChunkConfig, parameters: dict[str, object]) -> tuple[str, str]:
    """The recursive splitter's import and constructor, in characters or tokens."""
    keywords = [
        ("chunk_size", config.size()),
        ("chunk_overlap", config.overlap or 0),
        *((name, parameters[name]) for name in _RECURSIVE_KEYS),
    ]
    if config.unit is not None:
        return (
            "from langchain_text_splitters import RecursiveCharacterTextSplitter\n",
            "SPLITTER = RecursiveCharacterTextSplitter.from_tiktoken_encoder(\n"
            '    encoding_name="cl100k_base",\n'
            "    disallowed_special=(),\n" + _keywords(keywords) + ")\n",
        )
    return (
        "from langchain_text_splitters import RecursiveCharacterTextSplitter\n",
        "SPLITTER = RecursiveCharacterTextSplitter(\n" + _keywords(keywords) + ")\n",
    )


_RECURSIVE_KEYS = ("separators", "keep_separator", "is_separator_regex", "strip_whitespace")


def _langchain_recursive(config: ChunkConfig, parameters: dict[str, object]) -> str:
    imports, splitter = _recursive(config, parameters)
    return (
        imports
        + "\n"
        + splitter
        + "\n\ndef chunk(text: str) -> list[str]:\n    return SPLITTER.split_text(text)\n"
    )


def _langchain_markdown(config: ChunkConfig, parameters: dict[str, object]) -> str:
    _, splitter = _recursive(config, parameters)
    headers = [tuple(pair) for pair in parameters["headers_to_split_on"]]  # type: ignore[attr-defined]
    return (
        "from langchain_text_splitters import (\n"
        "    MarkdownHeaderTextSplitter,\n"
        "    RecursiveCharacterTextSplitter,\n"
        ")\n\n"
        "HEADERS = MarkdownHeaderTextSplitter(\n"
        + _keywords(
            [
                ("headers_to_split_on", headers),
                ("return_each_line", parameters["return_each_line"]),
                ("strip_headers", parameters["strip_headers"]),
            ]
        )
        + ")\n"
        + splitter
        + "\n\ndef chunk(text: str) -> list[str]:\n"
        "    documents = SPLITTER.split_documents(HEADERS.split_text(text))\n"
        "    return [document.page_content for document in documents]\n"
    )


def _chonkie_tokenizer(config: ChunkConfig) -> tuple[str, str]:
    """What a Chonkie chunker counts with: characters, or the ordinary cl100k_base."""
    if config.unit is None:
        return "", '"character"'
    return _ORDINARY_TOKENS + "\n", "TOKENIZER"


def _chonkie_recursive(config: ChunkConfig, parameters: dict[str, object]) -> str:
    tokens, tokenizer = _chonkie_tokenizer(config)
    return (
        "from chonkie import RecursiveChunker\n"
        + tokens
        + "\nCHUNKER = RecursiveChunker(\n"
        + f"    tokenizer={tokenizer},\n"
        + _keywords(
            [
                ("chunk_size", config.size()),
                ("min_characters_per_chunk", parameters["min_characters_per_chunk"]),
            ]
        )
        + ")\n\n\ndef chunk(text: str) -> list[str]:\n"
        "    return [piece.text for piece in CHUNKER.chunk(text)]\n"
    )


def _chonkie_token(config: ChunkConfig, parameters: dict[str, object]) -> str:
    tokens, tokenizer = _chonkie_tokenizer(config)
    return (
        "from chonkie import TokenChunker\n"
        + tokens
        + "\nCHUNKER = TokenChunker(\n"
        + f"    tokenizer={tokenizer},\n"
        + _keywords([("chunk_size", config.size()), ("chunk_overlap", config.overlap or 0)])
        + ")\n\n\ndef chunk(text: str) -> list[str]:\n"
        "    return [piece.text for piece in CHUNKER.chunk(text)]\n"
    )


def _semchunk(config: ChunkConfig, parameters: dict[str, object]) -> str:
    if config.unit is None:
        counter, tokens = "len", ""
    else:
        counter = "count_tokens"
        tokens = (
            "import tiktoken\n\n"
            '_CL100K = tiktoken.get_encoding("cl100k_base")\n\n\n'
            "def count_tokens(text: str) -> int:\n"
            "    return len(_CL100K.encode_ordinary(text))\n"
        )
    return (
        "import semchunk\n" + tokens + "\n\ndef chunk(text: str) -> list[str]:\n"
        "    return semchunk.chunk(\n"
        "        text,\n"
        f"        chunk_size={config.size()!r},\n"
        f"        token_counter={counter},\n"
        f"        overlap={config.overlap or None!r},\n"
        "    )\n"
    )


_LIBRARY_SNIPPETS: dict[str, Callable[[ChunkConfig, dict[str, object]], str]] = {
    "langchain-recursive": _langchain_recursive,
    "langchain-markdown": _langchain_markdown,
    "chonkie-recursive": _chonkie_recursive,
    "chonkie-token": _chonkie_token,
    "semchunk": _semchunk,
}


def _ours(config: ChunkConfig) -> str:
    return (
        "from explorer import chunk_texts, parse_config\n\n"
        f"CONFIG = parse_config({config.as_json()!r})\n\n\n"
        "def chunk(text: str) -> list[str]:\n"
        "    return chunk_texts(text, CONFIG)\n"
    )


def snippet_refusal(name: str) -> ExplorerError:
    """Why an imported column has no snippet."""
    return ExplorerError(
        ErrorCode.UNSUPPORTED_CHUNK_CONFIG,
        f"the column {name!r} is an imported chunk file: its chunks came from the file, "
        "so it has no code that reproduces them",
    )


def snippet(name: str, config: ChunkConfig) -> str:
    """Runnable Python defining `chunk(text: str) -> list[str]` that cuts as the column
    `name` cut with `config` does (see the module's docstring)."""
    if config.strategy == CHUNK_FILE_STRATEGY:
        raise snippet_refusal(name)
    head = f"# The column {name!r}, as `explorer export --snippet` writes it.\n"
    library = config.library
    if library is None:
        return head + "# Needs the explorer on the path (its API: chunk_texts).\n" + _ours(config)
    assert config.strategy in LIBRARY_POLICIES  # parse_config checked it
    head += f"# Needs {library.name}=={library.version}.\n"
    return head + _LIBRARY_SNIPPETS[config.strategy](config, dict(library.parameters))
