"""The scoreboard: per column scores, the check matrix and the size histogram."""

from __future__ import annotations

from explorer import make_config, resolve_check
from explorer.checking.flags import flag_counts, index_flags
from explorer.pipeline import Column, run_column
from explorer.sources.manifest import SpanCheck
from explorer.view.render import render_matrix
from explorer.view.scoreboard import (
    Cell,
    MatrixRow,
    check_matrix,
    column_score,
    score_rows,
    size_histogram,
)
from tests.test_render import doc

TEXT = "# T\n\nabcdefgh\n\nijkl\n"
CHECK = SpanCheck.model_validate(
    {
        "id": "c<x>",
        "source_id": "d",
        "spans": [
            {"label": "inside", "start": 5, "end": 7},
            {"label": "across", "start": 7, "end": 11},
            {"label": "heading", "start": 0, "end": 3},
        ],
    }
)


def column(policy: str, size: int | None, checks: bool = True) -> Column:
    resolved = [resolve_check(CHECK, TEXT)] if checks else []
    return run_column(policy, [doc(TEXT)], resolved, make_config(policy, size))


def test_a_row_per_column_with_counts_sizes_and_flags() -> None:
    fixed = column("fixed-char", 4)
    flagged = index_flags({"d": TEXT}, fixed.index["chunks"], fixed.config)
    assert fixed.result["flags"] == flag_counts(flagged)  # the report's counts
    score = column_score(fixed)
    assert score.sizes == (4, 4, 4)  # abcd efgh ijkl
    [row] = score_rows([score])
    assert row == {
        "Column": "fixed-char",
        "Size": "max_chars 4",
        "Checks kept": "0/1",
        "Chunks": f"{fixed.result['chunk_count']:,}",
        "Chars min / median / max": "4 / 4 / 4",
        "Flagged chunks": str(score.flags["flagged"]),
        # Each flag its own count: "flagged" alone said nothing of which.
        "Longer than size": str(score.flags["over_size"]),
        "Tiny": str(score.flags["tiny"]),
        "Cut mid-sentence": str(score.flags["mid_sentence"]),
        "Cut in code": str(score.flags["in_code_block"]),
        "Dangling reference": str(score.flags["dangling_reference"]),
    }


def test_thousands_separators_and_no_checks_said_in_words() -> None:
    text = "# T\n\n" + "word " * 2_000 + "\n"
    big = run_column("fixed-char", [doc(text)], [], make_config("fixed-char", 4))
    score = column_score(big)
    [row] = score_rows([score])
    assert row["Chunks"] == "2,500" and row["Checks kept"] == "no checks"
    assert score_rows([score], skipped=1)[0]["Checks kept"] == "no check evaluated"


def test_the_matrix_says_where_each_span_lies_and_what_was_not_evaluated() -> None:
    columns = [column("fixed-char", 4), column("paragraph", None)]
    skipped = [{"id": "gone", "source_id": "lost", "reason": "its document did not load (x)"}]
    rows = check_matrix(columns, [resolve_check(CHECK, TEXT)], skipped)  # type: ignore[arg-type]
    assert [row.check_id for row in rows] == ["c<x>", "gone"]
    assert rows[0].cells[0] == Cell(
        "split", "inside: chunk 0 · across: split across 0, 1 · heading: in no chunk"
    )
    assert rows[0].cells[1].verdict == "split"
    assert rows[1].cells == (Cell("not evaluated", "its document did not load (x)"),) * 2
    markup = render_matrix([c.name for c in columns], rows)
    assert "c&lt;x&gt;" in markup and "<x>" not in markup
    assert markup.count('data-verdict="not evaluated"') == 2
    assert markup.count('class="cbx-cell cbx-no"') == 2


def test_no_checks_is_a_sentence_not_a_table_of_dashes() -> None:
    assert "No span checks yet" in render_matrix(["a"], [])


def test_the_histogram_bins_every_chunk_of_every_column_in_common_bins() -> None:
    columns = [column("fixed-char", 4, checks=False), column("paragraph", None, checks=False)]
    histogram = size_histogram(columns, bins=4)
    largest = max(c["end"] - c["start"] for col in columns for c in col.index["chunks"])
    assert histogram.width == 5  # a round width that makes at most 4 bins of 0..largest
    assert histogram.edges == tuple(range(0, largest + 1, 5))
    for col in columns:
        assert sum(histogram.counts[col.name]) == col.result["chunk_count"]
    sizes = sorted(c["end"] - c["start"] for c in columns[1].index["chunks"])
    assert histogram.counts["paragraph"] == tuple(
        sum(1 for s in sizes if edge <= s < edge + 5) for edge in histogram.edges
    )


def test_one_huge_chunk_is_gathered_in_a_last_bin_not_squeezing_the_rest() -> None:
    # 300 paragraphs of about 40 characters, and one of 20,000.
    text = "# T\n\n" + "".join(f"Paragraph {n} says a short thing.\n\n" for n in range(300))
    text += "x" * 20_000 + "\n"
    col = run_column("paragraph", [doc(text)], [], make_config("paragraph"))
    histogram = size_histogram([col], bins=20)
    assert histogram.beyond
    assert histogram.width <= 5  # bins of the typical sizes, not of 20,000 / 20
    assert sum(histogram.counts["paragraph"]) == col.result["chunk_count"] == 301
    assert histogram.counts["paragraph"][-1] == 1  # the huge one, alone in the last bin
    assert histogram.edges[-1] <= 20_000
    # Beside a column of small chunks, a column of widely spread sizes keeps them in
    # their bins: only what lies beyond every column's 99th percentile is gathered.
    text = "# T\n\n" + "".join(f"{'word ' * (n % 80 + 4)}end.\n\n" for n in range(300))
    text += "x" * 20_000 + "\n"
    spread = run_column("paragraph", [doc(text)], [], make_config("paragraph"))
    small = run_column("fixed-char", [doc(text)], [], make_config("fixed-char", 40))
    histogram = size_histogram([small, spread], bins=20)
    assert histogram.beyond and histogram.edges[-1] >= 400  # past the widest paragraph
    assert histogram.counts["paragraph"][-1] == 1
    assert histogram.counts["fixed-char"][-1] == 0
    # Sizes without such an outlier keep every bin up to the largest.
    assert not size_histogram([column("fixed-char", 4, checks=False)], bins=4).beyond


def test_the_matrix_says_when_only_overlap_keeps_a_check_together() -> None:
    text = "# T\n\nfirst para here.\n\nsecond: do X.\n\nonly after Y.\n"
    instruction, qualifier = text.index("second"), text.index("only")
    check = SpanCheck.model_validate(
        {
            "id": "c",
            "source_id": "d",
            "spans": [
                {"label": "a", "start": instruction, "end": instruction + 13},
                {"label": "b", "start": qualifier, "end": qualifier + 13},
            ],
        }
    )
    resolved = [resolve_check(check, text)]

    def row(overlap: int, size: int = 35) -> MatrixRow:
        config = make_config("heading-aware", size, overlap=overlap)
        built = run_column("heading-aware", [doc(text)], resolved, config)
        [only] = check_matrix([built], resolved, [])
        return only

    assert row(0).cells[0].verdict == "split"
    # the second chunk repeats "second: do X." of the first
    assert row(20).cells[0].verdict == "together by overlap"
    assert row(20, size=100).cells[0].verdict == "together"  # held in one chunk's own part
    markup = render_matrix(["h"], [row(20)])
    assert "only thanks to overlap" in markup and 'data-verdict="together by overlap"' in markup
