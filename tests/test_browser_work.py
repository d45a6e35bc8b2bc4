"""Real Chromium: a person adds a span check and a question, adds a file, finds both still
there, and downloads them as files the command line reads."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from explorer.retrieval.questions import parse_questions
from tests.conftest import run_module
from tests.test_browser import (
    HEADING_AWARE,
    SIDEBAR_UPLOAD,
    app_url,
    browser,
    choose_source,
    page,
    wait_idle,
)

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

ALPHA = "# Alpha\n\nThe key rotates every 30 days.\n\nOnly after the new key is deployed.\n"
BETA = "# Beta\n\nRefunds are possible within 14 days.\n"


def download(page: Page, label: str, target: Path) -> Path:
    button = page.locator("[data-testid='stDownloadButton'] button >> visible=true", has_text=label)
    expect(button).to_be_enabled()
    expect(page.locator("[data-stale='true']")).to_have_count(0, timeout=30_000)
    wait_idle(page)
    with page.expect_download() as info:
        button.click()
    info.value.save_as(target)
    return target


def test_a_check_and_a_question_outlive_a_new_file_and_download(page: Page, tmp_path: Path) -> None:
    alpha, beta = tmp_path / "alpha.md", tmp_path / "beta.md"
    alpha.write_text(ALPHA)
    beta.write_text(BETA)
    choose_source(page, "Upload files", SIDEBAR_UPLOAD)
    page.locator(SIDEBAR_UPLOAD).set_input_files([str(alpha)])
    expect(page.locator(HEADING_AWARE)).to_contain_text("rotates every", timeout=30_000)
    wait_idle(page)

    page.get_by_label("Check name").fill("rotation")
    page.get_by_role("textbox", name="Span A quote (occurs once in the document)").fill(
        "every 30 days"
    )
    page.get_by_role("textbox", name="Span B quote (occurs once in the document)").fill(
        "Only after"
    )
    page.get_by_role("button", name="Add check").click()
    matrix = page.locator(".cbx-matrix")
    expect(matrix).to_contain_text("rotation", timeout=30_000)
    wait_idle(page)

    page.get_by_role("tab", name="Retrieval").click()
    page.get_by_label("Question", exact=True).fill("How often does the key rotate?")
    page.get_by_role("textbox", name="Answer: quote it from the document").fill("every 30 days")
    page.get_by_role("button", name="Add question").click()
    expect(page.get_by_text("Retrieval scoreboard")).to_be_visible(timeout=60_000)
    wait_idle(page)

    page.locator(SIDEBAR_UPLOAD).set_input_files([str(beta)])  # added beside alpha.md
    expect(page.get_by_text("so one was built: 2 documents")).to_be_visible(timeout=30_000)
    wait_idle(page)
    expect(page.get_by_text("Retrieval scoreboard")).to_be_visible(timeout=60_000)
    saved_questions = download(page, "Download these questions (1)", tmp_path / "questions.json")
    questions = parse_questions(saved_questions.read_bytes())
    assert [q.question for q in questions.questions] == ["How often does the key rotate?"]

    page.get_by_role("tab", name="Explore boundaries").click()
    expect(matrix).to_contain_text("rotation")
    saved = download(page, "Download the manifest with these checks", tmp_path / "manifest.json")
    manifest = json.loads(saved.read_text())
    assert [d["source_id"] for d in manifest["documents"]] == ["alpha", "beta"]
    assert [c["id"] for c in manifest["span_checks"]] == ["rotation"]
    compared = run_module("compare", saved)
    assert compared.returncode == 0, compared.stderr
    assert "rotation" in compared.stdout
    measured = run_module("evaluate", saved, "--questions", saved_questions)
    assert measured.returncode == 0, measured.stderr


def test_a_plain_drop_without_a_heading_opens_under_markdown(page: Page, tmp_path: Path) -> None:
    speech = tmp_path / "speech.txt"
    speech.write_text("Friends, we gather here today.\n\nWe will not rest until it is done.\n")
    choose_source(page, "Upload files", SIDEBAR_UPLOAD)
    page.locator(SIDEBAR_UPLOAD).set_input_files([str(speech)])
    expect(page.locator(HEADING_AWARE)).to_contain_text("we gather here", timeout=30_000)
    expect(page.get_by_text("Opened under the")).to_contain_text("speech does not start")
    expect(page.get_by_role("radio", name="markdown: CommonMark blocks")).to_be_checked()
    wait_idle(page)
    page.get_by_text("v1: '#' headings, blank lines").click()  # back to v1: refused
    switch = page.get_by_role("button", name="Read it under the markdown grammar")
    expect(switch).to_be_visible(timeout=30_000)
    wait_idle(page)
    switch.click()
    expect(page.locator(HEADING_AWARE)).to_contain_text("we gather here", timeout=30_000)
    expect(switch).to_have_count(0)
