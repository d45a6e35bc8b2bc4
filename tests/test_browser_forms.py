"""Real Chromium: the forms a person fills empty themselves after Add (in the browser, not
only on the server), and the page says what was just added."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.appserver import stay_idle
from tests.test_browser import app_url, browser, page, wait_idle
from tests.test_browser_retrieval import open_retrieval

__all__ = ["app_url", "browser", "page"]  # the fixtures, shared with test_browser

QUESTION = ".st-key-new_question_text input"
QUOTE = ".st-key-new_question_quote textarea"
SECOND = ".st-key-new_question_quote_2 textarea"


def choose_warranty(page: Page) -> None:
    stay_idle(page)
    page.locator(".st-key-new_question_doc").click()
    page.keyboard.type("warranty")
    page.get_by_role("option", name="warranty", exact=True).click()


def test_the_question_form_empties_after_add_clear_and_draft(page: Page) -> None:
    open_retrieval(page)
    page.get_by_text("Add a question (0 of", exact=False).click()
    page.locator(QUESTION).fill("How long is the warranty?")
    choose_warranty(page)
    page.locator(QUOTE).fill("two-year warranty against manufacturing defects")
    page.locator(SECOND).fill("Send the serial number")
    page.get_by_role("button", name="Add question").click()
    expect(page.get_by_text("Add a question (1 of", exact=False)).to_be_visible(timeout=60_000)
    wait_idle(page)
    expect(page.get_by_text("Added", exact=False).first).to_be_visible()
    for box in (QUESTION, QUOTE, SECOND):  # the next question inherits nothing
        expect(page.locator(box)).to_have_value("")

    # A draft fills the answer and empties the question left in the box.
    page.locator(QUESTION).fill("A question written for another passage")
    page.get_by_role("button", name="Draft from a boundary").click()
    expect(page.locator(QUOTE)).not_to_have_value("", timeout=30_000)
    wait_idle(page)
    expect(page.locator(QUESTION)).to_have_value("")

    # Clearing the questions added here empties the form too.
    page.locator(QUESTION).fill("Half a question")
    page.get_by_role("button", name="Clear the questions added here").click()
    expect(page.get_by_text("Add a question (0 of", exact=False)).to_be_visible(timeout=60_000)
    wait_idle(page)
    for box in (QUESTION, QUOTE, SECOND):
        expect(page.locator(box)).to_have_value("")


def test_the_span_check_form_empties_after_add(page: Page) -> None:
    name = page.get_by_label("Check name")
    quote_a = page.get_by_role("textbox", name="Span A quote (occurs once in the document)")
    quote_b = page.get_by_role("textbox", name="Span B quote (occurs once in the document)")
    name.fill("listing-pair")
    quote_a.fill("Call list_copies()")
    quote_b.fill("Listing documents does not create or replace a document.")
    page.get_by_role("button", name="Add check").click()
    row = page.locator(".cbx-matrix tbody tr", has_text="listing-pair").first
    expect(row).to_be_visible(timeout=30_000)
    wait_idle(page)
    expect(page.get_by_text("Added the check", exact=False)).to_be_visible()
    expect(quote_a).to_have_value("")
    expect(quote_b).to_have_value("")
    expect(name).not_to_have_value("listing-pair")
