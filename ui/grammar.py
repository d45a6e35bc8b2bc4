"""Documents without a leading heading: a drop of plain files that has one opens under the
markdown grammar (and the page says so), and a document refused with `heading_required`
offers a one-click switch to it. Widgets and session state only:
`explorer.pipeline.without_heading` finds them."""

from __future__ import annotations

import streamlit as st

from explorer import LoadResult
from explorer.pipeline import unreadable_under_v1, without_heading
from explorer.sources.uploads import Bundle
from explorer.view.display import markdown_literal

from .columns import GRAMMAR

MARKDOWN = "markdown"
PENDING = "grammar_next"  # a grammar to choose before the sidebar is drawn
OPENED = "grammar_opened"  # (the drop's cache key, the documents that needed markdown)


def apply_pending_grammar() -> None:
    """Choose the grammar a drop asked for; called before the sidebar's radio is drawn
    (a widget's value cannot change once it is drawn in a run)."""
    pending = st.session_state.pop(PENDING, None)
    if pending is not None:
        st.session_state[GRAMMAR] = pending


def open_plain_drop(bundle: Bundle) -> None:
    """The first time a drop of plain files arrives, choose markdown if one of its files
    opens without a heading (the page runs again at once); while the drop stays and
    markdown is chosen, say so."""
    opened = st.session_state.get(OPENED)
    if opened is None or opened[0] != bundle.key:
        headless = without_heading(bundle.manifest, bundle.files)
        st.session_state[OPENED] = (bundle.key, headless)
        if headless and st.session_state.get(GRAMMAR) != MARKDOWN:
            st.session_state[PENDING] = MARKDOWN
            st.rerun()
        opened = st.session_state[OPENED]
    headless = opened[1]
    if headless and st.session_state.get(GRAMMAR) == MARKDOWN:
        named = ", ".join(markdown_literal(source_id) for source_id in headless[:5])
        more = f" and {len(headless) - 5:,} more" if len(headless) > 5 else ""
        st.info(
            f":material/article: Opened under the **markdown** grammar: {named}{more} "
            f"{'does' if len(headless) == 1 else 'do'} not start with a '#' heading line, "
            "which grammar v1 needs. Markdown reads CommonMark blocks and needs none; the "
            "sidebar's Grammar changes it."
        )


def _to_markdown() -> None:
    st.session_state[GRAMMAR] = MARKDOWN


def offer_markdown(load: LoadResult) -> None:
    """A one-click switch to markdown for documents grammar v1 leaves out for want of a
    heading."""
    refused = unreadable_under_v1(load.documents)
    if not refused or st.session_state.get(GRAMMAR) == MARKDOWN:
        return
    st.button(
        f"Read {'it' if len(refused) == 1 else 'them'} under the markdown grammar",
        key="to_markdown",
        icon=":material/article:",
        type="primary",
        on_click=_to_markdown,
        help=f"{len(refused):,} document{'' if len(refused) == 1 else 's'} cannot be cut "
        "under grammar v1, which needs a '#' heading line first; markdown needs none.",
    )
