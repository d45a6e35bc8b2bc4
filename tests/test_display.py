"""User text shown literally: a Markdown renderer turns `markdown_literal` back into the text."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from explorer.view.display import (
    FSI,
    PDI,
    failed_documents_line,
    file_name_part,
    isolate,
    markdown_literal,
    markdown_rows,
    visible_controls,
)

MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
HOSTILE = [
    "![pixel](http://evil.example/p.png)",
    "[a fake link](http://evil.example)",
    "# a heading\n\n---\n* a list",
    "id`with`backticks",
    "<img src=http://evil.example/x.png> <b>bold</b>",
    ":red[coloured] :material/home: $x^2$ ~~gone~~ **strong** _em_",
    "&amp; &#58; \\* | a | table |",
    "1. one\n> quoted",
    "    four spaces make code",
    "http://evil.example www.evil.example mail@evil.example",
]


def rendered_text(markdown: str) -> str:
    """The text a CommonMark renderer shows for `markdown`: it must be one plain paragraph."""
    markup = MARKDOWN.render(markdown)
    assert markup.startswith("<p>") and markup.endswith("</p>\n"), markup
    inner = markup[3:-5]
    inner = inner.replace("<code>", "").replace("</code>", "")  # text GFM would link
    assert "<" not in inner, markup  # no other element: no image, link or heading
    return html.unescape(inner)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_markdown_is_shown_as_its_own_text(text: str) -> None:
    assert rendered_text(markdown_literal(text)) == visible_controls(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1))
def test_any_text_renders_as_itself(text: str) -> None:
    shown = rendered_text(markdown_literal(text)).removeprefix(FSI).removesuffix(PDI)
    assert shown == visible_controls(text)


def test_line_breaks_and_bidi_controls_are_spelled_out() -> None:
    assert visible_controls("a\nb\tc\x00\u202ed") == "a\\nb\\tc\\u0000\\u202ed"
    assert rendered_text(markdown_literal("x\n# y")) == "x\\n# y"


def test_right_to_left_text_is_isolated_and_left_to_right_text_is_left_alone() -> None:
    assert isolate("שלום") == f"{FSI}שלום{PDI}"
    assert isolate("abc-1") == "abc-1"
    assert markdown_literal("a\u202eb") == "a\\\\u202eb"


def test_links_that_gfm_would_find_in_plain_text_are_code_and_nothing_is_invisible() -> None:
    assert markdown_literal("http://x.example") == "`http`&#58;`//x.example`"
    assert markdown_literal("www.x a@b") == "`www.x a@b`"
    assert markdown_literal("a@b.example") == "`a@b.example`"
    assert markdown_literal("x ``y` ") == "x \\`\\`y\\`&#32;"
    assert markdown_literal("see `a` at http://x") == "``see `a` at http``&#58;`//x`"
    # No colon of it reaches Streamlit's `:material/…:` and emoji rewriting.
    assert ":" not in markdown_literal(":material/home: http://x :: a:")
    # A column's name, a time and an error keep every character as typed, and no other.
    for text in ("heading-aware@220", "12:30:05", "a@b", "ratio: 1.5"):
        assert "\u2060" not in markdown_literal(text)
        assert rendered_text(markdown_literal(text)) == text


def test_every_table_cell_is_literal() -> None:
    [row] = markdown_rows([{"Check": "![x](http://evil.example)", "Together": "yes"}])
    assert row == {"Check": markdown_literal("![x](http://evil.example)"), "Together": "yes"}
    assert rendered_text(row["Check"]) == "![x](http://evil.example)"


def test_a_download_name_cannot_disguise_its_extension() -> None:
    assert file_name_part("invoice\u202egnp.exe") == "invoice_gnp.exe"
    assert file_name_part("../a b/ü") == ".._a_b__"
    assert len(file_name_part("x" * 5000)) == 100


@pytest.mark.parametrize(
    ("failed", "total", "expected"),
    [
        (1, 1, "The document failed to load; it is listed under Documents below with what to "
               "change."),
        (3, 3, "All 3 documents failed to load; they are listed under Documents below with "
               "what to change."),
        (1, 2, "1 of 2 documents failed to load; it is listed under Documents below with what "
               "to change, its span checks are marked not evaluated, and the other one can be "
               "explored."),
        (2, 5, "2 of 5 documents failed to load; they are listed under Documents below with "
               "what to change, their span checks are marked not evaluated, and the 3 others "
               "can be explored."),
    ],
)  # fmt: skip
def test_the_failed_documents_line_speaks_of_others_only_when_there_are(
    failed: int, total: int, expected: str
) -> None:
    assert failed_documents_line(failed, total) == expected
