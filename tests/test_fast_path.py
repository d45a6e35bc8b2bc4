"""The fast path (markdown-it.rs, riptoken, summed counts) held to the reference it
replaces (markdown-it-py, tiktoken, each span counted on its own): on the real corpus,
the CommonMark spec's examples and fuzzed documents, and through every index id."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import ManifestDocument, MappingReader, build_index, load_documents, make_config
from explorer.chunking.tokens import TOKENS, count_tokens, encoding
from explorer.digests import sha_bytes
from explorer.grammars import markdown as grammar
from explorer.limits import MAX_CHUNKS_LIMIT, Limits
from explorer.sources.manifest import Manifest
from tests.conftest import GOLDEN, ROOT

CORPUS = ROOT.parent / "shared" / "corpora" / "markdown-docs"
SPEC = json.loads((ROOT / "tests" / "data" / "commonmark_examples.json").read_text("utf-8"))
NO_LIMITS = Limits(chunks_per_document=MAX_CHUNKS_LIMIT, chunks_per_index=MAX_CHUNKS_LIMIT)


def corpus_texts() -> dict[str, str]:
    return {
        str(path.relative_to(CORPUS)): path.read_bytes().decode().replace("\r\n", "\n")
        for path in sorted(CORPUS.rglob("*.md"))
    }


def forced(text: str) -> tuple[list[grammar.MarkdownSection], list[grammar.MarkdownSection]]:
    """A document's sections by markdown-it-py, and by markdown-it.rs without the guard
    (an empty list where the fast parser itself declines)."""
    starts = grammar.line_starts(text)
    fast = grammar.fast_blocks(text, starts)
    return (
        grammar.sections_of(text, starts, grammar.reference_blocks(text)),
        grammar.sections_of(text, starts, fast if fast is not None else []),
    )


def reference(text: str) -> list[grammar.MarkdownSection]:
    starts = grammar.line_starts(text)
    return grammar.sections_of(text, starts, grammar.reference_blocks(text))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_the_fast_parser_finds_the_corpus_sections() -> None:
    texts = corpus_texts()
    assert len(texts) == 268  # 267 documents and SOURCES.md
    declined = []
    for path, text in texts.items():
        slow, fast = forced(text)
        assert grammar.sections(text) == slow
        if grammar.fast_blocks(text, grammar.line_starts(text)) is None:
            declined.append(path)
        else:
            assert fast == slow, path
    # Lists nested 7 deep (token level 16 and more: left to markdown-it-py).
    assert declined == ["fastapi/docs/en/docs/advanced/security/oauth2-scopes.md"]


def test_every_commonmark_example_has_the_reference_sections() -> None:
    examples: list[str] = SPEC["examples"]
    assert len(examples) == 652
    declined = 0
    for text in examples:
        slow, fast = forced(text)
        assert grammar.sections(text) == slow
        if grammar.fast_blocks(text, grammar.line_starts(text)) is None:
            declined += 1
        else:
            assert fast == slow, text
    assert declined == 2  # a fence in a quote closed by the quote's end


# Lines that make the block parsers meet at their edges: containers, fences, tables,
# setext underlines, front matter, lazy continuations, non-ASCII spaces.
LINES = [
    *["", "", "text", "more text", "# Head", "## Head ##", "Title", "===", "---", "***"],
    *["- item", "* item", "+ item", "1. one", "2. two", "3) three", "> quote", "> > deep"],
    *[">", "    code", "\tcode", "```", "```py", "~~~", "  ```", "<div>", "</div>", "<pre>"],
    *["</pre>", "<!-- c -->", "| a | b |", "|---|---|", "| 1 | 2 |", "a | b", "--- | ---"],
    *["[ref]: /url", "[ref]: /url 'title'", "  - nested", "    - deeper", "   > q", "  1. x"],
    *["...", "- > q", "> - l", "> 1. x", "é ünï", "# a\u00a0#", "#\u00a0x ", "x\u00a0"],
    *[
        "\u00a0#",
        "\u2003x",
        "  text",
        "\u00a0",
        " ",
        "\t",
        "> ```",
        "- ```",
        "> | a | b |",
        "> |---|---|",
        "- | a |",
        "2. | x |",
        "| q > 1 |",
    ],
]


def fuzzed(seed: int, count: int) -> list[str]:
    chooser = random.Random(seed)
    documents = []
    for _ in range(count):
        text = "\n".join(chooser.choice(LINES) for _ in range(chooser.randrange(1, 14)))
        documents.append(text + "\n" if chooser.random() < 0.5 else text)
    return documents


def test_fuzzed_documents_have_the_reference_sections() -> None:
    """The guard sends every document where the parsers part to markdown-it-py; and the
    fast parser, unguarded, parts from it only where a guard pattern is present."""
    for text in fuzzed(20261202, 6000):
        slow, fast = forced(text)
        assert grammar.sections(text) == slow, text
        if fast != slow and grammar.fast_blocks(text, grammar.line_starts(text)) is not None:
            assert grammar._may_part(text), text


# Lines in quotes (some nested in list items) and lines that may continue them lazily.
QUOTED = [
    *["> a", "> 2. b", "> > 2. b", "> - > a", "> 1. > a", "2. b", "> | x |", "> a | b"],
    *["a | b", "> > a", "> - a", ">2. x", "> > | a |", ">> 3) c", "   > 10. x", "  > a"],
    *["-  > a", "1. > a", "   2. b", "- 2. b", "> 1) > b", "* > x", "> -->", "> a --> b"],
    *["- > | c |", "| a | b |", "|---|---|", "text", ""],
]


def test_lines_that_continue_every_quote_are_not_lazy() -> None:
    """A line that starts with as many `>` as every quote above it (list markers between
    them counted) continues them all: no lazy line, and the parsers agree on it."""
    assert not grammar._may_part("> a\n> 2. b\n> c | d\n")
    assert not grammar._may_part("> a\n>  --> b\n> | c |\n")
    for text in ["> - > a\n> 2. b\n", "> 1. > a\n> | c |\n", "> > a\n> 2. b\n"]:
        assert grammar._may_part(text)
    chooser = random.Random(2026)
    for _ in range(4000):
        lines = [chooser.choice(QUOTED) for _ in range(chooser.randrange(1, 10))]
        text = "\n".join(lines) + "\n"
        assert grammar.sections(text) == reference(text), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(LINES), min_size=1, max_size=12), st.booleans())
def test_any_document_of_those_lines_has_the_reference_sections(
    lines: list[str], newline: bool
) -> None:
    text = "\n".join(lines) + ("\n" if newline else "")
    assert grammar.sections(text) == reference(text)


def test_the_divergences_the_guard_names() -> None:
    for text in [
        "> a\n2. b\n",
        "> q\n| a | b |\n|---|---|\n",
        "| 1 | 2 |\n|---|---|\n2. two\n",
        "| q > 1 |\n---\n",
        "1. one\n2. | x |\n--- | ---\n",
        "| 1 | 2 |\n|---|---|\n\u00a0\n---\n",
    ]:
        slow, fast = forced(text)
        assert fast != slow
        assert grammar.sections(text) == slow


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_riptoken_counts_as_tiktoken(text: str) -> None:
    assert count_tokens(text) == len(encoding().encode_ordinary(text))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_riptoken_counts_corpus_spans_as_tiktoken() -> None:
    chooser = random.Random(7)
    reference_encoding = encoding()
    for text in corpus_texts().values():
        for _ in range(20):
            start = chooser.randrange(len(text) + 1)
            piece = text[start : start + chooser.randrange(3000)]
            assert count_tokens(piece) == len(reference_encoding.encode_ordinary(piece))


def load_corpus() -> tuple[int, list[Any]]:
    files = {str(p.relative_to(CORPUS)): p.read_bytes() for p in sorted(CORPUS.rglob("*.md"))}
    files = {path: data for path, data in files.items() if "/" in path}
    manifest = Manifest(
        manifest_version=1,
        documents=[
            ManifestDocument(source_id=path, version="1", path=path, sha256=sha_bytes(data))
            for path, data in files.items()
        ],
    )
    loaded = load_documents(manifest, MappingReader(files), max_bytes=64 << 20)
    return len(files), list(loaded.documents)


GOLDEN_CORPUS = GOLDEN / "markdown-docs_markdown_indexes.json"
CONFIGS = {
    "heading-aware, max_tokens 256, markdown grammar": ("heading-aware", {"max_tokens": 256}),
    "heading-aware, max_tokens 64, overlap 16, markdown grammar": (
        "heading-aware",
        {"max_tokens": 64, "overlap": 16},
    ),
    "heading-aware, max_tokens 32, markdown grammar": ("heading-aware", {"max_tokens": 32}),
    "fixed-char, max_tokens 256, markdown grammar": ("fixed-char", {"max_tokens": 256}),
    "fixed-char, max_tokens 64, overlap 16, markdown grammar": (
        "fixed-char",
        {"max_tokens": 64, "overlap": 16},
    ),
    "paragraph, markdown grammar": ("paragraph", {}),
    "heading-aware, max_chars 220, markdown grammar": ("heading-aware", {"max_chars": 220}),
}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_corpus_indexes_keep_the_ids_recorded_before_the_fast_path() -> None:
    """Recorded with markdown-it-py and tiktoken (the code before the fast path); the
    heading-aware indexes again when a line larger than the size came to be cut after
    its sentences, between words, not in windows (issue 37, item 4), and the one with
    overlap when it came to repeat the trailing blocks that leave room (item 5)."""
    golden = json.loads(GOLDEN_CORPUS.read_text("utf-8"))
    files, documents = load_corpus()
    assert (files, len(documents)) == (golden["files"], golden["documents"])
    assert list(golden["indexes"]) == list(CONFIGS)
    for label, (policy, sizes) in CONFIGS.items():
        config = make_config(policy, grammar="markdown", **sizes)  # type: ignore[arg-type]
        assert config.label() == label
        index = build_index(documents, config, NO_LIMITS)
        recorded = golden["indexes"][label]
        assert (len(index["chunks"]), index["index_id"]) == (
            recorded["chunks"],
            recorded["index_id"],
        ), label


# Text that makes the pattern's pieces meet at line starts and ends: letters, digits,
# punctuation, spaces of every kind, contractions, newlines.
PIECE_TEXT = st.text(
    alphabet=st.sampled_from(
        [*"ab1 \t\n.)`'s-#|>", "\u00a0", "\u2003", "\x0c", "\x1c", "é", "\u0663", "½"]
    ),
    max_size=60,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECE_TEXT, min_size=1, max_size=6), st.data())
def test_summed_counts_are_the_counts_of_each_run(pieces: list[str], data: st.DataObject) -> None:
    """Units at random places of random text: every run that `Measures.run` sums has
    the count of its text on its own, and so does every unit."""
    text = "".join(pieces)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=10))))
    bounds = [0, *cuts, len(text)]
    units = [(a, b) for a, b in pairwise(bounds) if b > a]
    # Units with gaps between them: drop a random part of each unit's end.
    units = [(a, data.draw(st.integers(a + 1, b))) for a, b in units]
    measures = TOKENS.measure_units(text, units)
    # Counts known already (a grammar's pieces) give the same measures.
    known = [data.draw(st.sampled_from([None, cost])) for cost in measures.costs]
    assert TOKENS.measure_units(text, units, known) == measures
    for k, (a, b) in enumerate(units):
        assert measures.costs[k] == count_tokens(text[a:b])
        if k + 1 < len(units):
            assert measures.gaps[k] == count_tokens(text[b : units[k + 1][0]])
        for last in range(k, len(units)):
            summed = measures.run(k, last)
            if summed is not None:
                assert summed == count_tokens(text[a : units[last][1]]), (k, last)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared corpus is not here")
def test_summed_counts_hold_on_the_corpus_blocks() -> None:
    for text in corpus_texts().values():
        for section in grammar.sections(text):
            units = section.units(text)
            measures = TOKENS.measure_units(text, units)
            for k in range(len(units)):
                for last in range(k, min(k + 4, len(units))):
                    summed = measures.run(k, last)
                    if summed is not None:
                        assert summed == count_tokens(text[units[k][0] : units[last][1]])


def test_deep_nesting_is_left_to_markdown_it_py() -> None:
    """markdown-it.rs recurses once per level (some 25,000 overflow its stack: the
    process dies) and nests past markdown-it-py's 20 levels: a document that could nest
    that deep never reaches it, one that does is parsed by markdown-it-py."""
    for text in ["> " * 100_000 + "a", "- " * 100_000 + "a\n", "1. " * 50_000 + "a"]:
        assert grammar.fast_blocks(text, grammar.line_starts(text)) is None
        assert grammar.sections(text) == reference(text)
    for text in [
        "> " * 30 + "```\n" + "> " * 30 + "x\n",
        "- " * 25 + "```\n" + "  " * 25 + "x\n" + "  " * 25 + "```\n",
    ]:
        assert grammar.fast_blocks(text, grammar.line_starts(text)) is None
        assert grammar.sections(text) == reference(text)


def nested(node: Any, level: int = 0) -> tuple[int, bool]:
    """The deepest token level under a node (itself at `level`), and whether a code
    block is among its nodes."""
    deepest, code = level, node.name in {"fence", "code_block"}
    for child in node.children:
        child_deepest, child_code = nested(child, level + 1)
        deepest, code = max(deepest, child_deepest), code or child_code
    return deepest, code


# Line starts that nest lists and quotes on one line, and what may follow them.
NESTINGS = ["> ", ">", "- ", "* ", "1. ", "10) ", "  ", "   ", " "]
NESTED = ["text", "| a | b |", "|---|---|", "```", "~~~", "code", "# h", "- x", "> y", ""]


def nesting(seed: int, count: int) -> list[str]:
    chooser = random.Random(seed)
    documents = []
    for _ in range(count):
        lines = [
            "".join(chooser.choice(NESTINGS) for _ in range(chooser.randrange(0, 16)))
            + chooser.choice(NESTED)
            for _ in range(chooser.randrange(1, 8))
        ]
        documents.append("\n".join(lines) + "\n")
    return documents


def test_containers_without_nesting_signs_hold_no_code_and_no_deep_node() -> None:
    """`fast_blocks` walks into a list or quote only where `_may_nest` says so: where
    it does not, no code block is nested and no node is as deep as `_DEEPEST`."""
    # The bound is tight: a table's cells twelve quotes or six lists deep are at level 16.
    tight = [">" * 12 + "| a |\n" + ">" * 12 + "|---|\n", "- " * 6 + "| a |\n" + "  " * 6 + "|-|\n"]
    for text in tight:
        assert grammar._may_nest(text)
        assert grammar.fast_blocks(text, grammar.line_starts(text)) is None
    assert not grammar._may_nest(tight[0].replace(">" * 12, ">" * 11))
    texts = [*SPEC["examples"], *fuzzed(7, 2000), *nesting(11, 4000), *tight]
    if CORPUS.is_dir():
        texts.extend(corpus_texts().values())
    skipped = 0
    for text in texts:
        data = text.encode()
        for node in grammar._FAST.tree(text).children:
            if node.name not in grammar._CONTAINERS or node.srcmap is None:
                continue
            begin, end = node.srcmap
            line_begin = data.rfind(b"\n", 0, begin) + 1
            line_end = data.find(b"\n", end - 1) + 1 or len(data)
            if grammar._may_nest(data[line_begin:line_end].decode()):
                continue
            skipped += 1
            deepest, code = nested(node)
            assert deepest < grammar._DEEPEST and not code, text
    assert skipped > 1000


def test_documents_nested_on_one_line_have_the_reference_sections() -> None:
    for text in nesting(11, 4000):
        assert grammar.sections(text) == reference(text), text
