"""What every part of the page shows the same way."""

from __future__ import annotations

import streamlit as st

from explorer import ExplorerError
from explorer.view.display import markdown_literal

# Under every box that takes a quote: how a quote is matched (docs/contract.md §4).
QUOTE_HELP = (
    "Copy it from a view, or type it: line breaks and runs of spaces match any whitespace, "
    "straight quotes match curly ones, a hyphen matches any dash."
)


def show_error(error: ExplorerError) -> None:
    """The code, then the sentence: the detail echoes user text, so it is shown literally."""
    st.error(f"**{error.code.value}**: {markdown_literal(error.detail)}")
