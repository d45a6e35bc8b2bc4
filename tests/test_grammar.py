"""Grammar v1 and the three policies on the edge cases a careful reader finds."""

from __future__ import annotations

import pytest

from explorer import ErrorCode, ExplorerError, build_index, make_config, paragraphs, sections
from explorer.sources.documents import DocumentRecord, document_record


def doc(text: str) -> DocumentRecord:
    fields = {"source_id": "d", "version": "1", "path": "d.md", "sha256": "0" * 64}
    return document_record(fields, text)


def spans(text: str, policy: str, size: int | None = None) -> list[tuple[int, int]]:
    index = build_index([doc(text)], make_config(policy, size))
    for chunk in index["chunks"]:
        assert text[chunk["start"] : chunk["end"]] == chunk["text"]
    return [(c["start"], c["end"]) for c in index["chunks"]]


def texts(text: str, policy: str, size: int | None = None) -> list[str]:
    return [text[s:e] for s, e in spans(text, policy, size)]


def test_offsets_are_code_points_not_bytes() -> None:
    text = "# Ünïcødé ☃\n\nα β γ 🙂 δ\n\nε\n"
    chunks = build_index([doc(text)], make_config("paragraph"))["chunks"]
    assert [(c["start"], c["end"]) for c in chunks] == [(13, 23), (24, 26)]
    assert chunks[0]["text"] == "α β γ 🙂 δ\n"
    assert chunks[0]["section_title"] == "Ünïcødé ☃"
    assert [(c["start_line"], c["end_line"]) for c in chunks] == [(3, 3), (5, 5)]


def test_whitespace_only_lines_of_tabs_and_no_break_spaces_are_blank() -> None:
    text = "# T\none\n\t \t\ntwo\n\u00a0\u00a0\nthree\n\u3000\nfour"
    assert texts(text, "paragraph") == ["one\n", "two\n", "three\n", "four"]


def test_other_unicode_line_breaks_end_lines_as_splitlines_does() -> None:
    text = "# T\none\x0c\x0ctwo\u2028\u2029three\n"
    # The form feed ends "one"; the second form feed is a blank line; likewise U+2029.
    assert texts(text, "paragraph") == ["one\x0c", "two\u2028", "three\n"]


def test_hash_without_space_and_seven_hashes_are_not_headings() -> None:
    text = "# Top\n\n#no-space\n\n####### seven\n\n###### six\nbody\n"
    found = sections(text)
    assert [s.title for s in found] == ["Top", "six"]
    assert texts(text, "paragraph") == ["#no-space\n", "####### seven\n", "body\n"]


def test_heading_title_is_verbatim_and_needs_exactly_the_first_space() -> None:
    text = "#  two spaces  \nbody\n"
    assert sections(text)[0].title == " two spaces  "


def test_trailing_heading_with_no_body_is_skipped() -> None:
    text = "# A\n\nbody\n\n## Empty\n\n   \n## Last"
    assert [s.title for s in sections(text)] == ["A"]
    assert texts(text, "heading-aware") == ["body\n"]


def test_no_final_newline() -> None:
    text = "# A\nlast line"
    assert texts(text, "paragraph") == ["last line"]
    assert texts(text, "fixed-char", 4) == ["last", " lin", "e"]
    chunk = build_index([doc(text)], make_config("paragraph"))["chunks"][0]
    assert (chunk["start_line"], chunk["end_line"]) == (2, 2)


def test_paragraph_longer_than_target_stands_alone_whole() -> None:
    long = "x" * 50 + "\n"
    text = f"# A\n\nab\n\n{long}\ncd\n\nef\n"
    assert texts(text, "heading-aware", 10) == ["ab\n", long, "cd\n\nef\n"]


def test_fixed_char_drops_windows_that_are_only_whitespace() -> None:
    text = "# A\nabcd" + " " * 4 + "\n\n\t\n" + "efgh"
    # Windows of 4 from the body start: "abcd", "    ", "\n\n\t\n", "efgh".
    assert texts(text, "fixed-char", 4) == ["abcd", "efgh"]


def test_fixed_char_windows_restart_at_each_section() -> None:
    text = "# A\nabcdef\n# B\nghi\n"
    assert texts(text, "fixed-char", 4) == ["abcd", "ef\n", "ghi\n"]


def test_target_one_keeps_every_paragraph_apart() -> None:
    text = "# A\n\na\n\nb\nc\n\nd\n"
    assert texts(text, "heading-aware", 1) == ["a\n", "b\nc\n", "d\n"]
    assert texts(text, "fixed-char", 1) == ["a", "b", "c", "d"]


def test_target_far_above_the_section_makes_one_chunk_per_section() -> None:
    text = "# A\n\na\n\nb\n# B\nc\n\nd\n"
    assert texts(text, "heading-aware", 1_000_000) == ["a\n\nb\n", "c\n\nd\n"]
    assert texts(text, "fixed-char", 1_000_000) == ["\na\n\nb\n", "c\n\nd\n"]


def test_groups_never_cross_a_heading() -> None:
    text = "# A\none\n## B\ntwo\n"
    assert texts(text, "heading-aware", 1000) == ["one\n", "two\n"]


def test_line_numbers_count_newlines_before_start_and_before_end() -> None:
    text = "# A\n\nline three\nline four\n\n\nline seven\n"
    chunks = build_index([doc(text)], make_config("paragraph"))["chunks"]
    assert [(c["start_line"], c["end_line"]) for c in chunks] == [(3, 4), (7, 7)]


@pytest.mark.parametrize(
    "text", ["intro\n# A\nbody\n", " # A\nbody\n", "#A\nbody\n", "####### A\nbody\n", "\n# A\nx"]
)
def test_text_must_start_with_a_heading(text: str) -> None:
    with pytest.raises(ExplorerError) as caught:
        sections(text)
    assert caught.value.code is ErrorCode.HEADING_REQUIRED


def test_paragraphs_of_a_range() -> None:
    text = "# A\n\n  one\n  more\n \n\ntwo"
    assert paragraphs(text, 4, len(text)) == [(5, 18), (21, 24)]
