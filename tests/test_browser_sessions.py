"""Sessions uploading at once, in real Chromium: each page keeps its own upload and sizes.

Eight pages of one browser each drop a different real Markdown file at the same moment;
no widget is touched after. Every page must end on its own document, with the default
sizes and no refusal, within a minute for all of them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.appserver import IDLE, ROOT
from tests.test_browser import SIDEBAR_UPLOAD, app_url, browser

__all__ = ["app_url", "browser"]  # the fixtures, shared with test_browser

# Beside the checkout (a worktree sits one level deeper).
CORPUS = next(
    path
    for path in (base / "shared" / "corpora" / "markdown-docs" for base in ROOT.parents)
    if path.is_dir()
)
PAGES, DOCUMENT_BYTES, DEADLINE = 8, 192 * 1024, 60.0
SIZES = "[data-testid='stSidebar'] [data-testid='stSliderThumbValue']"


def documents(directory: Path) -> list[Path]:
    """`PAGES` files of real Markdown, each its own heading and a different run of the corpus."""
    sources = sorted(CORPUS.rglob("*.md"))
    paths = []
    for n in range(PAGES):
        start = n * len(sources) // PAGES
        body = "\n".join(p.read_text("utf-8") for p in sources[start:] + sources[:start])
        text = f"# Document {n}\n\n"
        while len(text.encode()) < DOCUMENT_BYTES:
            text += body
        path = directory / f"drop{n}.md"
        path.write_text(text.encode()[:DOCUMENT_BYTES].decode("utf-8", errors="ignore"), "utf-8")
        paths.append(path)
    return paths


@pytest.fixture
def pages(browser: Browser, app_url: str) -> Iterator[list[Page]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    opened = [context.new_page() for _ in range(PAGES)]
    for page in opened:
        page.set_default_timeout(90_000)  # eight sessions share two cores
        page.goto(app_url)
    for page in opened:
        page.get_by_text("Upload files", exact=True).click()
    for page in opened:
        page.locator(SIDEBAR_UPLOAD).wait_for(state="attached", timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
    yield opened
    context.close()


def test_eight_sessions_uploading_at_once_keep_their_own_state(
    pages: list[Page], tmp_path: Path
) -> None:
    paths = documents(tmp_path)
    began = time.monotonic()
    for page, path in zip(pages, paths, strict=True):
        page.locator(SIDEBAR_UPLOAD).set_input_files(str(path))
    for page in pages:
        left = max(DEADLINE - (time.monotonic() - began), 1) * 1000
        page.wait_for_selector("[data-policy='heading-aware'] .cbx-doc", timeout=left)
        page.wait_for_selector(IDLE, timeout=left)
    elapsed = time.monotonic() - began
    page_states = []
    for page in pages:
        page.wait_for_timeout(300)  # a rerun may start just after the first idle
        page.wait_for_selector(IDLE, timeout=30_000)
        page_states.append(
            (
                page.locator("[data-testid=stFileChipName]").all_inner_texts(),
                page.locator(SIZES).all_inner_texts(),
                "too_many_chunks" in page.locator("[data-testid=stMain]").inner_text(),
                page.locator("[data-policy='heading-aware'] .cbx-doc").inner_text()[:12],
            )
        )
    assert page_states == [
        ([path.name], ["80", "220"], False, f"# Document {n}") for n, path in enumerate(paths)
    ]
    assert elapsed <= DEADLINE
