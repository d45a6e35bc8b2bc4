"""A question you do not have yet, in the app: a button that fills the "Add a question"
form with a passage crossing a chunk boundary of one of the page's columns (what
`questions draft` writes on the command line); the person writes the question. Widgets
and session state only: `explorer.retrieval.drafting` finds and picks the passages."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from explorer import Column, LoadResult
from explorer.retrieval.drafting import boundary_passages, choose
from explorer.view.display import markdown_literal, plain_text

from .endpoints import generator_picker, written_question

NOTE = "draft_note"  # what the last draft filled in, shown until the question is added
COUNT = "draft_count"  # each click draws another passage: the seed


def _fill(texts: dict[str, str], columns: Sequence[Column]) -> None:
    """The button's callback (run before the form is drawn, so it may fill it)."""
    name, source_id = st.session_state["draft_column"], st.session_state["draft_doc"]
    column = next((c for c in columns if c.name == name), None)
    if column is None or source_id not in texts:  # the page changed since it was drawn
        return
    chunks = [c for c in column.index["chunks"] if c["source_id"] == source_id]
    passages = boundary_passages({source_id: texts[source_id]}, chunks)
    count = st.session_state[COUNT] = st.session_state.get(COUNT, 0) + 1
    if not passages:
        st.session_state[NOTE] = (
            f"No two chunks of one section of {markdown_literal(name)} meet in "
            f"{markdown_literal(source_id)}, so no passage crosses a boundary there: choose "
            "another document, or a smaller size."
        )
        return
    # The form takes quotes, and a quote must occur once: from the drawn passage on, the
    # first whose text does (about 3 % of fixed-char's passages on fixtures/markdown-docs
    # occur twice).
    [drawn] = choose(passages, 1, count)
    first = passages.index(drawn)
    text = texts[source_id]
    passage = next(
        (p for p in passages[first:] + passages[:first] if _once(text, p.text, p.start)),
        None,
    )
    if passage is None:
        st.session_state[NOTE] = (
            f"Every passage of {markdown_literal(source_id)} across a boundary of "
            f"{markdown_literal(name)} occurs more than once, so none can be quoted."
        )
        return
    st.session_state["new_question_doc"] = source_id
    st.session_state["new_question_text"] = ""  # the question to write is this passage's
    st.session_state["new_question_quote"] = passage.text
    st.session_state["new_question_quote_2"] = ""
    question, problem = written_question(passage)
    if question is not None:
        st.session_state["new_question_text"] = question
    todo = (
        "Check the question written for it, then add it."
        if question is not None
        else "Write the question it answers, then add it."
    )
    failed = f" (No question was written: {markdown_literal(problem)}.)" if problem else ""
    st.session_state[NOTE] = (
        f"Filled with a passage of {markdown_literal(source_id)} across the boundary of "
        f"{markdown_literal(name)} at character {passage.boundary:,} ({len(passages):,} cross "
        f"one there; press again for another): no chunk of that column holds it whole. "
        f"{todo}{failed}"
    )


def _once(text: str, quote: str, start: int) -> bool:
    """Whether `quote`, found at `start`, occurs nowhere else (overlaps included), as a
    span's quote must."""
    return text.find(quote) == start and text.find(quote, start + 1) < 0


def draft_button(load: LoadResult, columns: Sequence[Column]) -> None:
    """Pick a column and a document; the button fills the form below."""
    if st.session_state.get("question_added"):  # the drafted question was added
        st.session_state.pop(NOTE, None)
    texts = {d["source_id"]: d["text"] for d in load.documents}
    places = st.columns([2, 2, 2], vertical_alignment="bottom")
    places[0].selectbox(
        "A passage across a boundary of",
        [c.name for c in columns],
        key="draft_column",
        persist_state="session",
        format_func=plain_text,
    )
    places[1].selectbox(
        "in", list(texts), key="draft_doc", persist_state="session", format_func=plain_text
    )
    generator_picker(places[0])
    places[2].button(
        "Draft from a boundary",
        key="draft_passage",
        icon=":material/content_cut:",
        on_click=_fill,
        args=(texts, columns),
        help="Fill the form with the last sentence before a chunk boundary of this column "
        "and the first after it, inside one section: the question a policy that cuts "
        "there answers worst (`python -m explorer questions draft` writes many).",
    )
    note = st.session_state.get(NOTE)
    if note:
        st.caption(note)
