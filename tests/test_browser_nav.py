"""Real Chromium finding its way in a long document: the minimap, synchronized scrolling,
the boundary steps and the matrix's span jumps. Every claim is measured in the browser:
which line each view shows at its top, which page it draws, what is inside its box."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.test_browser import SIDEBAR_UPLOAD, app_url, browser, choose_source, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

POLICIES = ("fixed-char", "paragraph", "heading-aware")
# 80 sections of 40 short lines: about 105,000 characters, three pages.
LONG = "# Long\n\n" + "".join(
    f"## Part {n}\n\n" + "".join(f"Line {k} of part {n}, said plainly.\n" for k in range(40)) + "\n"
    for n in range(80)
)
FAR = "Line 7 of part 71, said plainly."  # on the last page
MANIFEST = {
    "manifest_version": 1,
    "documents": [
        {
            "source_id": "long",
            "version": "1",
            "path": "long.md",
            "sha256": hashlib.sha256(LONG.encode()).hexdigest(),
        }
    ],
    "span_checks": [
        {
            "id": "far-lines",
            "source_id": "long",
            "spans": [
                {"label": "near", "quote": "Line 3 of part 2, said plainly."},
                {"label": "far", "quote": FAR},
            ],
        }
    ],
}

# The offset of the first character of the first line a view shows whole: the first
# piece (`data-o`, its first character's offset) with a line at or below the box's top
# edge, then its first character (not a line break) there.
TOP_OFFSET = """doc => {
  const top = doc.getBoundingClientRect().top + doc.clientTop - 2;
  const range = document.createRange();
  for (const piece of doc.querySelectorAll('[data-o]')) {
    const boxes = piece.getClientRects();
    if (!boxes.length || boxes[boxes.length - 1].top < top) continue;
    const walker = document.createTreeWalker(piece, NodeFilter.SHOW_TEXT);
    const node = walker.nextNode();
    for (let i = 0; i < node.length; i++) {
      if (node.data[i] === '\\n') continue;  // a line break's box may be drawn on the next line
      range.setStart(node, i); range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (box && box.height > 0 && box.top >= top) return Number(piece.dataset.o) + i;
    }
  }
  return null;
}"""


# 500 short sections, every ninth with a paragraph longer than heading-aware's 220: its
# chunk alone is flagged "longer than the size". About 66,000 characters, two pages.
MIXED = "# Mixed\n\n" + "".join(
    f"## Part {n}\n\n"
    + "".join(f"Line {k} of part {n}, said plainly.\n" for k in range(9 if n % 9 == 4 else 2))
    + "\n"
    for n in range(500)
)


def line_of(offset: int, text: str = LONG) -> int:
    return text.count("\n", 0, offset) + 1


def doc_of(page: Page, policy: str) -> Locator:
    return page.locator(f"[data-policy='{policy}'] .cbx-doc")


def top_lines(page: Page, text: str = LONG) -> dict[str, int]:
    """The document line each view shows first."""
    return {policy: line_of(doc_of(page, policy).evaluate(TOP_OFFSET), text) for policy in POLICIES}


def settle(page: Page) -> None:
    """The app idle, nothing faded as stale, and the navigation script installed."""
    wait_idle(page)
    expect(page.locator("[data-stale='true']")).to_have_count(0, timeout=30_000)
    page.wait_for_function("window.cbxNav && window.cbxNav.installed", timeout=30_000)


def wait_for(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll what the browser measures until it holds (scrolling follows a frame later)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the views did not get there"
        time.sleep(0.1)


def all_at_line_of(page: Page, offset: int, text: str = LONG) -> bool:
    """Whether every view shows the line of `offset` first."""
    return set(top_lines(page, text).values()) == {line_of(offset, text)}


def inside(page: Page, element: Locator, policy: str) -> bool:
    """Whether an element of a view shows inside that view's scroll box."""
    box, frame = element.bounding_box(), doc_of(page, policy).bounding_box()
    assert box is not None and frame is not None
    return frame["y"] <= box["y"] and box["y"] + box["height"] <= frame["y"] + frame["height"]


def open_long(page: Page, folder: Path, manifest: dict[str, Any], text: str) -> Page:
    """The app on a long document (`long.md` of `manifest`), its first page drawn."""
    (folder / "long.md").write_text(text)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    choose_source(page, "Upload files", SIDEBAR_UPLOAD)
    page.locator(SIDEBAR_UPLOAD).set_input_files(
        [str(folder / "manifest.json"), str(folder / "long.md")]
    )
    expect(page.locator("[data-policy='heading-aware'] .cbx-page")).to_contain_text(
        f"of {len(text):,}", timeout=30_000
    )
    settle(page)
    return page


def manifest_of(text: str) -> dict[str, Any]:
    """A manifest of `text` alone, as `long.md`, with no span check."""
    digest = hashlib.sha256(text.encode()).hexdigest()
    entry = {"source_id": "long", "version": "1", "path": "long.md", "sha256": digest}
    return {"manifest_version": 1, "documents": [entry]}


@pytest.fixture
def long_page(page: Page, tmp_path: Path) -> Page:
    """The app on the long document (and its span check), its first page drawn."""
    return open_long(page, tmp_path, MANIFEST, LONG)


def test_scrolling_one_view_scrolls_the_others_to_the_same_line(long_page: Page) -> None:
    page = long_page
    assert set(top_lines(page).values()) == {1}
    doc_of(page, "paragraph").hover()
    page.mouse.wheel(0, 2600)
    wait_for(lambda: doc_of(page, "paragraph").evaluate("e => e.scrollTop") > 2000)
    wait_for(lambda: len(set(top_lines(page).values())) == 1)
    [line] = set(top_lines(page).values())
    assert line > 80  # well down the page, in every view
    for policy in POLICIES:
        assert doc_of(page, policy).evaluate("e => e.scrollTop") > 1000
    # And back up, from another view.
    doc_of(page, "fixed-char").hover()
    page.mouse.wheel(0, -900)
    wait_for(
        lambda: len(set(top_lines(page).values())) == 1 and top_lines(page)["paragraph"] < line
    )


def click_tick(page: Page, policy: str, row: int) -> int:
    """Click a view's minimap on its `row`-th tick; the chunk start the tick stands for."""
    page.locator(f"[data-policy='{policy}'] .cbx-map").scroll_into_view_if_needed()
    tick = page.locator(f"[data-policy='{policy}'] .cbx-map .cbx-mt").nth(row)
    box = tick.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"])
    return int(tick.get_attribute("data-at") or "-1")


def test_a_click_on_the_minimap_jumps_there_turning_the_page(long_page: Page) -> None:
    page = long_page
    window = page.locator("[data-policy='fixed-char'] .cbx-page")
    low, high = map(int, (window.get_attribute("data-window") or "").split())
    # A spot on the page drawn: the views scroll to it.
    near = click_tick(page, "fixed-char", 60)
    assert low < near < high
    badge = page.locator(f"[data-policy='fixed-char'] .cbx-n[data-at='{near}']")
    wait_for(lambda: inside(page, badge, "fixed-char"))
    wait_for(partial(all_at_line_of, page, near))
    # A spot far below: every view turns to the page that holds it and shows it.
    ticks = page.locator("[data-policy='fixed-char'] .cbx-map .cbx-mt").count()
    far = click_tick(page, "fixed-char", ticks - 30)
    assert far >= high
    expect(window).not_to_have_attribute("data-window", f"{low} {high}", timeout=30_000)
    settle(page)
    low, high = map(int, (window.get_attribute("data-window") or "").split())
    assert low <= far < high
    badge = page.locator(f"[data-policy='fixed-char'] .cbx-n[data-at='{far}']")
    wait_for(lambda: inside(page, badge, "fixed-char"))
    wait_for(partial(all_at_line_of, page, far))
    spinbutton = page.get_by_role("spinbutton", name="Page", exact=False)
    assert spinbutton.input_value() == spinbutton.get_attribute("max")  # the last page
    # The strip's box for the part shown moved down with it.
    here = page.locator("[data-policy='fixed-char'] .cbx-mh")
    assert here.evaluate("e => parseFloat(e.style.top)") > 50


def test_next_and_previous_boundary_step_from_chunk_start_to_chunk_start(
    long_page: Page,
) -> None:
    page = long_page
    view = "[data-policy='heading-aware']"
    # The view shows the document's first line: the next boundary is the first chunk
    # start after it, then the one after that.
    starts = [
        at
        for badge in page.locator(f"{view} .cbx-doc .cbx-n").all()[:4]
        if (at := int(badge.get_attribute("data-at") or "-1")) > 0
    ]
    following = page.locator(f"{view} .cbx-step[data-step='1']")
    for start in starts[:3]:
        following.click()
        badge = page.locator(f"{view} .cbx-n[data-at='{start}']")
        wait_for(partial(inside, page, badge, "heading-aware"))
        wait_for(partial(all_at_line_of, page, start))
    page.locator(f"{view} .cbx-step[data-step='-1']").click()
    wait_for(partial(all_at_line_of, page, starts[1]))


def test_on_a_narrow_page_a_step_keeps_its_own_view_in_sight(long_page: Page) -> None:
    """At 900 px the views stack: a step in the last one scrolls the page to that view,
    not to the first (whose text would then fill the window)."""
    page = long_page
    page.set_viewport_size({"width": 900, "height": 1050})
    settle(page)
    first, last = doc_of(page, POLICIES[0]), doc_of(page, POLICIES[-1])
    assert last.bounding_box()["y"] > first.bounding_box()["y"] + 1050  # type: ignore[index]
    following = page.locator(f"[data-policy='{POLICIES[-1]}'] .cbx-step[data-step='1']")
    badges = page.locator(f"[data-policy='{POLICIES[-1]}'] .cbx-doc .cbx-n[data-at]")
    start = min(a for a in map(int, badges.evaluate_all("b => b.map(e => e.dataset.at)")) if a)
    following.click()
    wait_for(partial(all_at_line_of, page, start))
    expect(last).to_be_in_viewport()
    expect(first).not_to_be_in_viewport()


def test_next_boundary_past_the_page_turns_it(long_page: Page) -> None:
    page = long_page
    view = "[data-policy='heading-aware']"
    window = page.locator(f"{view} .cbx-page")
    low, high = map(int, (window.get_attribute("data-window") or "").split())
    last = int(page.locator(f"{view} .cbx-doc .cbx-n").last.get_attribute("data-at") or "-1")
    doc_of(page, "heading-aware").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    wait_for(lambda: len(set(top_lines(page).values())) == 1)
    assert doc_of(page, "heading-aware").evaluate(TOP_OFFSET) > last  # no start below
    page.locator(f"{view} .cbx-step[data-step='1']").click()
    expect(window).not_to_have_attribute("data-window", f"{low} {high}", timeout=30_000)
    settle(page)
    first = int(page.locator(f"{view} .cbx-doc .cbx-n").first.get_attribute("data-at") or "-1")
    assert last < high <= first
    badge = page.locator(f"{view} .cbx-n[data-at='{first}']")
    wait_for(lambda: inside(page, badge, "heading-aware"))
    wait_for(partial(all_at_line_of, page, first))


def test_next_and_previous_match_step_between_the_chunks_the_filter_matches(
    page: Page, tmp_path: Path
) -> None:
    open_long(page, tmp_path, manifest_of(MIXED), MIXED)
    view = "[data-policy='heading-aware']"
    steps = page.locator(f"{view} .cbx-step[data-match='1']")
    expect(steps).to_have_count(0)  # no filter, no match steps
    # Under v1 heading-aware keeps long paragraphs whole by design: shown when asked for.
    page.get_by_text("Not what a policy does by design").click()
    expect(page.locator(f"{view} .cbx-nf[data-flags~='over_size']").first).to_be_attached(
        timeout=30_000
    )
    settle(page)
    page.locator(".st-key-flag_filter").get_by_test_id("stMultiSelect").click()
    page.get_by_role("option", name="longer than the size").click()
    expect(steps).to_have_count(2, timeout=30_000)
    settle(page)
    window = page.locator(f"{view} .cbx-page")
    low, high = map(int, (window.get_attribute("data-window") or "").split())
    starts = [
        int(at)
        for at in page.locator(f"{view} .cbx-doc .cbx-n").evaluate_all(
            "badges => badges.map(b => b.dataset.at)"
        )
    ]
    matches = [
        int(badge.get_attribute("data-at") or "-1")
        for badge in page.locator(f"{view} .cbx-doc .cbx-nf[data-flags~='over_size']").all()
    ]
    assert len(matches) > 3 and len(starts) > 4 * len(matches)  # most chunks do not match
    at_line = partial(all_at_line_of, page, text=MIXED)
    following = steps.and_(page.locator("[data-step='1']"))
    for start in matches[:3]:  # each step skips the chunks between two matches
        following.click()
        wait_for(partial(at_line, start))
    steps.and_(page.locator("[data-step='-1']")).click()
    wait_for(partial(at_line, matches[1]))
    # At the page's end, the steps go through the matches left on it, then past the last
    # one the next match is on the next page: the page turns to it.
    doc_of(page, "heading-aware").evaluate("e => { e.scrollTop = e.scrollHeight; }")
    wait_for(lambda: doc_of(page, "heading-aware").evaluate(TOP_OFFSET) > matches[1])
    top = doc_of(page, "heading-aware").evaluate(TOP_OFFSET)
    for start in [m for m in matches if m > top]:
        following.click()
        page.wait_for_function(f"window.cbxNav.place?.offset === {start}", timeout=15_000)
    following.click()
    expect(window).not_to_have_attribute("data-window", f"{low} {high}", timeout=30_000)
    settle(page)
    first = page.locator(f"{view} .cbx-doc .cbx-nf[data-flags~='over_size']").first
    turned = int(first.get_attribute("data-at") or "-1")
    assert matches[-1] < high <= turned
    wait_for(partial(at_line, turned))


def test_a_span_button_in_the_matrix_shows_the_span_on_its_page(long_page: Page) -> None:
    page = long_page
    window = page.locator("[data-policy='paragraph'] .cbx-page")
    before = window.get_attribute("data-window")
    page.locator(".cbx-matrix .cbx-jump", has_text="far").click()
    expect(window).not_to_have_attribute("data-window", before or "", timeout=30_000)
    settle(page)
    start = LONG.index(FAR)
    wait_for(partial(all_at_line_of, page, start))
    for policy in POLICIES:
        outlined = page.locator(f"[data-policy='{policy}'] .cbx-in", has_text="part 71").first
        assert inside(page, outlined, policy)
        label = page.locator(f"[data-policy='{policy}'] .cbx-hl[data-l='far']")
        assert inside(page, label, policy)  # the span's label too, above its first line
        expect(outlined).to_be_in_viewport()


def test_a_span_button_turns_to_its_document(page: Page) -> None:
    """On the bundled example, from the other document: the views turn to the check's."""
    settle(page)
    chosen = page.get_by_role("combobox", name="Document (2 documents loaded)", exact=True)
    chosen.focus()
    page.keyboard.type("aster-copy-v2")
    page.keyboard.press("Enter")
    view = page.locator("[data-policy='heading-aware']")
    expect(view).to_have_attribute("data-doc", "aster-copy-v2", timeout=30_000)
    settle(page)
    page.locator(".cbx-matrix .cbx-jump", has_text="qualifier").click()
    expect(view).to_have_attribute("data-doc", "aster-copy-v1", timeout=30_000)
    settle(page)
    for policy in POLICIES:
        label = page.locator(f"[data-policy='{policy}'] .cbx-hl[data-l='qualifier']")
        wait_for(partial(inside, page, label, policy))
        expect(label).to_be_in_viewport()
    assert "doc=aster-copy-v1" in page.url


def test_a_slider_step_keeps_the_views_at_their_line(long_page: Page) -> None:
    """The views redrawn for a new size start where they were, not at the page's top."""
    page = long_page
    doc_of(page, "fixed-char").hover()
    page.mouse.wheel(0, 1800)
    wait_for(lambda: doc_of(page, "fixed-char").evaluate("e => e.scrollTop") > 1200)
    wait_for(lambda: len(set(top_lines(page).values())) == 1)
    [line] = set(top_lines(page).values())
    slider = page.get_by_role("slider", name="fixed-char max_chars")
    slider.focus()
    page.keyboard.press("ArrowRight")
    view = page.locator("[data-policy='fixed-char']")
    expect(view).to_contain_text("max_chars 81", timeout=30_000)
    settle(page)
    wait_for(lambda: set(top_lines(page).values()) == {line})


# Long lines of words: fixed-char's chunks start mid-line, and where a line wraps just
# after a badge, the badge is drawn at the end of the line above its chunk's text.
WRAPPED = "# Wrapped\n\n" + "".join(
    f"## Part {n}\n\n" + " ".join(f"word{n}x{k}" for k in range(60)) + "\n\n" for n in range(80)
)
# The orders of the badges drawn on a line above their chunk's first character.
BADGES_ABOVE = """doc => [...doc.querySelectorAll('.cbx-n[data-at]')].filter(badge => {
  let piece = badge.nextElementSibling;
  while (piece && !piece.dataset.o) piece = piece.nextElementSibling;
  const range = document.createRange();
  const node = piece.firstChild;
  range.setStart(node, 0); range.setEnd(node, 1);
  return badge.getBoundingClientRect().bottom <= range.getClientRects()[0].top + 1;
}).map(badge => Number(badge.dataset.n))"""


def test_a_chunk_shown_at_the_top_shows_its_badge_drawn_on_the_line_above(
    page: Page, tmp_path: Path
) -> None:
    open_long(page, tmp_path, manifest_of(WRAPPED), WRAPPED)
    above = doc_of(page, "fixed-char").evaluate(BADGES_ABOVE)
    assert above, "no badge of this page wraps to the line above its text"
    order = page.get_by_role("spinbutton", name="Chunk order", exact=False)
    order.fill(str(above[len(above) // 2]))
    order.press("Enter")
    settle(page)
    page.get_by_role("button", name="Show where it starts in the views", exact=False).click()
    badge = page.locator(
        f"[data-policy='fixed-char'] .cbx-doc .cbx-n[data-n='{above[len(above) // 2]}']"
    )
    wait_for(lambda: doc_of(page, "fixed-char").evaluate("e => e.scrollTop") > 0)
    wait_for(lambda: inside(page, badge, "fixed-char"))


def test_the_chunk_detail_shows_its_chunk_in_every_view(long_page: Page) -> None:
    page = long_page
    window = page.locator("[data-policy='paragraph'] .cbx-page")
    first_page = window.get_attribute("data-window")
    order = page.get_by_role("spinbutton", name="Chunk order", exact=False)
    chosen = int(order.get_attribute("max") or "0") - 40  # a fixed-char chunk on the last page
    order.fill(str(chosen))
    order.press("Enter")
    settle(page)
    button = page.get_by_role("button", name="Show where it starts in the views", exact=False)
    button.click()
    expect(window).not_to_have_attribute("data-window", first_page or "", timeout=30_000)
    settle(page)
    badge = page.locator(f"[data-policy='fixed-char'] .cbx-doc .cbx-n[data-n='{chosen}']")
    start = int(badge.get_attribute("data-at") or "-1")
    wait_for(lambda: inside(page, badge, "fixed-char"))
    wait_for(partial(all_at_line_of, page, start))
