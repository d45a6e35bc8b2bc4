"""Start the app, open it in headless Chromium, and save a full-page screenshot.

make screenshot      (writes docs/screenshot.png and docs/screenshot-narrow.png, 900 px
                      wide; look at them before you commit them)
scripts/screenshot.py [PNG [QUERY [WIDTH]]] [--full] [--upload FILE ...] [--clip X,Y,W,H]
                      one screenshot of the page at `?QUERY`; --full grows the window to
                      the whole page (Streamlit scrolls inside its own box); --upload
                      drops files into the sidebar's uploader first, as a person would;
                      --clip keeps one rectangle of the page, in CSS pixels
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from tests.appserver import CHROMIUM_ARGS, IDLE, ROOT, chromium_path, running_app

UPLOADER = "[data-testid='stSidebar'] .st-key-upload [data-testid='stFileUploaderDropzoneInput']"


def settle(page: Page) -> None:
    """Wait until the views are drawn and no rerun is pending."""
    page.wait_for_selector("[data-policy]", timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_timeout(1_000)  # a rerun may start just after the first idle
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
    page.wait_for_selector("[data-testid='stSkeleton']", state="detached")
    page.wait_for_selector("[data-stale='true']", state="detached")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("png", nargs="?", type=Path, default=ROOT / "docs" / "screenshot.png")
    parser.add_argument("query", nargs="?", default="")
    parser.add_argument("width", nargs="?", type=int, default=1680)
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--upload", nargs="+", type=Path, default=[])
    parser.add_argument("--clip", type=lambda raw: [float(n) for n in raw.split(",")])
    args = parser.parse_args(argv)
    args.png.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory() as scratch,
        running_app(Path(scratch) / "app.log") as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 1050})
        page.goto(f"{url}/{args.query}")
        settle(page)
        if args.upload:
            page.get_by_text("Upload a manifest", exact=True).click()
            page.wait_for_selector("[data-policy]", state="detached", timeout=30_000)
            page.locator(UPLOADER).set_input_files([str(path) for path in args.upload])
            settle(page)
        if args.full:
            height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
            page.set_viewport_size({"width": args.width, "height": min(int(height) + 50, 12_000)})
            page.wait_for_timeout(500)
        clip = (
            dict(zip(("x", "y", "width", "height"), args.clip, strict=True)) if args.clip else None
        )
        page.screenshot(path=str(args.png), full_page=True, clip=clip)  # type: ignore[arg-type]
        browser.close()
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
