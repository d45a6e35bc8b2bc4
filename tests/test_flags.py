"""Quality flags (docs/contract.md §12): each rule on small exact cases."""

from __future__ import annotations

import re
import time

from hypothesis import assume, given
from hypothesis import strategies as st

from explorer import build_index, make_config
from explorer.checking.flags import (
    DANGLING,
    FLAGS,
    IN_CODE_BLOCK,
    MID_SENTENCE,
    MID_SENTENCE_READ,
    OVER_SIZE,
    TINY,
    Fences,
    by_design,
    colour_flags,
    document_flags,
    flag_counts,
    index_flags,
    mid_sentence,
    only_flags,
    opens_with_back_reference,
)
from explorer.sources.documents import DocumentRecord, document_record


def doc(text: str, source_id: str = "d") -> DocumentRecord:
    return document_record(
        {"source_id": source_id, "version": "1", "path": f"{source_id}.md", "sha256": "0" * 64},
        text,
    )


def flags_of(text: str, policy: str, size: int | None) -> list[tuple[str, ...]]:
    config = make_config(policy, size)
    chunks = build_index([doc(text)], config)["chunks"]
    return document_flags(text, chunks, config)


def test_a_cut_inside_a_line_without_a_sentence_end_is_mid_sentence() -> None:
    text = "one two three. four five\n"
    assert mid_sentence(text, 8)  # "one two |three"
    assert not mid_sentence(text, 15)  # "three. |four": after a full stop
    assert not mid_sentence(text, 24)  # at the line's end
    assert not mid_sentence(text, 0) and not mid_sentence(text, len(text))
    assert not mid_sentence('He said "stop." Then\n', 16)  # closing quote after the stop


def test_fenced_blocks_are_found_and_a_cut_between_their_lines_is_inside() -> None:
    text = "a\n```py\nx = 1\ny = 2\n```\nb\n~~~~\nopen to the end\n"
    fences = Fences.of(text)
    first = text.index("```py")
    closing_end = text.index("```\nb") + 4
    assert fences.starts[0] == first and fences.ends[0] == closing_end
    assert fences.inside(text.index("y = 2"))
    assert not fences.inside(first) and not fences.inside(closing_end)
    assert fences.inside(text.index("open")) and fences.ends[1] == len(text)


def test_a_closing_fence_needs_the_same_character_and_at_least_its_length() -> None:
    text = "````\ncode\n```\nstill code\n````\nafter\n"
    fences = Fences.of(text)
    assert fences.inside(text.index("still")) and not fences.inside(text.index("after"))


def test_back_references_are_the_listed_openings_only() -> None:
    for opening in (
        "This is",
        "It means",
        "- These",
        "> See above",
        "**Such** a",
        "1. As mentioned",
    ):
        assert opens_with_back_reference(opening), opening
    for opening in ("There are", "Thistle", "Italy", "the", "Call it"):
        assert not opens_with_back_reference(opening), opening


def test_over_size_and_tiny_against_max_chars() -> None:
    text = "# T\n\n" + "x" * 50 + "\n\ny\n"
    assert flags_of(text, "paragraph", None) == [(), ()]  # no size, no size flags
    assert flags_of(text, "heading-aware", 30) == [(OVER_SIZE,), (TINY,)]  # 51 and 2 chars
    assert flags_of(text, "heading-aware", 20) == [(OVER_SIZE,), ()]  # 2 is a tenth of 20


def test_fixed_char_cuts_mid_sentence_and_inside_code() -> None:
    text = "# T\n\nA long sentence without an end here and more\n\n```\nline one\nline two\n```\n"
    flagged = flags_of(text, "fixed-char", 16)
    assert any(MID_SENTENCE in names for names in flagged)
    assert any(IN_CODE_BLOCK in names for names in flagged)
    for names in flagged:
        assert names == tuple(name for name in FLAGS if name in names)  # in FLAGS order


def test_a_back_reference_away_from_its_heading_is_flagged_but_not_first_in_section() -> None:
    text = "# T\n\nThis opens the section.\n\nIt refers back.\n\nPlain words.\n"
    flagged = flags_of(text, "paragraph", None)
    assert [DANGLING in names for names in flagged] == [False, True, False]


def test_index_flags_follow_each_document_and_count() -> None:
    texts = {"a": "# A\n\nIt starts.\n\nIt goes on.\n", "b": "# B\n\nFine.\n"}
    config = make_config("paragraph")
    chunks = build_index([doc(t, s) for s, t in texts.items()], config)["chunks"]
    flagged = index_flags(texts, chunks, config)
    assert len(flagged) == len(chunks) == 3
    assert DANGLING in flagged[1] and DANGLING not in flagged[2]
    counts = flag_counts(flagged)
    assert counts["dangling_reference"] == 1 and counts["tiny"] == 0 and counts["flagged"] == 1


def test_the_report_counts_each_columns_flags_streamed_or_not() -> None:
    import io
    import json

    from explorer import LoadResult, load_documents, parse_manifest
    from explorer.pipeline import Settings, compare, write_comparison
    from explorer.sources.loading import DirectoryReader
    from tests.conftest import MANIFEST

    manifest = parse_manifest(MANIFEST.read_bytes())
    load: LoadResult = load_documents(manifest, DirectoryReader(MANIFEST.parent))
    report = compare(load, manifest.span_checks)
    texts = {d["source_id"]: d["text"] for d in load.documents}
    for policy in report["policies"]:
        chunks = report["indexes"][policy["name"]]["chunks"]
        config = Settings.default().config_for(policy["name"])
        assert policy["flags"] == flag_counts(index_flags(texts, chunks, config))
    assert report["policies"][0]["flags"]["mid_sentence"] == 11  # fixed-char 80
    streamed = io.BytesIO()
    write_comparison(load, manifest.span_checks, Settings.default(), streamed.write)
    assert json.loads(streamed.getvalue()) == json.loads(json.dumps(report))


def test_what_a_policy_does_by_design_is_left_out_of_its_badge_colours() -> None:
    every = frozenset(FLAGS)
    fixed = make_config("fixed-char", 80)
    assert colour_flags(fixed, every, True) == every - {"mid_sentence", "in_code_block"}
    assert colour_flags(fixed, every, False) == every
    # Under v1 heading-aware keeps a long paragraph whole; under markdown it cuts it.
    assert by_design(make_config("heading-aware", 220)) == {"over_size"}
    assert by_design(make_config("heading-aware", 220, grammar="markdown")) == frozenset()
    assert by_design(make_config("paragraph")) == frozenset()
    assert only_flags([("over_size", "tiny"), ()], frozenset({"tiny"})) == [("tiny",), ()]


SENTENCE_END = re.compile("[.!?\u2026][\"'\u201d\u2019\u00bb)\\]}*_`]*$")


def whole_line_mid_sentence(text: str, offset: int) -> bool:
    """The rule as it read before `MID_SENTENCE_READ`: the whole line, however long."""
    if not 0 < offset < len(text):
        return False
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    before = text[line_start:offset].rstrip()
    after = text[offset : len(text) if line_end < 0 else line_end].strip()
    return bool(before.strip()) and bool(after) and not SENTENCE_END.search(before)


@given(
    st.text(alphabet="ab .!?)\"'\n\t\u2026\u00a0", max_size=2 * MID_SENTENCE_READ),
    st.integers(min_value=0, max_value=2 * MID_SENTENCE_READ),
)
def test_mid_sentence_within_its_reach_is_the_whole_line_rule(text: str, offset: int) -> None:
    line = text[text.rfind("\n", 0, offset) + 1 :].split("\n")[0]  # the one holding the cut
    assume(len(line) <= MID_SENTENCE_READ)
    assert mid_sentence(text, offset) == whole_line_mid_sentence(text, offset)


def test_flags_of_cuts_on_one_long_line_take_linear_time() -> None:
    """Each cut read its whole line: 256 KB on one line took 12.6 s, 1 MiB minutes."""
    text = "# T\n\n" + "word " * 200_000
    config = make_config("fixed-char", 21)
    chunks = build_index([doc(text)], config)["chunks"]
    began = time.perf_counter()
    flagged = document_flags(text, chunks, config)
    assert time.perf_counter() - began < 10
    assert sum(MID_SENTENCE in names for names in flagged) > len(chunks) // 2
