"""Start the real app on a free loopback port (for browser tests and screenshots)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
IDLE = (
    '[data-testid="stApp"][data-test-script-state="notRunning"]'
    '[data-test-connection-state="CONNECTED"]'
)
# The columns' views: the diff view under them (`cbx-dv`) is a view of two columns.
COLUMN_VIEWS = ".cbx-view[data-policy]:not(.cbx-dv)"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
]


def chromium_path() -> str:
    for candidate in ("/usr/lib/chromium/chromium", "/usr/bin/chromium"):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("chromium")
    if found is None:
        raise RuntimeError("Debian's chromium is not installed: run `make test`, which installs it")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def running_app(log: Path, timeout: float = 60.0) -> Iterator[str]:
    """Yield the base URL of `streamlit run app.py`; stop it afterwards. Its persistent
    index lives beside the log, never in the working tree."""
    with app_process(log, timeout) as (url, _):
        yield url


@contextlib.contextmanager
def app_process(
    log: Path, timeout: float = 60.0, options: Sequence[str] = ()
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`running_app`, with the server process (to measure it); `options` are more of
    streamlit's (e.g. `--secrets.files PATH`)."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
        *options,
    ]
    with log.open("wb") as output:
        environment = {**os.environ, "EXPLORER_DB": str(log.parent / "index.db")}
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, env=environment
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the app exited early:\n{log.read_text()}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                        if reply.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the app did not become healthy:\n{log.read_text()}")
                time.sleep(0.2)
            yield url, process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


# -- a browser page on it, for scripts that take screenshots ---------------------------------


def settle(page: Page) -> None:
    """Wait until the views are drawn and no rerun is pending."""
    page.wait_for_selector("[data-policy]", timeout=60_000)
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_timeout(1_000)  # a rerun may start just after the first idle
    page.wait_for_selector(IDLE, timeout=60_000)
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached")
    page.wait_for_selector("[data-testid='stSkeleton']", state="detached")
    page.wait_for_selector("[data-stale='true']", state="detached")


@contextlib.contextmanager
def app_page(width: int, height: int = 1050) -> Iterator[tuple[Page, str]]:
    """The app served from this checkout, and a headless Chromium page on it."""
    with (
        tempfile.TemporaryDirectory() as scratch,
        running_app(Path(scratch) / "app.log") as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser.new_page(viewport={"width": width, "height": height}), url
        browser.close()


def grow_to_content(page: Page, width: int) -> None:
    """The page scrolls inside its main block: grow the window to the block's height."""
    height = page.evaluate("document.querySelector('[data-testid=stMain]').scrollHeight")
    page.set_viewport_size({"width": width, "height": min(int(height) + 50, 12_000)})
    page.wait_for_timeout(500)


# -- the server's health while a session works -------------------------------------------


class Health:
    """Asks `/_stcore/health` every 0.1 s from a thread; records each answer's time, or
    that one did not come."""

    def __init__(self, url: str) -> None:
        self.url = f"{url}/_stcore/health"
        self.times: list[float] = []
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                with urllib.request.urlopen(self.url, timeout=5) as reply:
                    reply.read()
            except OSError as error:
                self.failures.append(repr(error))
            self.times.append(time.monotonic() - began)
            time.sleep(0.1)

    def __enter__(self) -> Health:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def stay_idle(page: Page, quiet_ms: int = 1_000) -> None:
    """Wait until the page has been idle for `quiet_ms`: a click that reruns the page (a
    kept-open panel, a tab) may start its run after an idle check has passed, and a list
    opened meanwhile is drawn again, losing what was typed into it."""
    for _ in range(30):
        page.wait_for_selector(IDLE, timeout=30_000)
        page.wait_for_timeout(quiet_ms)
        if page.locator(IDLE).count() and not page.get_by_test_id("stStatusWidget").count():
            return
    raise AssertionError(f"the page did not stay idle for {quiet_ms} ms")
