"""AppTest: the explorer for daily use (issue #25) — what each item asks of the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer import ChunkConfig, DirectoryReader, build_index, load_documents, parse_manifest
from explorer.chunking.policies import make_config
from explorer.jsonio import dump_json
from tests.conftest import FIXTURE, MANIFEST, open_tab
from tests.test_app import (
    PASTE,
    UPLOAD,
    add_check,
    errors,
    matrix,
    rows,
    shown,
    start,
)

pytestmark = pytest.mark.usefixtures("private_index")  # its own persistent index


def views(at: AppTest) -> dict[str, str]:
    """Every view drawn, by its column's name."""
    found = {}
    for element in at.html:
        named = re.search(r'class="cbx-view" data-policy="([^"]*)"', element.value)
        if named:
            found[named.group(1)] = element.value
    return found


def every_text(at: AppTest) -> list[str]:
    """What the page writes as Markdown or HTML: alerts, captions, tables, views."""
    texts = [
        e.value
        for kind in ("markdown", "caption", "info", "warning", "error", "success")
        for e in getattr(at, kind)
    ]
    texts += [e.value for e in at.html]
    for table in at.table:
        texts += [str(v) for row in table.value.to_dict("records") for v in row.values()]
    return texts


# -- 1. validation ----------------------------------------------------------------------------


def _index_bytes(config: ChunkConfig, manifest: Path, folder: Path) -> bytes:
    load = load_documents(parse_manifest(manifest.read_bytes()), DirectoryReader(folder))
    return dump_json(build_index(load.documents, config)).encode()


def test_a_token_sized_index_validates_and_says_what_it_was_checked_against() -> None:
    at = start()
    data = _index_bytes(make_config("heading-aware", max_tokens=64), MANIFEST, FIXTURE)
    at.file_uploader(key="validate_upload").set_value(
        [("index.json", data, "application/json")]
    ).run()
    assert not at.exception, at.exception
    [said] = [s.value for s in at.success]
    assert "max_tokens 64" in said and "2 documents" in said
    assert "documents loaded here" in said  # checked against the loaded text too


def test_an_index_of_other_documents_says_it_was_checked_against_itself_only() -> None:
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    data = _index_bytes(make_config("heading-aware", 220), MANIFEST, FIXTURE)
    at.file_uploader(key="validate_upload").set_value(
        [("index.json", data, "application/json")]
    ).run()
    [said] = [s.value for s in at.success]
    assert "Checked against itself" in said and "None of its documents is loaded here" in said


# -- 2. quotes as people type them ----------------------------------------------------------

WRAPPED = (
    "# Keys\n\nRotate a key only after the new key is deployed\neverywhere \u2014 the "
    "\u2018old\u2019 key stops working at once.\n\nRevoke a key that leaked.\n"
)


def test_a_quote_typed_on_one_line_with_straight_quotes_matches_wrapped_curly_text() -> None:
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value(WRAPPED).run()
    add_check(
        at,
        "wrapped",
        check_a_quote="new key is deployed everywhere - the 'old' key",
        check_b_quote="Revoke a key",
    )
    assert not errors(at), errors(at)
    assert "wrapped" in matrix(at)


def test_the_quote_boxes_take_line_breaks() -> None:
    at = start()
    assert at.text_area(key="check_a_quote") and at.text_area(key="check_b_quote")


# -- 3. the chunk list -------------------------------------------------------------------------


def test_the_detail_lists_every_chunk_of_its_column_to_search_and_pick() -> None:
    at = start()
    [listing] = [d for d in at.dataframe if "First words" in d.value.columns]
    assert list(listing.value.columns) == ["Order", "Section", "Chars", "Flags", "First words"]
    assert listing.value["Order"].tolist() == list(range(len(listing.value)))
    assert listing.value["First words"][0].startswith("Call save_copy(path, text)")


# -- 4. views that can be hidden -----------------------------------------------------------------


def test_hidden_views_are_not_drawn_but_the_scoreboard_and_matrix_keep_every_column() -> None:
    at = start()
    at.multiselect(key="views_shown").set_value(["fixed-char", "heading-aware"]).run()
    assert sorted(views(at)) == ["fixed-char", "heading-aware"]
    assert [r["Column"] for r in rows(at)] == ["fixed-char", "paragraph", "heading-aware"]
    assert len(matrix(at)["save-copy-qualifier"]) == 3
    at.slider(key="fixed-char").set_value(300).run()  # still hidden after another change
    assert sorted(views(at)) == ["fixed-char", "heading-aware"]


# -- 5. names and selections follow the columns -----------------------------------------------


def test_a_renamed_column_is_named_alike_in_its_view_and_scoreboard() -> None:
    at = start()
    at.selectbox(key="add_column").set_value("heading-aware").run()
    names = [r["Column"] for r in rows(at)]
    assert names == ["fixed-char", "paragraph", "heading-aware@220", "heading-aware@440"]
    assert sorted(views(at)) == sorted(names)


def test_removing_the_column_the_detail_shows_moves_the_detail_to_another() -> None:
    at = start()
    at.selectbox(key="add_column").set_value("heading-aware").run()
    at.selectbox(key="detail_column").set_value("heading-aware@440").run()
    at.number_input(key="detail_order").set_value(2).run()
    at.button(key="heading-aware_2-remove").click().run()
    assert not at.exception and not errors(at)
    assert at.selectbox(key="detail_column").value == "fixed-char"
    assert at.number_input(key="detail_order").value == 0


# -- 7. the document where the eye lands --------------------------------------------------------


def test_the_first_file_dropped_opens_and_every_view_names_it() -> None:
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    files = [
        (f"{name}.md", f"# {name}\n\nText of {name}.\n".encode(), "text/markdown")
        for name in ("zeta", "alpha", "mid")
    ]
    at.file_uploader(key="upload").set_value(files).run()
    assert at.selectbox(key="doc").value == "zeta"
    assert at.selectbox(key="doc").label.startswith("Document (3 documents loaded)")
    for view in views(at).values():
        assert 'in <bdi class="cbx-docname">zeta</bdi>' in view
    # The picker stands above the views, not in the sidebar.
    assert "doc" not in [s.key for s in at.sidebar.selectbox]


# -- 8. flags that mean something ------------------------------------------------------------


def test_the_scoreboard_counts_each_flag_and_the_badges_leave_out_what_a_policy_does() -> None:
    at = start(fixed="40")
    [fixed] = [r for r in rows(at) if r["Column"] == "fixed-char"]
    assert int(fixed["Cut mid-sentence"]) > 0
    assert {"Longer than size", "Tiny", "Cut in code", "Dangling reference"} <= set(fixed)
    view = views(at)["fixed-char"]
    assert "mid_sentence" not in view  # by design: a fixed window cuts anywhere
    at.toggle(key="flag_by_design").set_value(False).run()
    assert 'data-flags="mid_sentence' in views(at)["fixed-char"]
    at.multiselect(key="flag_colours").set_value(["tiny"]).run()
    assert "mid_sentence" not in views(at)["fixed-char"]


# -- 11. a file dropped twice ----------------------------------------------------------------------


def test_a_file_dropped_again_keeps_the_page_and_names_the_file() -> None:
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    first = ("a.md", b"# A\n\nFirst.\n", "text/markdown")
    again = ("a.md", b"# A\n\nSecond.\n", "text/markdown")
    at.file_uploader(key="upload").set_value(
        [first, ("b.md", b"# B\n\nBee.\n", "text/markdown"), again]
    ).run()
    assert not errors(at)
    [warned] = [shown(w.value) for w in at.warning]
    assert "a.md" in warned
    assert at.tabs and "Second." in views(at)["fixed-char"]


# -- 12. words -------------------------------------------------------------------------------------


def test_no_invisible_joiner_is_written_into_names_or_errors() -> None:
    at = start()
    at.selectbox(key="add_column").set_value("heading-aware").run()
    add_check(at, "at 12:30", check_a_quote="nowhere@all.example")
    assert errors(at)
    assert not [t for t in every_text(at) if "\u2060" in t]


def test_one_document_is_not_each_pinned_and_the_paste_box_names_its_grammar() -> None:
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value([("a.md", b"# A\n\nx\n", "text/markdown")]).run()
    [built] = [e.label for e in at.expander if "manifest" in e.label]
    assert "1 document, pinned" in built
    at.radio(key="source").set_value(PASTE).run()
    at.radio(key="grammar").set_value("markdown").run()
    assert "grammar v1" not in at.text_area(key="paste").label
    assert "Upload files" in at.radio(key="source").options


# -- 10. the persistent index for plain files ---------------------------------------------------

PLAIN = [(f"{n}.md", f"# {n}\n\nAll about {n}.\n".encode(), "text/markdown") for n in "abc"]


def test_plain_files_say_this_upload_is_the_whole_set_with_a_preview(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EXPLORER_ALLOW_DELETIONS", "true")
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(PLAIN)
    open_tab(at, "Persistent index").run()
    at.button(key="ingest").click().run()
    assert any("added 3" in s.value for s in at.success)
    at.file_uploader(key="upload").set_value(PLAIN[:2]).run()
    assert not at.checkbox(key="whole_set").value  # nothing is deleted unless asked
    at.checkbox(key="whole_set").check().run()
    [preview] = [shown(w.value) for w in at.warning if "will delete" in w.value]
    assert "1 document" in preview and "c (default)" in preview
    at.button(key="ingest").click().run()
    assert any("unchanged 2, failed 0, deleted 1" in s.value for s in at.success)


def test_the_whole_set_is_offered_only_where_deletions_are_allowed() -> None:
    at = start()  # a shared index: deletions off unless the server allows them
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(PLAIN)
    open_tab(at, "Persistent index").run()
    assert at.checkbox(key="whole_set").disabled


def test_the_histogram_names_each_row_level_above_it() -> None:
    at = start(**{"columns": "fixed-char;paragraph;heading-aware;heading-aware:1000"})
    [chart] = at.get("vega_lite_chart")
    header = json.loads(chart.proto.spec)["facet"]["row"]["header"]
    assert header["labelAngle"] == 0 and header["labelOrient"] == "top"
