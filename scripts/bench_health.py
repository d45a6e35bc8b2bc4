"""How long the server takes to answer `/_stcore/health` while one session chunks a large
upload with every library column: printed as figures (not a timed test).

    PYTHONPATH=. .venv/bin/python scripts/bench_health.py [KIB] [SIZE]

A real `streamlit run` server, driven by headless Chromium: a link that picks every
library column at SIZE characters (default 500), then the upload of one Markdown file
of KIB KiB (default 1,024, the app's limit) of accented text and emoji, while a thread
asks for the server's health every 0.1 s (tests/appserver.py, `Health`).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from explorer.chunking.policies import LIBRARY_POLICIES
from tests.appserver import CHROMIUM_ARGS, IDLE, Health, app_process, chromium_path

PARAGRAPH = "Refunds are issued within ten days. Déjà vu 😀 naïve façade.\n\n"
UPLOAD = ".st-key-upload [data-testid=stFileUploaderDropzoneInput]"


def main(kib: int, size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        document = Path(folder) / "big.md"
        text = "# Big\n\n" + PARAGRAPH * (kib * 1024 // len(PARAGRAPH.encode()))
        document.write_text(text, encoding="utf-8")
        link = urlencode({name: str(size) for name in LIBRARY_POLICIES})
        with app_process(Path(folder) / "app.log") as (url, _), sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS
            )
            page = browser.new_page()
            page.goto(f"{url}/?{link}")
            page.wait_for_selector(IDLE, timeout=120_000)
            page.get_by_text("Upload a manifest").click()
            page.wait_for_selector(IDLE, timeout=120_000)
            with Health(url) as health:
                began = time.monotonic()
                page.locator(UPLOAD).set_input_files(str(document))
                page.wait_for_timeout(2_000)
                page.wait_for_selector(IDLE, timeout=900_000)
                page.wait_for_selector(
                    "[data-testid='stStatusWidget']", state="detached", timeout=900_000
                )
                worked = time.monotonic() - began
            browser.close()
    times = sorted(health.times)
    print(
        f"{len(text.encode()) / 1024:,.0f} KiB, {len(LIBRARY_POLICIES)} library columns at "
        f"{size} + ours: the session worked {worked:.1f} s; {len(times)} health answers, "
        f"{len(health.failures)} missing, median {statistics.median(times) * 1000:.0f} ms, "
        f"max {times[-1] * 1000:.0f} ms"
    )


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:3]]
    main(*arguments) if arguments else main(1024, 500)
