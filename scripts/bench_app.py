"""Server time of the app's reruns, printed as figures (not a timed test).

    make bench-app    (or: PYTHONPATH=. .venv/bin/python scripts/bench_app.py)

Drives the real `app.py` with Streamlit's AppTest (no browser): the bundled fixture,
then a pasted 1 MiB document, each with several slider moves. Two figures per step:
the wall time of the rerun as AppTest sees it, and the app's own logged server time.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "markdown-docs" / "rust-book"
MIB = 1024 * 1024


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
        at.slider(key="target").set_value(target)
        wall, own = timed_run(at)
        walls.append(wall)
        logged.append(own)
    print(
        f"{name:<34}{len(targets):>6}{statistics.median(walls):>10.3f}{max(walls):>10.3f}"
        f"{statistics.median(logged):>10.3f}{max(logged):>10.3f}"
    )


def main() -> int:
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
    counts = [r["Chunks"] for r in at.table[0].value.to_dict("records")]
    print(
        f"\n1 MiB document: {len(text):,} characters; chunks {counts}; "
        f"{len(views)} views, {drawn:.1f} MB of HTML in all"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
