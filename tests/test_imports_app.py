"""The app takes other pipelines: a chunk file uploaded beside the manifest becomes a
column with its verdicts (real Chromium), and a live column is picked with its parameters
and kept in the link (AppTest)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter
from playwright.sync_api import Browser, Page, expect
from streamlit.testing.v1 import AppTest

from explorer.pipeline import Settings
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest
from tests.appserver import COLUMN_VIEWS, running_app
from tests.conftest import MANIFEST, ROOT
from tests.test_browser import browser, wait_idle
from ui.chunk_files import column_name

__all__ = ["browser"]  # the browser fixture, shared with tests/test_browser.py

APP = str(ROOT / "app.py")


def langchain_file(folder: Path) -> Path:
    """What a LangChain pipeline writes for the bundled example: `split_documents` with
    `add_start_index=True`, each Document's `model_dump()`, one per line."""
    manifest = parse_manifest(MANIFEST.read_bytes())
    load = load_documents(manifest, DirectoryReader(MANIFEST.parent))
    documents = [
        Document(page_content=d["text"], metadata={"source": d["path"]}) for d in load.documents
    ]
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=300, chunk_overlap=40, add_start_index=True
    )
    path = folder / "langchain.jsonl"
    chunks = splitter.split_documents(documents)
    path.write_text("\n".join(json.dumps(c.model_dump()) for c in chunks), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_app(tmp_path_factory.mktemp("app") / "app.log") as url:
        yield url


@pytest.fixture
def page(browser: Browser, app_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    opened = context.new_page()
    opened.goto(app_url)
    wait_idle(opened)
    yield opened
    context.close()


def test_an_uploaded_langchain_file_is_a_fourth_column_with_its_verdict(
    page: Page, tmp_path: Path
) -> None:
    uploader = page.locator("[data-testid='stSidebar'] .st-key-chunk_files input[type='file']")
    uploader.set_input_files(str(langchain_file(tmp_path)))
    wait_idle(page)
    view = page.locator("[data-policy='langchain']")
    expect(view).to_be_visible(timeout=30_000)
    expect(page.locator(COLUMN_VIEWS)).to_have_count(4)
    expect(view).to_contain_text("save-copy-qualifier")
    expect(view).to_contain_text("imported langchain chunks")
    matrix = page.locator("table.cbx-matrix")
    expect(matrix.locator("thead th").nth(4)).to_have_text("langchain")
    verdict = matrix.locator("tbody tr").first.locator("td").nth(3)
    expect(verdict).to_have_attribute("data-verdict", "together")


def test_a_chunk_file_that_cannot_be_placed_is_named_and_left_out_alone(
    page: Page, tmp_path: Path
) -> None:
    """One bad file (line 2 is not JSON) beside a good one: the page keeps every other
    column and says which file was left out, and why."""
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"source_id": "a", "text": "x"}\nnot json\n', encoding="utf-8")
    uploader = page.locator("[data-testid='stSidebar'] .st-key-chunk_files input[type='file']")
    uploader.set_input_files([str(langchain_file(tmp_path)), str(broken)])
    wait_idle(page)
    expect(page.locator("[data-policy='langchain']")).to_be_visible(timeout=30_000)
    expect(page.locator(COLUMN_VIEWS)).to_have_count(4)
    alert = page.locator("[data-testid='stAlert']").filter(has_text="are left out")
    expect(alert).to_have_count(1)
    expect(alert).to_contain_text("invalid_chunk_file: your chunks 'broken' are left out:")
    expect(alert).to_contain_text("line 2 is not JSON")


def test_a_live_column_is_picked_with_its_parameters_and_kept_in_the_link() -> None:
    app = AppTest.from_file(APP, default_timeout=60)
    app.run()
    app.checkbox(key="live_langchain-recursive_on").check().run()
    app.number_input(key="live_langchain-recursive_size").set_value(300).run()
    app.text_area(key="live_langchain-recursive_parameters").input(
        json.dumps({"separators": ["\n\n", "\n"]})
    ).run()
    assert not app.exception
    assert not app.error
    link = app.query_params
    assert link["langchain-recursive"] == ["300"] or link["langchain-recursive"] == "300"
    settings, notes = Settings.from_query(
        {k: v if isinstance(v, str) else v[-1] for k, v in link.items()}
    )
    assert not notes
    live = [c for c in settings.configs if c.library is not None]
    assert [c.strategy for c in live] == ["langchain-recursive"]
    assert live[0].library is not None
    assert live[0].library.parameters["separators"] == ["\n\n", "\n"]


def test_a_link_opens_with_its_live_column() -> None:
    app = AppTest.from_file(APP, default_timeout=60)
    app.query_params["semchunk"] = "120,20"
    app.run()
    assert not app.exception
    assert app.checkbox(key="live_semchunk_on").value
    assert app.number_input(key="live_semchunk_overlap").value == 20


def test_a_chunk_files_column_is_named_after_the_file() -> None:
    assert column_name("my pipeline.jsonl", []) == "my pipeline"
    assert column_name("paragraph.json", ["paragraph"]) == "paragraph (2)"
    assert len(column_name("x" * 200 + ".json", [])) <= 36
