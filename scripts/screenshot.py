"""Start the app, open it in headless Chromium, and save a full-page screenshot.

make screenshot      (writes docs/screenshot.png and docs/screenshot-narrow.png, 900 px
                      wide; look at them before you commit them)
scripts/screenshot.py [PNG [QUERY [WIDTH [full]]]]   one screenshot; `full` grows the
                      window to the whole page (Streamlit scrolls inside its own box)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.appserver import CHROMIUM_ARGS, IDLE, ROOT, chromium_path, running_app


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "screenshot.png"
    query = argv[1] if len(argv) > 1 else ""
    width = int(argv[2]) if len(argv) > 2 else 1680
    full = len(argv) > 3 and argv[3] == "full"
    target.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as scratch,
        running_app(Path(scratch) / "app.log") as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 1050})
        page.goto(f"{url}/{query}")
        page.wait_for_selector("[data-policy='heading-aware']", timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        page.wait_for_timeout(1_000)  # a rerun may start just after the first idle
        page.wait_for_selector(IDLE, timeout=60_000)
        page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
        page.wait_for_selector("[data-testid='stSkeleton']", state="detached")
        if full:
            height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
            page.set_viewport_size({"width": width, "height": min(int(height) + 50, 12_000)})
            page.wait_for_timeout(500)
        page.screenshot(path=str(target), full_page=True)
        browser.close()
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
