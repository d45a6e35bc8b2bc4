"""Start the app on fixtures/markdown-docs with heading-aware 220 (markdown grammar) and
langchain-recursive 800, open a document, and save a screenshot of *Diff two columns*:
the pickers, the diff view and the questions that flip (the window is WIDTH wide; the
picture keeps the main column, without the sidebar).

PYTHONPATH=. .venv/bin/python scripts/screenshot_diff.py [OUT.png] [WIDTH] [DOCUMENT]
(defaults: docs/screenshot-diff.png, 1680, rust-book/ch08-02-strings; look at it before
you commit it)
"""

from __future__ import annotations

import sys
import tempfile
import zipfile
from pathlib import Path

from PIL import Image

from tests.appserver import ROOT, app_page, settle
from tests.test_browser import SIDEBAR_UPLOAD, wait_idle

QUERY = "?columns=heading-aware:220&langchain-recursive=800&grammar=markdown"


def fixture_zip(folder: Path, target: Path) -> Path:
    """The fixture's manifest and documents in one .zip, as a person would drop them."""
    with zipfile.ZipFile(target, "w") as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in (".md", ".json") and path.name != "questions.json":
                bundle.write(path, path.relative_to(folder).as_posix())
    return target


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else ROOT / "docs" / "screenshot-diff.png"
    width = int(argv[1]) if len(argv) > 1 else 1680
    document = argv[2] if len(argv) > 2 else "rust-book/ch08-02-strings"
    with tempfile.TemporaryDirectory() as scratch, app_page(width, 1400) as (page, url):
        bundle = fixture_zip(ROOT / "fixtures" / "markdown-docs", Path(scratch) / "docs.zip")
        page.goto(f"{url}/{QUERY}")
        settle(page)
        page.get_by_text("Upload files", exact=True).click()
        page.wait_for_selector("[data-policy]", state="detached", timeout=30_000)
        page.locator(SIDEBAR_UPLOAD).set_input_files([str(bundle)])
        settle(page)
        chosen = page.get_by_role("combobox", name="Document (20 documents loaded)", exact=True)
        chosen.focus()
        page.keyboard.type(document)
        page.keyboard.press("Enter")
        wait_idle(page)
        view = page.locator(".cbx-dv")
        view.wait_for(state="visible", timeout=60_000)
        # The section's top (pickers and the view), then the questions that flip, one
        # under the other: Streamlit scrolls inside its own box, so each is shot in view.
        shots: list[Image.Image] = []
        for part, lead in (
            (page.get_by_role("heading", name="Diff two columns"), 10),
            (page.locator("table.cbx-flips").locator("xpath=../.."), 40),
        ):
            part.scroll_into_view_if_needed()
            page.evaluate(
                "([top]) => document.querySelector('[data-testid=stMain]').scrollBy(0, top)",
                [part.bounding_box()["y"] - lead],  # type: ignore[index]
            )
            page.wait_for_timeout(800)
            box = part.bounding_box()
            assert box is not None
            height = min(box["height"] + 2 * lead, 1400 - box["y"] + lead) if lead == 40 else 1000
            file = Path(scratch) / f"part{len(shots)}.png"
            left = max(box["x"] - 30, 0)  # the main column, not the sidebar
            clip = {
                "x": left,
                "y": max(box["y"] - lead, 0),
                "width": width - left,
                "height": height,
            }
            page.screenshot(path=str(file), clip=clip)  # type: ignore[arg-type]
            shots.append(Image.open(file))
        wide = max(shot.width for shot in shots)
        whole = Image.new("RGB", (wide, sum(shot.height for shot in shots)), "white")
        at = 0
        for shot in shots:
            whole.paste(shot, (0, at))
            at += shot.height
        whole.save(target)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
