"""Time a large document in the real app, in headless Chromium: from dropping the file
(a plain .md, so the app builds its manifest) until every view has drawn its first page
and the page is idle, then one step of the heading-aware slider.

    PYTHONPATH=. .venv/bin/python scripts/bench_large.py FILE.md
"""

import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from tests.appserver import CHROMIUM_ARGS, IDLE, chromium_path, running_app
from tests.test_browser import SIDEBAR_UPLOAD as UPLOAD  # the manifest's, not the chunk files'

BIG = Path(sys.argv[1])


def idle(page: Page) -> None:
    page.wait_for_selector(IDLE, timeout=300_000)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=300_000)


with (
    tempfile.TemporaryDirectory() as scratch,
    running_app(Path(scratch) / "app.log") as url,
    sync_playwright() as p,
):
    b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
    page = b.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url)
    page.wait_for_selector("[data-policy='heading-aware'] .cbx-doc", timeout=60000)
    idle(page)
    page.get_by_text("Upload files", exact=True).click()
    page.locator(UPLOAD).wait_for(state="attached")
    idle(page)
    t = time.perf_counter()
    page.locator(UPLOAD).set_input_files(str(BIG))
    page.get_by_text("so one was built").wait_for(timeout=300_000)
    page.wait_for_selector("[data-policy='heading-aware'] .cbx-page", timeout=120_000)
    page.wait_for_selector("[data-policy='fixed-char'] .cbx-page", timeout=120_000)
    page.wait_for_selector("[data-policy='paragraph'] .cbx-page", timeout=120_000)
    idle(page)
    print(f"upload to usable: {time.perf_counter() - t:.1f} s")
    spans = page.evaluate("document.querySelectorAll('.cbx-doc span').length")
    size = page.evaluate(
        "[...document.querySelectorAll('[data-policy]')]"
        ".reduce((a, e) => a + e.outerHTML.length, 0)"
    )
    print(f"spans {spans:,}, view HTML {size:,} chars")
    slider = page.get_by_role("slider", name="heading-aware max_chars")
    slider.focus()
    t = time.perf_counter()
    before = page.locator("[data-policy='heading-aware'] .cbx-sub").first.inner_text()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "b => document.querySelector(\"[data-policy='heading-aware'] .cbx-sub\").textContent != b",
        arg=before,
        timeout=120_000,
    )
    idle(page)
    print(f"slider step: {time.perf_counter() - t:.1f} s")
    print(page.locator("[data-policy='heading-aware'] .cbx-head").inner_text())
    b.close()
