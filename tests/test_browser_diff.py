"""Real Chromium: a person picks A and B under *Diff two columns* and sees the marks, and
the step goes to the next difference."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.appserver import settle
from tests.test_browser import app_url, browser, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser


def pick(page: Page, label: str, option: str) -> None:
    box = page.get_by_role("combobox", name=label, exact=True)
    box.focus()
    page.keyboard.type(option)
    page.keyboard.press("Enter")
    expect(box).to_have_value(option, timeout=30_000)
    wait_idle(page)


def test_picking_a_and_b_draws_their_marks(page: Page) -> None:
    settle(page)
    pick(page, "A (the reference)", "heading-aware")
    pick(page, "B", "paragraph")
    view = page.locator(".cbx-dv[data-policy='heading-aware ⇄ paragraph']")
    expect(view).to_be_visible(timeout=30_000)
    only_a, only_b, both = (
        view.locator(f".cbx-doc {kind}") for kind in (".cbx-da", ".cbx-db", ".cbx-dab")
    )
    expect(only_b.first).to_be_visible()
    assert only_b.count() > 0 and both.count() > 0
    assert only_a.count() + only_b.count() == view.locator(".cbx-doc [data-at]").count()
    # Each mark is drawn as a badge, coloured by its side.
    colour = only_b.first.evaluate("e => getComputedStyle(e, '::before').backgroundColor")
    assert colour == "rgb(21, 101, 192)"
    label = only_b.first.evaluate("e => getComputedStyle(e, '::before').content")
    assert label == '"B"'
    # The scoreboard's row for the pair.
    expect(page.locator("[data-testid='stTable'] table", has_text="Boundary F1")).to_contain_text(
        "heading-aware ⇄ paragraph"
    )
    # The step goes to the next difference: a mark further down is brought to the top.
    doc = view.locator(".cbx-doc")
    before = doc.evaluate("d => d.scrollTop")
    differences = [
        int(x)
        for x in view.locator(".cbx-doc [data-at]").evaluate_all("m => m.map(e => e.dataset.at)")
    ]
    assert differences == sorted(differences)
    for _ in range(3):
        view.locator(".cbx-step", has_text="next difference").click()
    page.wait_for_timeout(500)
    after = doc.evaluate("d => d.scrollTop")
    reached = view.locator(".cbx-reached").count()
    assert after > before or reached == 1
