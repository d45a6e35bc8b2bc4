"""Real Chromium on the explorer for daily use (issue #25): what only a browser sees —
a click on a chunk, widths, a step that cannot scroll, the busy notice, a narrow window."""

from __future__ import annotations

from playwright.sync_api import FilePayload, Page, expect

from tests.appserver import COLUMN_VIEWS
from tests.test_browser import app_url, browser, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

FIVE = "?columns=fixed-char:500;paragraph;heading-aware:220;heading-aware:1000&semchunk=300"

CHIP = FilePayload(
    name="a-rather-long-file-name-for-a-chip.md", mimeType="text/markdown", buffer=b"# A\n\nx\n"
)


def open_at(page: Page, url: str, width: int, query: str = "") -> None:
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{url}/{query}")
    expect(page.locator(COLUMN_VIEWS).first).to_be_visible(timeout=60_000)
    wait_idle(page)


def test_a_click_on_a_chunk_opens_it_in_the_detail(page: Page, app_url: str) -> None:
    view = page.locator(".cbx-view[data-policy='heading-aware']")
    expect(view).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_function("() => window.cbxNav && window.cbxNav.send")  # the script is in
    piece = view.locator(".cbx-k[data-c='2']").first
    piece.click()
    column = page.locator(".st-key-detail_column")
    expect(column).to_match_aria_snapshot('- combobox "Column": heading-aware', timeout=30_000)
    expect(page.locator(".st-key-detail_order input")).to_have_value("2", timeout=30_000)
    wait_idle(page)
    # Its badge opens it too.
    view.locator(".cbx-n[data-n='3']").click()
    expect(page.locator(".st-key-detail_order input")).to_have_value("3", timeout=30_000)


def test_five_columns_keep_a_readable_width_and_whole_names(page: Page, app_url: str) -> None:
    open_at(page, app_url, 1680, FIVE)
    expect(page.locator(COLUMN_VIEWS)).to_have_count(5, timeout=60_000)
    widths = [
        box["width"] for box in (v.bounding_box() for v in page.locator(COLUMN_VIEWS).all()) if box
    ]
    assert len(widths) == 5 and min(widths) >= 330, widths
    # None is cut or hidden: the views that do not fit in a row go on to the next one.
    row = page.locator("[data-testid='stHorizontalBlock']:has(.cbx-view)")
    assert row.evaluate("r => r.scrollWidth <= r.clientWidth + 1")
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert main is not None
    for view in page.locator(COLUMN_VIEWS).all():
        box = view.bounding_box()
        assert (
            box and main["x"] <= box["x"] and box["x"] + box["width"] <= main["x"] + main["width"]
        )
    for name in page.locator(".cbx-name").all():  # whole: no cut, no ellipsis
        assert name.evaluate("n => n.scrollWidth <= n.clientWidth + 1")
    # The steps of one view stay inside it.
    for view in page.locator(COLUMN_VIEWS).all():
        box, steps = view.bounding_box(), view.locator(".cbx-steps").bounding_box()
        assert box and steps and steps["x"] + steps["width"] <= box["x"] + box["width"] + 1


def test_a_step_that_cannot_scroll_marks_the_chunk_it_reached(page: Page) -> None:
    view = page.locator(".cbx-view[data-policy='heading-aware']")
    expect(view).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_function("() => window.cbxNav && window.cbxNav.send")  # the script is in
    doc = view.locator(".cbx-doc")
    assert doc.evaluate("d => d.scrollHeight <= d.clientHeight")  # nothing to scroll
    view.get_by_role("button", name="↓ next boundary").click()
    expect(view.locator(".cbx-n.cbx-reached")).to_have_count(1)
    expect(view.locator(".cbx-note-step")).to_contain_text("chunk 0 starts here")
    view.get_by_role("button", name="↓ next boundary").click()  # on from the chunk reached
    expect(view.locator(".cbx-n.cbx-reached[data-n='1']")).to_have_count(1)
    expect(view.locator(".cbx-note-step")).to_contain_text("chunk 1 starts here")


def test_a_rerun_shows_a_notice_in_view(page: Page) -> None:
    expect(page.locator(COLUMN_VIEWS).first).to_be_visible(timeout=30_000)
    wait_idle(page)
    notice = """() => {
      const app = document.querySelector('[data-testid=stApp]');
      app.setAttribute('data-test-script-state', 'running');
      const style = getComputedStyle(app, '::after');
      return [style.content, style.position, style.top];
    }"""
    content, position, top = page.evaluate(notice)
    assert "Computing" in content and position == "fixed" and top.endswith("px")


def test_at_900_px_the_chip_fits_and_the_matrix_says_it_scrolls(page: Page, app_url: str) -> None:
    open_at(page, app_url, 900, "?columns=fixed-char;paragraph;heading-aware;heading-aware:440")
    expect(page.locator(".cbx-scrollhint")).to_be_visible()
    page.get_by_text("Upload files", exact=True).click()
    page.locator(
        "[data-testid='stSidebar'] .st-key-upload [data-testid='stFileUploaderDropzoneInput']"
    ).set_input_files(files=[CHIP])
    chip = page.locator("[data-testid='stFileChip']").first
    expect(chip).to_be_visible(timeout=30_000)
    wait_idle(page)
    # The remove button lies inside the chip, which lies inside the box that clips it.
    room = page.locator("[data-testid='stFileChips']").bounding_box()
    own = chip.bounding_box()
    remove = chip.locator("button").bounding_box()
    assert room and own and remove
    assert remove["x"] + remove["width"] <= min(own["x"] + own["width"], room["x"] + room["width"])


SELECT = """quote => {
  const doc = document.querySelector(".cbx-view[data-policy='heading-aware'] .cbx-doc");
  const piece = [...doc.querySelectorAll('[data-o]')].find(p => p.textContent.includes(quote));
  const node = document.createTreeWalker(piece, NodeFilter.SHOW_TEXT).nextNode();
  const at = node.data.indexOf(quote);
  const range = document.createRange();
  range.setStart(node, at);
  range.setEnd(node, at + quote.length);
  window.getSelection().removeAllRanges();
  window.getSelection().addRange(range);
  document.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
}"""


def test_text_selected_in_a_view_becomes_a_span(page: Page) -> None:
    expect(page.locator(COLUMN_VIEWS).first).to_be_visible(timeout=30_000)
    wait_idle(page)
    page.wait_for_function("() => window.cbxNav && window.cbxNav.send")
    page.evaluate(SELECT, "This operation refuses an existing path.")
    offer = page.locator(".cbx-makespan")
    expect(offer).to_have_text("Make [131, 171) a span of the new check")
    offer.click()
    expect(page.locator(".st-key-check_a_start input")).to_have_value("131", timeout=30_000)
    expect(page.locator(".st-key-check_a_end input")).to_have_value("171")


def test_at_900_px_the_scoreboard_fits_its_place(page: Page, app_url: str) -> None:
    open_at(page, app_url, 900, FIVE)
    expect(page.locator(COLUMN_VIEWS)).to_have_count(5, timeout=60_000)
    board = page.locator("[data-testid='stTable']", has_text="Checks kept").first
    place = board.bounding_box()
    table = board.locator("table").bounding_box()
    assert place and table and table["width"] <= place["width"] + 1, (table, place)
