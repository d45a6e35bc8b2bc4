"""Start the app, open the Retrieval tab on a fixture, pick a question, sweep heading-aware's
size, and save a screenshot.

PYTHONPATH=. .venv/bin/python scripts/screenshot_retrieval.py [OUT.png] [WIDTH] [FIXTURE] [QUESTION]
(defaults: docs/screenshot-retrieval.png, 1600, markdown-docs, borrow-scope-ends; look at
it before you commit it)
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.appserver import ROOT, app_page, grow_to_content, settle
from tests.test_browser import wait_idle
from tests.test_browser_retrieval import open_retrieval, pick_question


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "screenshot-retrieval.png"
    width = int(argv[1]) if len(argv) > 1 else 1600
    folder = ROOT / "fixtures" / (argv[2] if len(argv) > 2 else "markdown-docs")
    question = argv[3] if len(argv) > 3 else "borrow-scope-ends"
    with app_page(width, 3000) as (page, url):
        page.goto(url)
        settle(page)
        open_retrieval(page, folder)
        pick_question(page, question)
        page.locator(".st-key-sweep_policy").click()
        page.keyboard.type("heading-aware")
        page.get_by_role("option", name="heading-aware").click()
        wait_idle(page)
        for label, value in (("From", "20"), ("To", "400"), ("Step", "20")):
            page.get_by_label(label, exact=True).fill(value)
            page.get_by_label(label, exact=True).press("Enter")
            wait_idle(page)
        page.get_by_role("button", name="Run the sweep").click()
        chart = page.locator("[data-testid='stVegaLiteChart']").last  # the tab's, not the sizes'
        chart.wait_for(state="visible", timeout=60_000)
        wait_idle(page)
        page.wait_for_timeout(1000)
        grow_to_content(page, width)
        page.screenshot(path=str(target), full_page=True)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
