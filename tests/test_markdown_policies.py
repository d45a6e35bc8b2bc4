"""The policies under the markdown grammar: code blocks that fit are never cut, blocks are
the units, and the real corpus (when present) loads in full."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from explorer import build_index, make_config
from explorer.chunking.config import ChunkConfig
from explorer.chunking.index import document_chunks
from explorer.grammars.markdown import sections
from explorer.limits import MAX_CHUNKS_LIMIT, Limits
from tests.test_markdown_grammar import LINES
from tests.test_overlap import measure
from tests.test_properties import record

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "markdown-docs"
NO_LIMITS = Limits(chunks_per_document=MAX_CHUNKS_LIMIT, chunks_per_index=MAX_CHUNKS_LIMIT)
# markdown-it-py on its own, not through the grammar under test.
_PARSER = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def fences(text: str) -> list[tuple[int, int]]:
    """Every fenced code block, at any depth, from its first line to its last's end."""
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return [
        (starts[t.map[0]], min(starts[t.map[1]], len(text)))
        for t in _PARSER.parse(text)
        if t.type == "fence" and t.map is not None
    ]


def fitting_fences_cut(text: str, config: ChunkConfig) -> list[str]:
    """Fences that fit in the size with a chunk boundary between two of their non-blank
    characters (an unclosed fence holds the blank lines after it, which no chunk does)."""
    chunks = document_chunks(record(text), config, NO_LIMITS)
    boundaries = {b for c in chunks for b in (c["start"], c["end"])}
    return [
        text[a:b]
        for a, b in fences(text)
        if measure(config, text[a:b]) <= config.size()
        and any(a < x < b and text[a:x].strip() and text[x:b].strip() for x in boundaries)
    ]


def test_a_fence_in_a_quote_that_fits_is_never_cut() -> None:
    fence = "> ```rust\n> fn main() {\n>     println!(1);\n> }\n> ```\n"
    text = "# T\n\n> Some quoted prose that runs on.\n>\n" + fence + "> After.\n"
    config = make_config("heading-aware", len(fence) + 2, grammar="markdown")
    chunks = [c["text"] for c in build_index([record(text)], config)["chunks"]]
    assert fence in chunks
    assert fitting_fences_cut(text, config) == []


def test_paragraph_gives_one_chunk_per_block() -> None:
    text = "Intro.\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n"
    index = build_index([record(text)], make_config("paragraph", grammar="markdown"))
    assert [c["text"] for c in index["chunks"]] == [
        "Intro.\n",
        "```\ncode\n\nmore\n```\n",
        "- a\n\n- b\n",
    ]
    assert [c["section_title"] for c in index["chunks"]] == ["", "", ""]


FENCED = st.lists(
    st.one_of(
        st.sampled_from(LINES),
        st.sampled_from(["```", "> ```", "- ```", "  code line", "> text", "  - ```"]),
    ),
    max_size=50,
).map(lambda lines: "\n".join(lines))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    FENCED.filter(lambda t: t.strip() != ""),
    st.booleans(),
    st.integers(4, 120),
    st.integers(0, 3),
)
def test_no_boundary_falls_inside_a_fence_that_fits(
    text: str, tokens: bool, size: int, quarter: int
) -> None:
    overlap = size * quarter // 4
    config = (
        make_config("heading-aware", max_tokens=size, overlap=overlap, grammar="markdown")
        if tokens
        else make_config("heading-aware", size, overlap=overlap, grammar="markdown")
    )
    assert fitting_fences_cut(text, config) == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_real_corpus_loads_and_keeps_its_fences() -> None:
    texts = {
        path: path.read_bytes().decode().replace("\r\n", "\n").replace("\r", "\n")
        for path in sorted(CORPUS.rglob("*.md"))
        if path.parent != CORPUS
    }
    assert len(texts) == 267
    assert all(sections(text) for text in texts.values())
    config = make_config("heading-aware", 220, grammar="markdown")
    cut = {
        path.name: found
        for path, text in texts.items()
        if (found := fitting_fences_cut(text, config))
    }
    assert cut == {}
