"""Real Chromium and a real server: while an operator's endpoint is slow to answer a
visitor's embedding, the server keeps answering `/_stcore/health` (the request runs in
that session's script thread)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.appserver import Health, app_process
from tests.test_browser import HEADING_AWARE, browser, wait_idle
from tests.test_browser_retrieval import open_retrieval
from tests.test_endpoint import embeddings

__all__ = ["browser"]  # the fixture, shared with test_browser

SLOW_SECONDS = 4.0


@pytest.fixture
def slow_server() -> Iterator[tuple[HTTPServer, threading.Event]]:
    """An embeddings endpoint that takes `SLOW_SECONDS` to answer; the event is set when
    a request arrives."""
    arrived = threading.Event()

    def slow(request: Request) -> Response:
        arrived.set()
        time.sleep(SLOW_SECONDS)
        return embeddings(request)

    stub = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    stub.expect_request("/v1/embeddings").respond_with_handler(slow)
    stub.start()
    yield stub, arrived
    stub.clear()
    stub.stop()


def test_health_answers_while_an_endpoint_is_slow(
    browser: Browser,
    slow_server: tuple[HTTPServer, threading.Event],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, arrived = slow_server
    monkeypatch.setenv("STUB_API_KEY", "sk-stub-5eCr3t-0123456789abcdef")
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        f'[embedders.slow]\nbase_url = "{server.url_for("/v1")}"\nmodel = "stub-embed"\n'
        'api_key_env = "STUB_API_KEY"\nrequest_seconds = 30\n'
    )
    with app_process(tmp_path / "app.log", options=("--secrets.files", str(secrets))) as (url, _):
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        page = context.new_page()
        page.goto(f"{url}/?embedder=slow")
        expect(page.locator(HEADING_AWARE)).to_be_visible(timeout=90_000)
        wait_idle(page)
        open_retrieval(page)
        expect(page.get_by_text("Embedder")).to_be_visible()
        with Health(url) as health:
            page.locator("[data-testid='stRadio']", has_text="Retriever").get_by_text(
                "embedding", exact=True
            ).click()
            assert arrived.wait(60), "the app never called the endpoint"
            began = len(health.times)
            time.sleep(SLOW_SECONDS - 1)  # the endpoint is still thinking
            during = health.times[began:]
        expect(page.get_by_text("Retrieval scoreboard")).to_be_visible(timeout=60_000)
        context.close()
    assert health.failures == []
    assert len(during) >= 10  # asked every 0.1 s, each answered
    assert max(during) < 1.0
