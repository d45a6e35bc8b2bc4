"""Start the app, open the Retrieval tab on a fixture, pick a question, save a screenshot.

PYTHONPATH=. .venv/bin/python scripts/screenshot_retrieval.py [OUT.png] [WIDTH] [FIXTURE] [QUESTION]
(defaults: docs/screenshot-retrieval.png, 1600, library, warranty-void; look at it
before you commit it)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.appserver import CHROMIUM_ARGS, ROOT, chromium_path, running_app
from tests.test_browser import wait_idle
from tests.test_browser_retrieval import open_retrieval, pick_question


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "screenshot-retrieval.png"
    width = int(argv[1]) if len(argv) > 1 else 1600
    folder = ROOT / "fixtures" / (argv[2] if len(argv) > 2 else "library")
    question = argv[3] if len(argv) > 3 else "warranty-void"
    with (
        tempfile.TemporaryDirectory() as scratch,
        running_app(Path(scratch) / "app.log") as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": 3000})
        page.goto(url)
        wait_idle(page)
        page.wait_for_selector("[data-policy='heading-aware']", timeout=60_000)
        open_retrieval(page, folder)
        pick_question(page, question)
        page.wait_for_timeout(500)
        page.screenshot(path=str(target), full_page=True)
        browser.close()
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
