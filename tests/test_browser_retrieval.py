"""Real Chromium on the Retrieval tab: a person picks a question and sees, in every
column, the chunks retrieved for it with their ranks."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.appserver import stay_idle
from tests.conftest import ROOT
from tests.test_browser import SIDEBAR_UPLOAD, app_url, browser, choose_source, page, wait_idle

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

LIBRARY = ROOT / "fixtures" / "library"
COLUMNS = ("fixed-char", "paragraph", "heading-aware")


def fixture_files(folder: Path, manifest: str = "manifest.json") -> list[str]:
    """A fixture's manifest and every file it lists, as a person would pick them."""
    listed = json.loads((folder / manifest).read_bytes())["documents"]
    return [str(folder / manifest), *(str(folder / d["path"]) for d in listed)]


def open_retrieval(page: Page, folder: Path = LIBRARY) -> None:
    """Upload a fixture's documents and open the Retrieval tab at its scoreboard."""
    choose_source(page, "Upload files", SIDEBAR_UPLOAD)
    page.locator(SIDEBAR_UPLOAD).set_input_files(fixture_files(folder))
    tab = page.get_by_role("tab", name="Retrieval")
    expect(tab).to_be_visible(timeout=30_000)
    wait_idle(page)
    tab.click()
    expect(page.get_by_text("Retrieval scoreboard")).to_be_visible(timeout=60_000)
    wait_idle(page)


def pick_question(page: Page, question_id: str) -> None:
    page.locator("[data-testid='stSelectbox']", has_text="Question").first.click()
    page.keyboard.type(question_id)  # the list is virtual: filter it to the one wanted
    page.get_by_role("option", name=question_id).first.click()
    expect(page.locator(".cbx-ranked").first).to_be_visible()
    wait_idle(page)


def test_picking_a_question_shows_its_ranked_hits_in_every_column(page: Page) -> None:
    open_retrieval(page)
    pick_question(page, "warranty-void")
    expect(
        page.get_by_text("Is the warranty still valid after I opened the device?")
    ).to_be_visible()
    for name in COLUMNS:
        view = page.locator(f"[data-ranked='{name}']")
        expect(view).to_be_visible()
        # The header lists the top 5 by rank, and the view marks those in this document.
        ranks = view.locator(".cbx-hits .cbx-r")
        expect(ranks).to_have_count(5)
        assert [ranks.nth(i).get_attribute("data-r") for i in range(5)] == [
            f"#{n}" for n in range(1, 6)
        ]
        badges = view.locator(".cbx-doc .cbx-r")
        assert badges.count() >= 1
        assert view.locator(".cbx-doc .cbx-hit").count() >= 1
        # The answer is outlined, and the view's text is still the document's.
        expect(view.locator(".cbx-doc .cbx-in").first).to_be_visible()
        expect(view.locator(".cbx-doc")).to_contain_text("The warranty is void if the device")
    # heading-aware holds both references in its best chunk: the rank badge #1 is drawn
    # in the document, right before that chunk's order badge.
    best = page.locator("[data-ranked='heading-aware'] .cbx-doc .cbx-r[data-r='#1']")
    expect(best).to_have_count(1)


def test_the_add_question_form_stays_open_above_the_scoreboard_after_an_add(page: Page) -> None:
    """A person adds two questions in a row: after the first, the form is where it was
    (above the scoreboard, not under the views) and still open."""
    open_retrieval(page)
    page.get_by_text("Add a question (0 of", exact=False).click()
    for number, (question, quote) in enumerate(
        [
            ("How long is the warranty?", "two-year warranty against manufacturing defects"),
            ("What does a claim need?", "Send the serial number"),
        ],
        start=1,
    ):
        page.locator(".st-key-new_question_text input").fill(question)
        stay_idle(page)
        page.locator(".st-key-new_question_doc").click()
        page.keyboard.type("warranty")
        page.get_by_role("option", name="warranty", exact=True).click()
        page.locator(".st-key-new_question_quote textarea").fill(quote)
        page.get_by_role("button", name="Add question").click()
        wait_idle(page)
        panel = page.get_by_text(f"Add a question ({number} of", exact=False)
        expect(panel).to_be_visible(timeout=60_000)
        expect(page.locator(".st-key-new_question_text input")).to_be_visible()
        form = page.locator(".st-key-new_question_text").bounding_box()
        board = page.get_by_text("Retrieval scoreboard").bounding_box()
        assert form is not None and board is not None and form["y"] < board["y"]


def test_a_person_reads_the_decision_and_the_warning_for_few_questions(page: Page) -> None:
    """The decision sentence replaces the Best line; five questions are warned of."""
    open_retrieval(page)
    decision = page.locator("[data-testid='stMarkdownContainer']", has_text="Choose fixed-char")
    expect(decision).to_be_visible(timeout=60_000)
    expect(decision).to_contain_text(
        "The 5 questions cannot separate 'fixed-char', 'paragraph' and 'heading-aware' on recall"
    )
    expect(decision).to_contain_text("the cheapest, 'fixed-char' (72 retrieved tokens per")
    expect(page.get_by_text("Only 5 questions stand behind these verdicts")).to_be_visible()
    expect(page.get_by_text("Best —")).to_have_count(0)
