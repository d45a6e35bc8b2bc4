"""A semantic column's curve in Chromium: beside its view, each mark level with the line
where its gap lies, and scrolled with the view."""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import Page

from tests.conftest import ROOT
from tests.test_browser import SIDEBAR_UPLOAD, app_url, browser, choose_source, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

DOCUMENT = ROOT / "fixtures" / "markdown-docs" / "rust-book" / "ch04-01-what-is-ownership.md"
VIEW = ".cbx-view[data-policy='semantic']"


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the curve did not get there"
        time.sleep(0.1)


def mark_and_badge_tops(page: Page) -> list[tuple[float, float]]:
    """For each breakpoint or forced cut drawn at a chunk start: the mark's middle and
    the chunk's badge's middle, in the window."""
    found: list[tuple[float, float]] = page.evaluate(
        """(view) => {
          const found = [];
          const doc = document.querySelector(view + ' .cbx-doc');
          for (const mark of document.querySelectorAll(view + ' .cbx-curve [data-at]')) {
            if (mark.classList.contains('cbx-cp')) continue;
            const badge = doc.querySelector(`.cbx-n[data-at="${mark.dataset.at}"]`);
            if (!badge) continue;
            const m = mark.getBoundingClientRect(), b = badge.getBoundingClientRect();
            found.push([m.top + m.height / 2, b.top + b.height / 2]);
          }
          return found;
        }""",
        VIEW,
    )
    return found


LINE = 13 * 1.7  # px: the views' line height


def level(mark: float, badge: float) -> bool:
    """Whether a mark stands level with its chunk's line: the badge's, or the next one
    (a badge stands at the end of the line above when its line wraps just there)."""
    return abs(mark - badge) < LINE / 2 or abs(mark - badge - LINE) < LINE / 2


def test_the_curve_stands_beside_its_view_and_scrolls_with_it(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/?grammar=markdown&columns=semantic:300;heading-aware:300")
    wait_idle(page)
    choose_source(page, "Upload files", SIDEBAR_UPLOAD)
    page.locator(SIDEBAR_UPLOAD).set_input_files([str(DOCUMENT)])
    page.locator(f"{VIEW} .cbx-curve .cbx-cc[data-placed='true']").wait_for(timeout=60_000)
    wait_idle(page)
    doc = page.locator(f"{VIEW} .cbx-doc")
    drawn = page.locator(f"{VIEW} .cbx-curve .cbx-cc")
    scroller = page.locator(f"{VIEW} .cbx-curve .cbx-cs")
    tall = doc.evaluate("e => e.scrollHeight")
    assert drawn.evaluate("e => e.getBoundingClientRect().height") == tall
    assert page.locator(f"{VIEW} .cbx-curve .cbx-ct").count() == 1  # the threshold
    pairs = mark_and_badge_tops(page)
    assert len(pairs) >= 3
    assert all(level(mark, badge) for mark, badge in pairs), pairs
    doc.hover()
    page.mouse.wheel(0, 1500)
    wait_for(lambda: doc.evaluate("e => e.scrollTop") > 1000)
    wait_for(lambda: scroller.evaluate("e => e.scrollTop") == doc.evaluate("e => e.scrollTop"))
    assert all(level(mark, badge) for mark, badge in mark_and_badge_tops(page))
    title = page.locator(f"{VIEW} .cbx-curve .cbx-cb").first.get_attribute("title") or ""
    assert title.startswith("gap at ") and "\nleft [" in title and "\nright [" in title
