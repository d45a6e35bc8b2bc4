"""Server time of the app's reruns, and the server's peak memory on the worst uploads
the limits allow, printed as figures (not a timed test).

    make bench-app    (or: PYTHONPATH=. .venv/bin/python scripts/bench_app.py [--memory])

First the real `app.py` under Streamlit's AppTest (no browser): the bundled fixture,
then a pasted 1 MiB document, each with several slider moves. Two figures per step:
the wall time of the rerun as AppTest sees it, and the app's own logged server time.

Then what a person waits for on 1 MiB in a real browser (`streamlit run` and headless
Chromium): from dropping the file to every view drawn and the page idle, and from a step
of a size slider (one arrow key) to the page idle again; the goals are 3 s and 2 s.

Then (alone with `--memory`) a real `streamlit run` server, driven by headless Chromium
through the largest uploads the limits let in: its resident memory now and at its peak
(VmRSS and VmHWM of the server process) after each.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright
from streamlit.testing.v1 import AppTest

from explorer.sources.uploads import MAX_TOTAL_BYTES
from explorer.view.render import MAX_DRAWN_PIECES
from tests.appserver import CHROMIUM_ARGS, IDLE, app_process, chromium_path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "markdown-docs" / "rust-book"
MIB = 1024 * 1024
# The manifest's uploader (the sidebar also holds the chunk files' uploader).
UPLOAD = "[data-testid='stSidebar'] .st-key-upload [data-testid='stFileUploaderDropzoneInput']"


def logged_seconds(at: AppTest) -> float:
    for caption in at.caption:
        if caption.value.startswith("Server time for this view:"):
            return float(caption.value.split(":")[1].split()[0])
    raise RuntimeError("the app logged no server time")


def timed_run(at: AppTest) -> tuple[float, float]:
    began = time.perf_counter()
    at.run()
    wall = time.perf_counter() - began
    if at.exception:
        raise RuntimeError(at.exception[0].message)
    return wall, logged_seconds(at)


def one_mebibyte_document() -> str:
    """A heading, then real Markdown (the Rust book, if beside us) to 1 MiB of UTF-8."""
    body = "\n".join(p.read_text("utf-8") for p in sorted(CORPUS.rglob("*.md")))
    if not body.strip():
        paragraph = "A paragraph of ordinary prose for the benchmark. " * 8
        body = "## Section\n\n" + (paragraph + "\n\n") * 50
    text = "# One mebibyte\n\n"
    while len(text.encode()) < MIB:
        text += body
    return text.encode()[:MIB].decode("utf-8", errors="ignore")


def report(name: str, at: AppTest, targets: list[int]) -> None:
    walls, logged = [], []
    for target in targets:
        at.slider(key="heading-aware").set_value(target)
        wall, own = timed_run(at)
        walls.append(wall)
        logged.append(own)
    print(
        f"{name:<34}{len(targets):>6}{statistics.median(walls):>10.3f}{max(walls):>10.3f}"
        f"{statistics.median(logged):>10.3f}{max(logged):>10.3f}"
    )


# -- what a person waits for, in a browser ------------------------------------------------

DROPS, STEPS = 3, 6
BUSY = "[data-testid='stApp'][data-test-script-state='running']"


def _idle(page: Page, since: float) -> float:
    """Seconds from `since` until the page is idle again after a rerun started."""
    page.wait_for_selector(IDLE, timeout=300_000)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=300_000)
    page.wait_for_selector("[data-stale='true']", state="detached", timeout=300_000)
    return time.perf_counter() - since


def browser_timings() -> None:
    """A 1 MiB Markdown file dropped into the real app (three times, each a fresh page),
    then single steps of the heading-aware size slider: the seconds each takes until
    every view is drawn and the page is idle."""
    print(f"\n{'in Chromium, 1 MiB':<34}{'runs':>6}{'median':>10}{'max':>10}  goal")
    with tempfile.TemporaryDirectory() as scratch:
        document = Path(scratch) / "one-mebibyte.md"
        document.write_text(one_mebibyte_document(), "utf-8")
        with app_process(Path(scratch) / "app.log") as (url, _), sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            drops: list[float] = []
            steps: list[float] = []
            for _ in range(DROPS):
                page = browser.new_page(viewport={"width": 1680, "height": 1050})
                page.goto(url)
                page.wait_for_selector("[data-policy]", timeout=300_000)
                _idle(page, 0)
                page.get_by_text("Upload files", exact=True).click()
                page.wait_for_selector("[data-policy]", state="detached", timeout=300_000)
                _idle(page, 0)
                began = time.perf_counter()
                page.locator(UPLOAD).first.set_input_files(str(document))
                page.wait_for_selector(BUSY, timeout=300_000)
                page.wait_for_selector(".cbx-view[data-doc='one-mebibyte']", timeout=300_000)
                drops.append(_idle(page, began))
                slider = page.get_by_role("slider", name="heading-aware max_chars")
                for _ in range(STEPS // DROPS):
                    slider.focus()
                    began = time.perf_counter()
                    page.keyboard.press("ArrowRight")
                    page.wait_for_selector(BUSY, timeout=300_000)
                    steps.append(_idle(page, began))
                page.close()
            browser.close()
    for name, seconds, goal in (("drop to idle", drops, 3), ("slider step to idle", steps, 2)):
        print(
            f"{name:<34}{len(seconds):>6}{statistics.median(seconds):>10.3f}"
            f"{max(seconds):>10.3f}  {goal} s"
        )


# -- the server's memory ----------------------------------------------------------------


def memory_mb(pid: int) -> tuple[float, float]:
    """(resident now, resident at its peak) of a process, in MB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


def manifest_zip(folder: Path, name: str, documents: dict[str, bytes]) -> Path:
    """A stored (uncompressed) .zip of a manifest and its documents."""
    entries = [
        {
            "source_id": Path(path).stem,
            "version": "1",
            "path": path,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        for path, data in documents.items()
    ]
    target = folder / name
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("manifest.json", json.dumps({"manifest_version": 1, "documents": entries}))
        for path, data in documents.items():
            archive.writestr(path, data)
    return target


def paragraphs_of(length: int) -> bytes:
    """1 MiB: a heading, then paragraphs of `length` characters."""
    text = "# Paragraphs\n\n" + ("p" * length + "\n\n") * (MIB // (length + 2))
    return text.encode()[:MIB]


def uploads(folder: Path) -> list[tuple[str, Path, str]]:
    """(step, .zip, link query): the worst inputs the limits let in."""
    prose = one_mebibyte_document().encode()
    count = (MAX_TOTAL_BYTES - MIB) // MIB - 2  # 1 MiB documents that fit an upload
    largest = {f"docs/d{n:02}.md": prose for n in range(count)}
    # Paragraphs just long enough that each policy's view stays within the drawing limit.
    length = -(-MIB // MAX_DRAWN_PIECES)
    tiny, views = paragraphs_of(1), paragraphs_of(length)
    quarter = prose[: MIB // 4].decode("utf-8", errors="ignore")
    sessions = [  # the four 256 KiB uploads, each in its own (then closed) session
        (
            f"256 KiB upload, session {n + 1} of 4",
            manifest_zip(folder, f"q{n}.zip", {"q.md": f"{quarter}\n\nSession {n}.\n".encode()}),
            "",
        )
        for n in range(4)
    ]
    return [
        *sessions,
        (f"largest .zip: {count} x 1 MiB", manifest_zip(folder, "big.zip", largest), ""),
        ("1 MiB of 1-char paragraphs", manifest_zip(folder, "tiny.zip", {"t.md": tiny}), ""),
        ("1 MiB prose, fixed=22", manifest_zip(folder, "prose.zip", {"p.md": prose}), "?fixed=22"),
        (
            f"1 MiB, views of {MIB // (length + 2):,} chunks",
            manifest_zip(folder, "views.zip", {"v.md": views}),
            f"?fixed={length}&target={length}",
        ),
    ]


def outcome(page: Page) -> str:
    """How many views were drawn or refused, and the first refusal's code."""
    alerts = page.locator("[data-testid='stAlert']").all_inner_texts()
    drawn = page.locator(".cbx-doc").count()
    limited = page.locator(".cbx-limit").count()
    codes = [a.split(":", 1)[0] for a in alerts if "_" in a.split(":", 1)[0]]
    return f"{drawn} drawn, {limited} not drawn" + (f"; refused: {codes[0]}" if codes else "")


def run_upload(browser: Browser, url: str, archive: Path) -> tuple[float, str]:
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url)
    page.wait_for_selector(IDLE, timeout=60_000)
    began = time.perf_counter()
    page.get_by_text("Upload files", exact=True).click()
    page.locator(UPLOAD).wait_for(state="attached", timeout=60_000)
    page.locator(UPLOAD).set_input_files(str(archive))
    page.wait_for_timeout(1500)
    page.wait_for_selector(IDLE, timeout=900_000)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=900_000)
    seconds = time.perf_counter() - began
    result = outcome(page)
    if result.startswith("0 drawn, 0 not drawn") and "refused" not in result:
        raise SystemExit(f"{archive.name}: the upload drew nothing and was not refused")
    page.close()
    return seconds, result


def server_memory() -> None:
    heading = "server memory (real streamlit run)"
    print(f"\n{heading:<36}{'seconds':>8}{'RSS MB':>9}{'peak MB':>9}  shown")
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        folder = Path(scratch)
        steps = uploads(folder)
        with app_process(folder / "app.log") as (url, process):
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS
            )
            page = browser.new_page()
            page.goto(url)
            page.wait_for_selector("[data-policy='heading-aware']", timeout=60_000)
            page.close()
            now, peak = memory_mb(process.pid)
            print(f"{'fixture (baseline)':<36}{'':>8}{now:>9.0f}{peak:>9.0f}")
            for step, archive, query in steps:
                seconds, result = run_upload(browser, url + "/" + query, archive)
                now, peak = memory_mb(process.pid)
                print(f"{step:<36}{seconds:>8.1f}{now:>9.0f}{peak:>9.0f}  {result}")
            browser.close()
            time.sleep(5)
            now, peak = memory_mb(process.pid)
            print(f"{'all sessions closed':<36}{'':>8}{now:>9.0f}{peak:>9.0f}")


def main() -> int:
    if "--memory" in sys.argv[1:]:
        server_memory()
        return 0
    if "--browser" in sys.argv[1:]:
        browser_timings()
        return 0
    print(f"{'step':<34}{'runs':>6}{'wall med':>10}{'wall max':>10}{'app med':>10}{'app max':>10}")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    wall, own = timed_run(at)
    print(f"{'fixture: first load':<34}{1:>6}{wall:>10.3f}{wall:>10.3f}{own:>10.3f}{own:>10.3f}")
    report("fixture: slider moves", at, [240, 260, 300, 400, 600, 900, 1500, 2000])
    report("fixture: back to seen targets", at, [240, 260, 300, 400])

    text = one_mebibyte_document()
    at.radio(key="source").set_value("Paste text")
    at.run()
    at.text_area(key="paste").set_value(text)
    wall, own = timed_run(at)
    views = [h.value for h in at.html if "data-policy=" in h.value]
    drawn = sum(len(v) for v in views) / 1e6
    print(f"{'1 MiB: first load':<34}{1:>6}{wall:>10.3f}{wall:>10.3f}{own:>10.3f}{own:>10.3f}")
    report("1 MiB: slider moves", at, [300, 500, 800, 1200])
    [scoreboard] = [t for t in at.table if "Checks kept" in t.value.columns]
    rows = scoreboard.value.to_dict("records")  # as Markdown cells
    counts = [r["Chunks"].replace("\\", "") for r in rows]
    print(
        f"\n1 MiB document: {len(text):,} characters; chunks {counts}; "
        f"{len(views)} views, {drawn:.1f} MB of HTML in all"
    )
    browser_timings()
    server_memory()
    return 0


if __name__ == "__main__":
    sys.exit(main())
