"""Start the app on 1 MiB of real Markdown (scripts/bench_app.py's document), show a
semantic column beside heading-aware at equal size, turn to a page of prose, scroll the
views, hover a breakpoint of the curve, and save a screenshot of the views.

PYTHONPATH=. .venv/bin/python scripts/screenshot_curve.py [OUT.png] [PAGE]
(defaults: docs/screenshot-semantic.png, page 12; look at it before you commit it)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bench_app import one_mebibyte_document

from tests.appserver import ROOT, app_page, settle
from tests.test_browser import SIDEBAR_UPLOAD

QUERY = "?grammar=markdown&columns=semantic:1000;heading-aware:1000&semantic.p=90"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "screenshot-semantic.png"
    page_number = argv[1] if len(argv) > 1 else "12"
    with tempfile.TemporaryDirectory() as folder, app_page(1680, 1200) as (page, url):
        document = Path(folder) / "one-mebibyte.md"
        document.write_text(one_mebibyte_document(), encoding="utf-8")
        page.goto(f"{url}/{QUERY}")
        settle(page)
        page.get_by_text("Upload files", exact=True).click()
        page.wait_for_selector("[data-policy]", state="detached", timeout=30_000)
        page.locator(SIDEBAR_UPLOAD).set_input_files([str(document)])
        settle(page)
        picker = page.locator(".st-key-page input")
        picker.fill(page_number)
        picker.press("Enter")
        settle(page)
        view = page.locator('.cbx-view[data-policy="semantic"]')
        view.scroll_into_view_if_needed()
        view.locator(".cbx-doc").evaluate("doc => { doc.scrollTop = 900; }")
        page.wait_for_timeout(800)
        mark = page.locator(".cbx-curve .cbx-cb").first
        top = view.locator(".cbx-doc").bounding_box()
        assert top is not None
        for candidate in page.locator(".cbx-curve .cbx-cb").all():
            box = candidate.bounding_box()
            if box and top["y"] + 40 < box["y"] < top["y"] + top["height"] - 40:
                mark = candidate
                break
        mark.hover()
        page.wait_for_timeout(1_500)
        head = view.bounding_box()
        assert head is not None
        page.screenshot(
            path=str(target),
            clip={"x": head["x"] - 10, "y": head["y"] - 10, "width": 1030, "height": 900},
        )
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
