"""What every part of the page shows the same way."""

from __future__ import annotations

from typing import TypeVar

import streamlit as st

from explorer import ExplorerError
from explorer.view.display import markdown_literal

T = TypeVar("T")

# The page's tabs, and the session's key for the one open: the Explore tab runs in every
# run, the other two only while open (setting the key opens one, as a click does).
TABS = ("Explore boundaries", "Persistent index", "Retrieval")
TAB = "tab"
# The tab open when the tabs were last drawn: a run that stops before them (files being
# uploaded) drops the widget's state, and the tab comes back open once they are drawn.
TAB_KEPT = "tab_kept"

# Under every box that takes a quote: how a quote is matched (docs/contract.md §4).
QUOTE_HELP = (
    "Copy it from a view, or type it: line breaks and runs of spaces match any whitespace, "
    "straight quotes match curly ones, a hyphen matches any dash."
)


def show_error(error: ExplorerError) -> None:
    """The code, then the sentence: the detail echoes user text, so it is shown literally."""
    st.error(f"**{error.code.value}**: {markdown_literal(error.detail)}")


def held(key: str, first: T) -> T:
    """The value a keyed widget holds in this session (`first` until it holds one), to
    pass as the widget's own value. A browser that draws a widget anew without its state
    (it rebuilt the page, or reconnected, while the server was busy) takes the widget's
    default and sends it back as a choice: without this, a size's default is its minimum
    1 and a radio's is its first option, so a page would jump to max_chars 1 or drop its
    upload though nobody touched it."""
    value: T = st.session_state.setdefault(key, first)
    return value
