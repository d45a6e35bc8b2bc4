"""Real Chromium: a click on a chunk reruns only the chunk detail, and the first click
after the page loads is not lost."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.test_browser import app_url, browser, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

VIEW = ".cbx-view[data-policy='heading-aware']"
ORDER = ".st-key-detail_order input"


def page_time(page: Page) -> str:
    return page.get_by_text("Server time for this view:").inner_text()


def test_the_first_click_after_the_page_loads_opens_its_chunk(page: Page, app_url: str) -> None:
    page.goto(app_url)  # again: click as soon as the views are drawn, not after the script
    piece = page.locator(f"{VIEW} .cbx-k[data-c='2']").first
    expect(piece).to_be_visible(timeout=60_000)
    piece.click()
    expect(page.locator(ORDER)).to_have_value("2", timeout=30_000)


def test_a_click_on_a_chunk_reruns_only_the_detail(page: Page) -> None:
    before = page_time(page)
    part = page.get_by_text("Server time for this part:")
    expect(part).to_be_visible()
    page.locator(f"{VIEW} .cbx-n[data-n='3']").click()
    expect(page.locator(ORDER)).to_have_value("3", timeout=30_000)
    wait_idle(page)
    expect(page.locator(".st-key-detail_column")).to_match_aria_snapshot(
        '- combobox "Column": heading-aware'
    )
    assert page_time(page) == before  # the page did not run again, only the detail
    seconds = float(part.inner_text().split(":")[1].split()[0])
    assert seconds <= 0.5
    # A jump from the detail moves the views: that reruns the page.
    page.get_by_role("button", name="Show where it starts in the views").click()
    expect(page.get_by_text("Server time for this view:")).not_to_have_text(before, timeout=30_000)
    wait_idle(page)
    expect(page.locator(ORDER)).to_have_value("3")
