"""Quotes as people type them (docs/contract.md §4): whitespace runs, curly quotes and
dashes match their plain forms, and the span still covers the document's own characters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import ErrorCode, ExplorerError
from explorer.checking.checks import fold_quote, locate_quote

TEXT = (
    "Only rotate after the new key\n  is deployed \u2014 everywhere; the \u2018old\u2019 "
    "key stops.\n\nEnd  now"
)


def placed(quote: str) -> str:
    start, end = locate_quote(TEXT, quote, "q")
    return TEXT[start:end]


def test_a_quote_typed_on_one_line_matches_text_that_wraps() -> None:
    assert placed("new key is deployed") == "new key\n  is deployed"
    assert placed("stops. End now") == "stops.\n\nEnd  now"


def test_straight_quotes_and_hyphens_match_curly_quotes_and_dashes() -> None:
    assert placed("deployed - everywhere; the 'old' key") == (
        "deployed \u2014 everywhere; the \u2018old\u2019 key"
    )


def test_the_span_covers_whole_whitespace_runs_at_its_edges() -> None:
    assert placed("stops. ") == "stops.\n\n"
    assert placed(" End") == "\n\nEnd"


def test_a_quote_must_still_occur_once() -> None:
    with pytest.raises(ExplorerError) as missing:
        locate_quote(TEXT, "new  keys", "q")
    assert missing.value.code is ErrorCode.SPAN_QUOTE_NOT_FOUND
    with pytest.raises(ExplorerError) as twice:
        locate_quote(TEXT, "key", "q")
    assert twice.value.code is ErrorCode.SPAN_QUOTE_AMBIGUOUS
    assert "(at 26 and 68)" in twice.value.detail  # offsets in the document, not folded


_PIECES = st.sampled_from(
    ["a", "b", " ", "  ", "\n", "\n\n", "\t", "'", "\u2019", "-", "\u2013", '"', "\u201c"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=30), st.data())
def test_a_placed_quote_is_the_document_text_it_stands_for(
    pieces: list[str], data: st.DataObject
) -> None:
    text = "".join(pieces)
    low = data.draw(st.integers(0, len(text) - 1))
    high = data.draw(st.integers(low + 1, len(text)))
    quote = text[low:high]
    try:
        start, end = locate_quote(text, quote, "q")
    except ExplorerError as error:
        assert error.code is ErrorCode.SPAN_QUOTE_AMBIGUOUS
        return
    assert fold_quote(text[start:end]) == fold_quote(quote)
    assert start <= low and high <= end  # only whitespace runs at the edges are widened
    assert text[start:low].isspace() or start == low
    assert text[high:end].isspace() or high == end
