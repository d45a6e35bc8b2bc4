"""Pages of a long document: contiguous, complete, at most a page long, cut at headings."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.view.paging import page_of, pages


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab #\n")), max_size=400),
    st.integers(1, 60),
)
def test_pages_cover_the_text_exactly_and_are_at_most_a_page(text: str, size: int) -> None:
    bounds = pages(text, size)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    for (_, end), (start, _) in pairwise(bounds):
        assert end == start
    assert all(end - start <= size for start, end in bounds)
    assert all(end > start for start, end in bounds) or text == ""


def test_pages_start_at_headings_when_sections_fit() -> None:
    text = "# A\n" + "a\n" * 10 + "## B\n" + "b\n" * 10 + "## C\n" + "c\n" * 10
    bounds = pages(text, 30)
    assert [text[start:].split("\n")[0] for start, _ in bounds] == ["# A", "## B", "## C"]


def test_a_long_section_is_cut_between_lines() -> None:
    text = "# A\n" + "line\n" * 20
    bounds = pages(text, 12)
    assert all(text[start - 1] == "\n" for start, _ in bounds[1:])
    assert page_of(bounds, len(text) - 1) == len(bounds) - 1
    assert page_of(bounds, 0) == 0
