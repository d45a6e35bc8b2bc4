"""Plain files without a leading heading: a drop opens under the markdown grammar and says
so; a document refused with `heading_required` offers a one-click switch; the page keeps
its tabs whatever the grammar and columns."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer.pipeline import without_heading
from explorer.sources.uploads import bundle_from_files, pasted_bundle
from tests.test_app import PASTE, UPLOAD, errors, shown, start

HEADED = b"# Keys\n\nRotate the key every 30 days.\n"
PLAIN = b"Refunds are possible within 30 days.\n\nOnly after an inspection.\n"
OPENED = "Opened under the **markdown** grammar"


pytestmark = pytest.mark.usefixtures("private_index")


def test_without_heading_names_the_documents_grammar_v1_refuses_for_it() -> None:
    bundle = bundle_from_files(
        [("keys.md", HEADED), ("refunds.txt", PLAIN), ("crlf.md", b"\r\n\r\nplain\r\n")]
    )
    assert without_heading(bundle.manifest, bundle.files) == ["crlf", "refunds"]
    broken = {**bundle.files, "refunds.txt": b"\xff" + PLAIN}  # not the pinned bytes
    assert without_heading(bundle.manifest, broken) == ["crlf"]
    assert without_heading(bundle.manifest, bundle.files, max_bytes=10) == []
    assert without_heading(pasted_bundle("# Title\n\nText.\n").manifest, {}) == []


def drop(*files: tuple[str, bytes]) -> AppTest:
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    at.file_uploader(key="upload").set_value(
        [(name, data, "text/markdown") for name, data in files]
    ).run()
    assert not at.exception
    return at


def infos(at: AppTest) -> list[str]:
    return [shown(i.value) for i in at.info]


def to_markdown_buttons(at: AppTest) -> list[str]:
    return [b.label for b in at.button if b.key == "to_markdown"]


def test_a_drop_without_a_heading_opens_under_markdown_and_says_so() -> None:
    at = drop(("keys.md", HEADED), ("refunds.txt", PLAIN))
    assert at.radio(key="grammar").value == "markdown"
    assert any(OPENED in i and "refunds" in i for i in infos(at)), infos(at)
    assert not errors(at) and not at.warning
    assert at.selectbox(key="doc").options == ["keys", "refunds"]
    assert len(at.tabs) == 3
    assert not to_markdown_buttons(at)


def test_a_drop_whose_files_open_with_headings_stays_under_v1() -> None:
    at = drop(("keys.md", HEADED))
    assert at.radio(key="grammar").value == "v1"
    assert not any(OPENED in i for i in infos(at))


def test_choosing_v1_again_offers_the_one_click_switch_back() -> None:
    at = drop(("refunds.txt", PLAIN))
    at.radio(key="grammar").set_value("v1").run()
    assert not any(OPENED in i for i in infos(at))  # the drop is not reopened
    assert at.radio(key="grammar").value == "v1"
    assert len(at.tabs) == 3
    assert to_markdown_buttons(at) == ["Read it under the markdown grammar"]
    at.button(key="to_markdown").click().run()
    assert at.radio(key="grammar").value == "markdown"
    assert not at.warning and not to_markdown_buttons(at)
    assert at.selectbox(key="doc").options == ["refunds"]


def test_pasted_text_without_a_heading_offers_the_switch() -> None:
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value(PLAIN.decode()).run()
    assert at.radio(key="grammar").value == "v1"  # a paste is not a drop: nothing changes
    at.button(key="to_markdown").click().run()
    assert at.radio(key="grammar").value == "markdown"
    assert not errors(at) and not at.warning


def test_the_page_keeps_its_tabs_with_a_library_column_and_a_chunk_file() -> None:
    at = drop(("refunds.txt", PLAIN))
    at.checkbox(key="live_langchain-recursive_on").check().run()
    chunks = b'[{"source_id": "refunds", "text": "Only after an inspection."}]'
    at.file_uploader(key="chunk_files").set_value([("mine.json", chunks, "application/json")])
    at.run()
    assert not at.exception
    assert [tab.label for tab in at.tabs] == ["Explore boundaries", "Persistent index", "Retrieval"]
