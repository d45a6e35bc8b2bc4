"""What every part of the page shows the same way."""

from __future__ import annotations

import streamlit as st

from explorer import ExplorerError


def show_error(error: ExplorerError) -> None:
    st.error(f"**{error.code.value}**: {error.detail}")
