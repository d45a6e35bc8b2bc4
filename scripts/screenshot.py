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
from pathlib import Path

from tests.appserver import ROOT, app_page, grow_to_content, settle
from tests.test_browser import SIDEBAR_UPLOAD


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
    with app_page(args.width) as (page, url):
        page.goto(f"{url}/{args.query}")
        settle(page)
        if args.upload:
            page.get_by_text("Upload files", exact=True).click()
            page.wait_for_selector("[data-policy]", state="detached", timeout=30_000)
            page.locator(SIDEBAR_UPLOAD).set_input_files([str(path) for path in args.upload])
            settle(page)
        if args.full:
            grow_to_content(page, args.width)
        clip = (
            dict(zip(("x", "y", "width", "height"), args.clip, strict=True)) if args.clip else None
        )
        page.screenshot(path=str(args.png), full_page=True, clip=clip)  # type: ignore[arg-type]
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
