"""The app's draft button: it fills the "Add a question" form with a passage that crosses
a chunk boundary of the chosen column, as `questions draft` picks them."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from explorer import Settings
from explorer.chunking.index import build_index
from explorer.retrieval.drafting import boundary_passages
from tests.conftest import open_tab
from tests.test_app import PASTE, errors, shown, start
from tests.test_retrieval_app import library, library_load

pytestmark = pytest.mark.usefixtures("private_index")


def draft(at: AppTest, column: str, source_id: str) -> None:
    at.selectbox(key="draft_column").set_value(column).run()
    at.selectbox(key="draft_doc").set_value(source_id).run()
    at.button(key="draft_passage").click().run()
    assert not at.exception and not errors(at), errors(at)


def test_the_button_fills_the_form_with_a_passage_across_a_boundary() -> None:
    at = library()
    load = library_load()
    source_id = load.documents[0]["source_id"]
    assert at.selectbox(key="draft_column").options == ["fixed-char", "paragraph", "heading-aware"]
    draft(at, "fixed-char", source_id)
    quote = at.text_area(key="new_question_quote").value
    config = Settings.default().config_for("fixed-char")
    chunks = [
        c for c in build_index(load.documents, config)["chunks"] if c["source_id"] == source_id
    ]
    text = load.documents[0]["text"]
    passages = boundary_passages({source_id: text}, chunks)
    assert quote in [p.text for p in passages]
    assert not any(quote in c["text"] for c in chunks)  # no chunk holds it whole
    assert at.selectbox(key="new_question_doc").value == source_id
    assert any("across the boundary of fixed-char" in shown(c.value) for c in at.caption)
    at.text_input(key="new_question_text").input("What does this passage say?")
    next(b for b in at.button if b.label == "Add question").click().run()
    assert not errors(at), errors(at)
    [added] = at.session_state["added_work"].questions
    assert added["references"] == [{"quote": quote}]
    assert not any("across the boundary" in shown(c.value) for c in at.caption)  # the note is done


def test_a_document_with_no_boundary_in_a_section_says_so() -> None:
    at = open_tab(start(), "Retrieval")
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value("# One\n\nA single short sentence.\n").run()
    draft(at, "paragraph", "pasted")
    assert at.text_area(key="new_question_quote").value == ""
    assert any("no passage crosses a boundary" in shown(c.value) for c in at.caption)


def paste_and_draft(text: str, presses: int) -> tuple[AppTest, list[str]]:
    at = open_tab(start(), "Retrieval")
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value(text).run()
    at.selectbox(key="draft_column").set_value("paragraph").run()
    quotes = []
    for _ in range(presses):
        at.button(key="draft_passage").click().run()
        quotes.append(at.text_area(key="new_question_quote").value or "")
    return at, quotes


def test_a_drafted_quote_occurs_once_so_the_form_accepts_it() -> None:
    """Passages that occur twice are passed over: the form's quote must occur once."""
    text = "# T\n\nAlpha one.\n\nBeta two.\n\nAlpha one.\n\nBeta two.\n\nGamma three.\n"
    _, quotes = paste_and_draft(text, 8)
    assert set(quotes) <= {"Beta two.\n\nAlpha one.", "Beta two.\n\nGamma three."}
    assert all(text.count(quote) == 1 for quote in quotes)


def test_when_every_passage_occurs_twice_the_button_says_so() -> None:
    same = "The key rotates every month."
    at, quotes = paste_and_draft(f"# T\n\n{same}\n\n{same}\n\n{same}\n", 1)
    assert quotes == [""]
    assert any("occurs more than once" in shown(c.value) for c in at.caption)
