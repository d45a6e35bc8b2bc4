"""A semantic column's curve beside its view (explorer/view/curve.py), cached by the
column's index and the page: a percentile step redraws it from distances the core kept
(explorer/chunking/policies/semantic.py), never embedding the document again."""

from __future__ import annotations

import streamlit as st

from explorer.chunking.config import ChunkConfig
from explorer.chunking.policies.semantic import document_curve
from explorer.pipeline import Column
from explorer.view.curve import CURVE_STYLE, render_curve

CACHE_TTL = "10m"  # as the page's other caches


@st.cache_data(show_spinner="Drawing the curve…", max_entries=12, ttl=CACHE_TTL)
def _curve_cached(
    index_id: str,
    name: str,
    source_id: str,
    window: tuple[int, int],
    _text: str,
    _config: ChunkConfig,
) -> str:
    """The index id names the documents and the config."""
    return render_curve(_text, source_id, name, document_curve(_text, _config), window)


def curve_beside(column: Column, source_id: str, text: str, window: tuple[int, int] | None) -> str:
    """The curve's HTML for a semantic column's view of `source_id`; "" for any other."""
    if column.config.semantic is None:
        return ""
    shown = window if window is not None else (0, len(text))
    index_id = column.result["index_id"]
    return CURVE_STYLE + _curve_cached(index_id, column.name, source_id, shown, text, column.config)
