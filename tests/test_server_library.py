"""Issue #23, item 1, against the real server: the link whose regex separator never ends
leaves the server answering `/_stcore/health` within 1 s, because the app never runs
it (a regex holding the GIL cannot be stopped by a thread)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, expect

from tests.appserver import Health, running_app
from tests.test_browser import browser, wait_idle
from tests.test_library_bounds import LINK

__all__ = ["browser"]  # the browser fixture, shared with tests/test_browser.py


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_app(tmp_path_factory.mktemp("app") / "app.log") as url:
        yield url


def test_the_regex_link_leaves_the_server_healthy(browser: Browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    try:
        with Health(app_url) as health:
            page.goto(f"{app_url}/?{urlencode(LINK)}")
            note = page.get_by_text("makes the library run regular expressions")
            expect(note).to_be_visible(timeout=30_000)
            wait_idle(page)
            expect(page.locator("[data-policy='heading-aware']")).to_be_visible()
            time.sleep(1)  # a few more answers after the page is drawn
        assert not health.failures
        assert len(health.times) >= 5
        assert max(health.times) < 1.0, health.times
        assert page.locator("[data-policy='langchain-recursive']").count() == 0
    finally:
        context.close()
