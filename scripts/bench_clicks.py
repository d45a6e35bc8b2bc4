"""Server time of what one click changes, on 1 MiB of the Rust book with five columns (the
Makefile's FIVE_COLUMNS), in headless Chromium: a chunk click (only the chunk detail runs
again), a span check added, a minimap jump. Printed as figures, not a timed test.

    PYTHONPATH=. .venv/bin/python scripts/bench_clicks.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench_app import one_mebibyte_document
from playwright.sync_api import Page, expect, sync_playwright

from tests.appserver import CHROMIUM_ARGS, IDLE, chromium_path, running_app, settle
from tests.test_browser import SIDEBAR_UPLOAD

FIVE = "?columns=fixed-char:500;paragraph;heading-aware:220;heading-aware:1000&semchunk=300"
PAGE, PART = "Server time for this view:", "Server time for this part:"


def seconds(page: Page, label: str) -> float:
    return float(page.get_by_text(label).inner_text().split(":")[1].split()[0])


def figures(name: str, server: list[float], wall: list[float]) -> None:
    print(
        f"{name:<16} server median {statistics.median(server):.3f} max {max(server):.3f} s; "
        f"until shown median {statistics.median(wall):.3f} s"
    )


def clicks(page: Page) -> None:
    server, wall = [], []
    for order in (3, 5, 7, 9, 11):
        badge = f".cbx-view[data-policy='heading-aware@220'] .cbx-n[data-n='{order}']"
        began = time.perf_counter()
        page.locator(badge).first.click()
        expect(page.locator(".st-key-detail_order input")).to_have_value(str(order))
        wall.append(time.perf_counter() - began)
        page.wait_for_selector(IDLE)
        server.append(seconds(page, PART))
    figures("chunk click", server, wall)


def checks(page: Page) -> None:
    text = page.locator(".cbx-view[data-policy='paragraph'] .cbx-doc").inner_text()
    quotes = [line for line in text.splitlines() if len(line) > 40 and text.count(line) == 1]
    server, wall = [], []
    for n in range(3):
        page.get_by_label("Check name").fill(f"bench-{n}")
        box = page.get_by_role("textbox", name="Span A quote (occurs once in the document)")
        box.fill(quotes[10 + n])
        began = time.perf_counter()
        page.get_by_role("button", name="Add check").click()
        expect(page.get_by_text(f"Added the check bench-{n}")).to_be_visible(timeout=60_000)
        page.wait_for_selector(IDLE)
        wall.append(time.perf_counter() - began)
        server.append(seconds(page, PAGE))
    figures("check added", server, wall)


def jumps(page: Page) -> None:
    server, wall = [], []
    for fraction in (0.3, 0.6, 0.9):
        strip = page.locator(".cbx-view[data-policy='paragraph'] .cbx-map").first
        box = strip.bounding_box()
        assert box is not None
        began = time.perf_counter()
        strip.click(position={"x": box["width"] / 2, "y": box["height"] * fraction})
        page.wait_for_timeout(300)  # a rerun starts, if the jump needs one
        page.wait_for_selector(IDLE)
        wall.append(time.perf_counter() - began)
        server.append(seconds(page, PAGE))
    figures("minimap jump", server, wall)


def main() -> None:
    with (
        tempfile.TemporaryDirectory() as scratch,
        running_app(Path(scratch) / "app.log") as url,
        sync_playwright() as driver,
    ):
        document = Path(scratch) / "one-mebibyte.md"
        document.write_text(one_mebibyte_document(), "utf-8")
        browser = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1680, "height": 1050})
        page.set_default_timeout(60_000)
        page.goto(f"{url}/{FIVE}")
        settle(page)
        page.get_by_text("Upload files", exact=True).click()
        page.wait_for_selector("[data-policy]", state="detached")
        page.locator(SIDEBAR_UPLOAD).set_input_files(str(document))
        settle(page)
        print(f"{page.locator('.cbx-view').count()} views, the page ran in {seconds(page, PAGE)} s")
        clicks(page)
        checks(page)
        jumps(page)
        browser.close()


if __name__ == "__main__":
    main()
