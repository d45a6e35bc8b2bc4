"""Real Chromium: a person chooses the columns in the sidebar, sizes one in tokens with
overlap under the markdown grammar, and the link keeps the choice."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.test_browser import app_url, browser, page, table_cell, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

SIDEBAR = "[data-testid='stSidebar']"


def column_names(page: Page, count: int) -> list[str]:
    """The scoreboard's column names, once it has `count` rows."""
    rows = page.locator("[data-testid='stTable'] table", has_text="Checks kept").first.locator(
        "tbody tr"
    )
    expect(rows).to_have_count(count, timeout=30_000)
    return [table_cell(page, row, 0) for row in range(count)]


def test_add_a_second_heading_aware_column_and_remove_one(page: Page) -> None:
    picker = page.locator(f"{SIDEBAR} .st-key-add_column input")
    expect(picker).to_be_enabled(timeout=30_000)
    picker.click()
    page.keyboard.type("heading-aware")
    page.keyboard.press("Enter")
    expect(page.locator("[data-policy='heading-aware@440']")).to_be_visible(timeout=30_000)
    wait_idle(page)
    assert column_names(page, 4) == [
        "fixed-char",
        "paragraph",
        "heading-aware@220",
        "heading-aware@440",
    ]
    assert "columns=fixed-char%3A80%3Bparagraph%3Bheading-aware%3A220%3Bheading-aware%3A440" in (
        page.url
    )
    # Streamlit keeps a hidden copy of a button that has help text: click the visible one
    page.locator(f"{SIDEBAR} .st-key-paragraph-remove button >> visible=true").click()
    expect(page.locator("[data-policy='paragraph']")).to_have_count(0, timeout=30_000)
    wait_idle(page)
    assert column_names(page, 3) == ["fixed-char", "heading-aware@220", "heading-aware@440"]
    # the link opens the same columns
    page.goto(page.url)
    expect(page.locator("[data-policy='heading-aware@440']")).to_be_visible(timeout=30_000)
    wait_idle(page)
    assert column_names(page, 3) == ["fixed-char", "heading-aware@220", "heading-aware@440"]


def test_a_column_in_tokens_with_overlap_under_the_markdown_grammar(page: Page) -> None:
    page.locator(SIDEBAR).get_by_text("markdown: CommonMark blocks").click()
    wait_idle(page)
    page.locator(SIDEBAR).get_by_text("Unit and overlap").nth(1).click()  # heading-aware's
    page.locator(f"{SIDEBAR} .st-key-heading-aware-in-tokens").get_by_text(
        "Size in cl100k_base tokens"
    ).click()
    overlap = page.get_by_role("spinbutton", name="heading-aware overlap")
    expect(overlap).to_be_visible(timeout=30_000)
    overlap.fill("10")
    overlap.press("Enter")
    header = page.locator("[data-policy='heading-aware'] .cbx-head")
    expect(header).to_contain_text("max_tokens 55 · overlap 10 · markdown grammar", timeout=30_000)
    wait_idle(page)
    assert "grammar=markdown" in page.url and "heading-aware%3A55t%2C10" in page.url
