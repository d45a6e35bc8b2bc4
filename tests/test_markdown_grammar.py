"""The markdown grammar: hand-written edge cases, then invariants over random documents."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from explorer.chunking.tokens import CHARS, TOKENS, count_tokens
from explorer.grammars.markdown import MarkdownSection, sections, split_block
from explorer.grammars.units import Unit


def outline(text: str) -> list[tuple[str, list[str]]]:
    """Each section's title and its blocks' text."""
    return [(s.title, [text[a:b] for a, b in s.units(text)]) for s in sections(text)]


def test_a_comment_in_a_fenced_block_is_not_a_heading() -> None:
    text = "# Install\n\n```bash\n# comment\npip install x\n```\n\nDone.\n"
    assert outline(text) == [
        ("Install", ["```bash\n# comment\npip install x\n```\n", "Done.\n"]),
    ]


def test_setext_headings() -> None:
    text = "Title\n===\nbody\n\nSub\n---\nmore\n"
    assert outline(text) == [("Title", ["body\n"]), ("Sub", ["more\n"])]
    first, second = sections(text)
    assert (first.heading_start, first.start, first.end) == (0, 10, 16)
    assert second.heading_start == 16


def test_a_setext_title_over_two_lines_keeps_its_line_break() -> None:
    assert outline("Foo\nbar\n===\nbody\n") == [("Foo\nbar", ["body\n"])]


def test_atx_titles_as_markdown_it_gives_them() -> None:
    text = "#   Spaced   title ##\nbody\n   ## Indented\nmore\n#\nempty title\n"
    assert [title for title, _ in outline(text)] == ["Spaced   title", "Indented", ""]
    assert sections(text)[1].heading_start == text.index("   ## Indented")


def test_front_matter_is_a_preamble_block() -> None:
    text = "---\ntitle: x\n---\n# Heading\nbody\n"
    assert outline(text) == [("", ["---\ntitle: x\n---\n"]), ("Heading", ["body\n"])]
    preamble = sections(text)[0]
    assert (preamble.heading_start, preamble.start, preamble.end) == (0, 0, 17)


def test_a_document_without_a_heading_is_one_preamble_section() -> None:
    text = "Just prose.\n\nAnd more.\n"
    assert sections(text) == [
        MarkdownSection(0, "", 0, len(text), ((0, 12), (13, 23)), (), ((0, 12), (13, 23))),
    ]


def test_text_before_the_first_heading_is_the_preamble() -> None:
    text = "\n\nIntro\n# A\nbody"
    assert outline(text) == [("", ["Intro\n"]), ("A", ["body"])]


def test_a_blank_preamble_is_no_section() -> None:
    text = "\n  \n# A\nbody\n"
    assert [s.heading_start for s in sections(text)] == [4]


def test_indented_code_html_blocks_and_nested_headings_start_no_section() -> None:
    text = (
        "# Top\n\n"
        "    # indented code\n\n"
        "<div>\n# inside html\n</div>\n\n"
        "> # quoted heading\n> text\n\n"
        "- item\n\n  # heading in a list\n"
    )
    assert outline(text) == [
        (
            "Top",
            [
                "    # indented code\n",
                "<div>\n# inside html\n</div>\n",
                "> # quoted heading\n> text\n",
                "- item\n\n  # heading in a list\n",
            ],
        )
    ]


def test_tables_lists_and_quotes_are_whole_blocks() -> None:
    text = (
        "# T\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "1. one\n2. two\n\n   still two\n\n"
        "> quote\ncontinued lazily\n\n"
        "***\n"
    )
    assert outline(text) == [
        (
            "T",
            [
                "| a | b |\n|---|---|\n| 1 | 2 |\n",
                "1. one\n2. two\n\n   still two\n",
                "> quote\ncontinued lazily\n",
                "***\n",
            ],
        )
    ]


def test_nested_fences() -> None:
    text = "# F\n~~~~\n```\n# no\n```\n~~~~\n\n````md\n```\n# no\n```\n````\n# Yes\nx\n"
    assert outline(text) == [
        ("F", ["~~~~\n```\n# no\n```\n~~~~\n", "````md\n```\n# no\n```\n````\n"]),
        ("Yes", ["x\n"]),
    ]


def test_an_unclosed_fence_runs_to_the_end() -> None:
    text = "# A\n```\n# not a heading\n\n\n"
    assert outline(text) == [("A", ["```\n# not a heading\n"])]


def test_link_reference_definitions_are_kept_as_blocks() -> None:
    # markdown-it gives them no token; their text still belongs to a block.
    text = "# A\npara\n\n[ref]: https://example.com\n[two]: /x\n\nend\n"
    assert outline(text) == [
        ("A", ["para\n", "[ref]: https://example.com\n[two]: /x\n", "end\n"]),
    ]


def test_empty_sections_are_skipped() -> None:
    text = "# A\n\n# B\n  \n# C\nbody\n"
    assert outline(text) == [("C", ["body\n"])]


def test_crlf_is_normalized_before_the_grammar() -> None:
    raw = "# A\r\n\r\nbody\r\n"
    text = raw.replace("\r\n", "\n")
    assert outline(text) == [("A", ["body\n"])]


def test_a_line_of_unicode_whitespace_is_no_block() -> None:
    text = "# A\n\u00a0\nbody\n"
    assert outline(text) == [("A", ["body\n"])]


# Random documents from lines where Markdown's block rules disagree with grammar v1.
LINES = [
    "# Heading",
    "## Sub ##",
    "#",
    "#nospace",
    "Title",
    "===",
    "---",
    "***",
    "```",
    "```bash",
    "~~~",
    "````",
    "    indented",
    "\tcode",
    "  # indented heading",
    "> quote",
    "> # quoted",
    "- item",
    "1. item",
    "   continued",
    "| a | b |",
    "|---|---|",
    "<div>",
    "</div>",
    "<!-- c -->",
    "[ref]: /url",
    "",
    "",
    "  ",
    "\u00a0",
    "text",
    "日本語 👍🏽",
]
documents = st.lists(
    st.one_of(st.sampled_from(LINES), st.text(st.characters(codec="utf-8"), max_size=8)),
    max_size=40,
).map(lambda lines: "\n".join(lines).replace("\r", "\n").replace("\x00", ""))


def heading_lines(text: str) -> set[int]:
    """Line numbers of top-level headings, by markdown-it-py on its own."""
    parser = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
    found: set[int] = set()
    for token in parser.parse(text):
        if token.type == "heading_open" and token.level == 0 and token.map:
            found.update(range(*token.map))
    return found


@settings(max_examples=400, deadline=None)
@given(documents)
def test_sections_and_blocks_keep_every_character_once(text: str) -> None:
    found = sections(text)  # never refused
    for section in found:
        assert section.heading_start <= section.start <= section.end <= len(text)
        assert section.blocks
        for block_start, block_end in section.blocks:
            assert section.start <= block_start < block_end <= section.end
            block = text[block_start:block_end]
            assert not block.isspace()
            assert block_start == 0 or text[block_start - 1] == "\n"
            assert block_end == len(text) or text[block_end - 1] == "\n"
        for (_, a_end), (b_start, _) in pairwise(section.blocks):
            assert a_end <= b_start
    for a, b in pairwise(found):
        assert a.end <= b.heading_start
    assert len({s.heading_start for s in found}) == len(found)
    if found and found[0].title == "" and found[0].start == 0:
        assert found[0].heading_start == 0
    # Every non-blank line is in exactly one block, or is a top-level heading's line.
    headings = heading_lines(text)
    owner: dict[int, int] = {}
    line_starts = [0]
    for number, line in enumerate(text.split("\n")):
        line_starts.append(line_starts[-1] + len(line) + 1)
        if line.strip() and number not in headings:
            owner[line_starts[number]] = 0
    for section in found:
        for block_start, block_end in section.blocks:
            for position in owner:
                if block_start <= position < block_end:
                    owner[position] += 1
        # A title never comes from a line inside a block (a code block included).
        if section.title or section.heading_start != section.start:
            assert text.count("\n", 0, section.heading_start) in headings
    assert all(count == 1 for count in owner.values()), owner


def check_pieces(text: str, block: tuple[int, int], size: int, unit: Unit) -> None:
    pieces = split_block(text, block, size, unit)
    cursor = block[0]
    for (start, end), measure in pieces:
        # In order; what lies between two pieces is white space of one line (its end).
        assert cursor <= start < end
        gap = text[cursor:start]
        assert not gap or (gap.isspace() and "\n" not in gap.removesuffix("\n"))
        cursor = end
        piece = text[start:end]
        assert unit.measure(piece) <= size or len(piece) == 1
        # The measure a piece comes with is its own.
        assert measure is None or measure == unit.measure(piece)
        # A cut between lines, unless the line alone is larger than the size.
        line_start = text.rfind("\n", 0, end) + 1
        if end != block[1] and text[end - 1] != "\n":
            line_end = text.find("\n", line_start)
            line_end = len(text) if line_end < 0 else line_end + 1
            assert unit.measure(text[line_start:line_end]) > size
    assert cursor == block[1] or text[cursor : block[1]].isspace()


@settings(max_examples=300, deadline=None)
@given(documents, st.integers(1, 60), st.sampled_from([CHARS, TOKENS]))
def test_split_block_cuts_at_lines_within_the_size(text: str, size: int, unit: Unit) -> None:
    for section in sections(text):
        for block in section.blocks:
            check_pieces(text, block, size, unit)


def test_split_block_examples() -> None:
    text = "```\nline one\nline two\n" + "x" * 25 + "\n```\n"
    block = (0, len(text))
    pieces = [(text[a:b], measure) for (a, b), measure in split_block(text, block, 20, CHARS)]
    assert pieces == [
        ("```\nline one\n", 13),
        ("line two\n", 9),
        ("x" * 20, None),
        ("x" * 5 + "\n", None),
        ("```\n", 4),
    ]
    assert split_block(text, block, 1000, CHARS) == [(block, len(text))]
    token_pieces = split_block(text, block, 4, TOKENS)
    assert all(count_tokens(text[a:b]) <= 4 for (a, b), _ in token_pieces)
    assert all(count_tokens(text[a:b]) == m for (a, b), m in token_pieces if m is not None)
    # Together the pieces hold every character but white space at a cut inside a line.
    held = "".join(text[a:b] for (a, b), _ in token_pieces)
    assert "".join(held.split()) == "".join(text.split())


def test_sentence_units_are_paragraphs_and_single_list_items() -> None:
    text = "# A\n\nOne. Two.\n\n- x\n- y\n  z\n\n```\ncode\n```\n"
    (section,) = sections(text)
    units = [(text[a:b], prose) for (a, b), prose in section.sentence_units(text)]
    assert units == [
        ("One. Two.\n", True),
        ("- x\n", False),
        ("- y\n  z\n", False),
        ("```\ncode\n```\n", False),
    ]
