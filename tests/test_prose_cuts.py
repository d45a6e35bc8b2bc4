"""Heading-aware under the markdown grammar cuts a line longer than the size after the
last sentence that fits, else at the last white space, and inside a word only when one
word alone is longer than the size (issue 37, item 4; docs/contract.md §4b)."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import build_index, make_config
from explorer.checking.flags import index_flags
from explorer.chunking import tokens
from explorer.chunking.index import ChunkRecord
from explorer.chunking.tokens import UNITS, count_tokens
from explorer.grammars.prose import SENTENCE_END, line_pieces
from explorer.grammars.units import Unit
from explorer.sources.documents import document_record
from tests.conftest import ROOT
from tests.test_tokens import ENCODING

# Three one-line paragraphs in the manner of a 10-K's MD&A, 1,300 to 2,200 characters each.
TEN_K = (ROOT / "tests" / "data" / "ten-k-excerpt.md").read_text("utf-8")
CHARS, TOKENS = UNITS["chars"], UNITS["tokens"]
_ENDS_A_SENTENCE = re.compile(SENTENCE_END + r"\s*$")


def chunks_of(text: str, **sizes: int) -> list[ChunkRecord]:
    fields = {"source_id": "doc", "version": "1", "path": "doc.md", "sha256": "0" * 64}
    document = document_record(fields, text)
    config = make_config("heading-aware", grammar="markdown", **sizes)  # type: ignore[arg-type]
    return build_index([document], config)["chunks"]


def inside_a_word(text: str, cut: int) -> bool:
    return 0 < cut < len(text) and text[cut - 1].isalnum() and text[cut].isalnum()


def inside_a_line(text: str, cut: int) -> bool:
    """A cut with text of its line on both sides."""
    line_start = text.rfind("\n", 0, cut) + 1
    line_end = text.find("\n", cut)
    after = text[cut:] if line_end < 0 else text[cut:line_end]
    return bool(text[line_start:cut].strip()) and bool(after.strip())


@pytest.mark.parametrize(
    "sizes", [{"max_chars": 220}, {"max_chars": 501}, {"max_tokens": 55}], ids=str
)
def test_a_10k_paragraph_is_cut_after_sentences_never_inside_a_word(
    sizes: dict[str, int],
) -> None:
    chunks = chunks_of(TEN_K, **sizes)
    size = next(iter(sizes.values()))
    measure = count_tokens if "max_tokens" in sizes else len
    assert all(measure(c["text"]) <= size for c in chunks)
    ends = [c["end"] for c in chunks if inside_a_line(TEN_K, c["end"])]
    assert len(ends) > 5
    for end in ends:
        assert not inside_a_word(TEN_K, end), TEN_K[end - 20 : end + 20]
        assert TEN_K[end].isspace()  # a chunk ends before white space, after a word
    # The cuts are gone: "valua|tion", "b|enefit", "0|.25%", "2|027", "5.0|%".
    for word in ("valuation", "benefit", "0.25%", "2027", "5.0%", "15.0%"):
        for found in re.finditer(re.escape(word), TEN_K):
            inner = range(found.start() + 1, found.end())
            assert not any(c["start"] in inner or c["end"] in inner for c in chunks), word


def test_the_cut_is_the_last_sentence_end_that_fits_else_the_last_white_space() -> None:
    size = 220
    chunks = chunks_of(TEN_K, max_chars=size)
    for chunk, following in pairwise(chunks):
        end = chunk["end"]
        if not inside_a_line(TEN_K, end):
            continue
        # The next sentence end after the cut lies past the size from the chunk's start
        # (else the chunk would have taken it).
        rest = re.compile(SENTENCE_END + r"(?=\s)").search(TEN_K, end + 1)
        assert rest is None or rest.end() - chunk["start"] > size
        if _ENDS_A_SENTENCE.search(chunk["text"]):
            continue
        # Cut between words: no sentence of the chunk ends before it, and the next word
        # did not fit.
        inner = re.compile(SENTENCE_END + r"\s").search(chunk["text"])
        assert inner is None, chunk["text"]
        assert following["end"] - chunk["start"] > size
    assert sum(1 for c in chunks if _ENDS_A_SENTENCE.search(c["text"])) > len(chunks) // 3


def test_only_a_word_longer_than_the_size_is_cut_inside() -> None:
    word = "0x" + "9f" * 60  # 122 characters
    text = f"# Keys\n\nThe key is {word} and it never changes. Keep it safe.\n"
    chunks = chunks_of(text, max_chars=50)
    texts = [c["text"] for c in chunks]
    assert texts[0] == "The key is"
    cut_inside = [c["end"] for c in chunks if inside_a_word(text, c["end"])]
    assert cut_inside and all(
        text.index(word) < end < text.index(word) + len(word) for end in cut_inside
    )
    assert texts[-1] == "Keep it safe.\n"
    assert all(len(t) <= 50 for t in texts)


def test_grammar_v1_still_keeps_a_long_paragraph_whole() -> None:
    chunks = chunks_of(TEN_K, max_chars=220)
    fields = {"source_id": "doc", "version": "1", "path": "doc.md", "sha256": "0" * 64}
    v1 = build_index([document_record(fields, TEN_K)], make_config("heading-aware", 220))
    paragraphs = [p for p in TEN_K.split("\n\n") if not p.startswith("#")]
    assert [c["text"].strip() for c in v1["chunks"]] == [p.strip() for p in paragraphs]
    assert len(chunks) > 3 * len(paragraphs)


def test_mid_sentence_flags_fall_on_a_10k_paragraph() -> None:
    """At 501 characters a 10-K's sentences fit: no cut is flagged mid-sentence."""
    config = make_config("heading-aware", 501, grammar="markdown")
    chunks = chunks_of(TEN_K, max_chars=501)
    flagged = index_flags({"doc": TEN_K}, chunks, config)
    assert not any("mid_sentence" in names for names in flagged)


words = st.text(alphabet="abcdefghij0123456789.,%$", min_size=1, max_size=30)
spaces = st.sampled_from([" ", "  ", "\t", " \u00a0"])
enders = st.sampled_from(["", "", ".", "!", "?", "…", '."', ".)"])
lines = st.lists(st.tuples(words, enders, spaces), min_size=1, max_size=40).map(
    lambda parts: "".join(w + e + s for w, e, s in parts).rstrip() + "\n"
)


@settings(max_examples=300, deadline=None)
@given(lines, st.integers(1, 80), st.sampled_from([CHARS, TOKENS]))
def test_line_pieces_fit_in_order_and_cut_words_only_when_too_long(
    line: str, size: int, unit: Unit
) -> None:
    text = "# T\n\n" + line
    start = len("# T\n\n")
    pieces = line_pieces(text, start, len(text), size, unit)
    cursor = start
    for (a, b), measure in pieces:
        assert cursor <= a < b and not text[cursor:a].strip()
        piece = text[a:b]
        assert unit.measure(piece) <= size or len(piece) == 1
        assert measure is None or measure == unit.measure(piece)
        if b < len(text) and not text[b - 1].isspace() and not text[b].isspace():
            # cut inside a word: only one that alone is larger than the size
            word = next(w for w in re.finditer(r"\S+", text) if w.start() < b < w.end())
            assert unit.measure(word.group()) > size
        cursor = b
    assert "".join("".join(text[a:b] for (a, b), _ in pieces).split()) == "".join(line.split())


class CountingEncoding:
    def __init__(self) -> None:
        self.encoded = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded += len(text)
        return ENCODING.encode_ordinary(text)


PROSE = "The notes mature in 2027 and bear interest at 5.0% per annum, payable yearly. "
WORDS = "valuation allowance benefit "
BLOB = "a1b2c3d4e5"


@pytest.mark.parametrize("stretch", [PROSE, WORDS, BLOB], ids=["prose", "words", "blob"])
@pytest.mark.parametrize(("size", "most"), [(1, 14), (55, 7), (5000, 8)])
def test_a_long_line_is_cut_in_linear_time(
    monkeypatch: pytest.MonkeyPatch, stretch: str, size: int, most: float
) -> None:
    """Each character is encoded a bounded number of times, whatever the size: a piece
    reads a stretch some times the size, not the rest of the line."""
    text = (stretch * (100_000 // len(stretch) + 1))[:100_000] + "\n"
    counting = CountingEncoding()
    monkeypatch.setattr(tokens, "_counter", lambda: counting)
    pieces = line_pieces(text, 0, len(text), size, TOKENS)
    assert pieces[0][0][0] == 0 and pieces[-1][0][1] >= len(text.rstrip())
    assert 0 < counting.encoded <= most * len(text)


def test_a_long_line_in_characters_reads_no_token() -> None:
    text = PROSE * 2000
    pieces = line_pieces(text, 0, len(text), 100, CHARS)
    assert all(b - a <= 100 for (a, b), _ in pieces)
    assert all(text[a:b].rstrip().endswith(".") for (a, b), _ in pieces)


def test_the_excerpt_is_one_line_per_paragraph() -> None:
    paragraphs = [p for p in TEN_K.split("\n\n") if not p.startswith("#")]
    assert len(paragraphs) == 3 and all("\n" not in p.strip() for p in paragraphs)
    assert all(1300 <= len(p) <= 2300 for p in paragraphs)


# The corpus's one-line paragraph of exactly 100 characters (fastapi's
# advanced/additional-responses.md): with its newline, one character over the size.
LINE_OF_THE_SIZE = (
    "## Additional media types for the main response"
    " { #additional-media-types-for-the-main-response }\n\n"
    "You can use this same `responses` parameter to add different media types for the"
    " same main response.\n\n"
    "For example, you can add an additional media type of `image/png`.\n"
)


@pytest.mark.parametrize("overlap", [0, 30])
def test_a_line_of_the_size_and_its_newline_is_the_line(overlap: int) -> None:
    """The line's one piece (the line without its newline) is its chunk: before, a block
    cut in one piece was kept whole, newline and all, and measured 101 (issue 37, item 4)."""
    line = LINE_OF_THE_SIZE.split("\n\n")[1]
    assert len(line) == 100
    chunks = chunks_of(LINE_OF_THE_SIZE, max_chars=100, overlap=overlap)
    assert line in [c["text"] for c in chunks]
    assert all(len(c["text"]) <= 100 for c in chunks)


# Words of one token each, with or without a space before them.
TOKEN_WORDS = ["a", "to", "the", "data", "we", "chunk", "is", "of", "size", "x"]


@st.composite
def near_the_size(draw: st.DrawFn) -> tuple[str, dict[str, int]]:
    """Markdown of one-line paragraphs (some under headings), each measuring about the
    size, a small one in characters or tokens, with or without overlap."""
    in_tokens = draw(st.booleans())
    size = draw(st.integers(3, 16) if in_tokens else st.integers(4, 40))
    blocks = []
    for _ in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            blocks.append("## " + draw(st.sampled_from(TOKEN_WORDS)))
        length = draw(st.integers(max(1, size - 2), size + 2))
        ender = draw(st.sampled_from(["", ".", "!", '."']))
        if in_tokens:
            words = draw(st.lists(st.sampled_from(TOKEN_WORDS), min_size=length, max_size=length))
            line = " ".join(words) + ender
        else:
            line = draw(st.text(alphabet="ab .,", min_size=length, max_size=length))
            line = "a" + line[1:-1] + "b" if length > 1 else "a"
            line = line[: length - len(ender)] + ender if length > len(ender) else line
        blocks.append(line)
    text = "\n\n".join(blocks) + draw(st.sampled_from(["", "\n", "\n\n"]))
    sizes = {"max_tokens" if in_tokens else "max_chars": size}
    overlap = draw(st.integers(0, size - 1))
    if overlap:
        sizes["overlap"] = overlap
    return text, sizes


@settings(max_examples=300, deadline=None)
@given(near_the_size())
def test_no_chunk_of_one_line_paragraphs_near_the_size_is_larger(
    case: tuple[str, dict[str, int]],
) -> None:
    """docs/contract.md §5b: under the markdown grammar every heading-aware chunk
    measures at most the size (but a single character that alone is more)."""
    text, sizes = case
    size = sizes.get("max_tokens") or sizes["max_chars"]
    measure = count_tokens if "max_tokens" in sizes else len
    for chunk in chunks_of(text, **sizes):
        assert measure(chunk["text"]) <= size or len(chunk["text"]) == 1, (chunk, sizes)
