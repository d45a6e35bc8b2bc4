"""The chunk detail panel: pick a column and a chunk's order (keyboard reachable), and
see everything about that chunk, its id and text copyable."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from explorer import Exploration
from explorer.view.detail import chunk_facts
from explorer.view.display import markdown_rows
from explorer.view.paging import page_of
from explorer.view.render import chunk_text_html
from ui.navigation import request_jump


def show_detail(
    exploration: Exploration,
    doc: str,
    flagged: Mapping[str, Sequence[tuple[str, ...]]],
    bounds: Sequence[tuple[int, int]],
) -> None:
    """`bounds` are the document's pages: a chunk on another page can be shown there."""
    names = [column.name for column in exploration.columns]
    left, right = st.columns([2, 1])
    name = left.selectbox("Column", names, key="detail_column") or names[0]
    column = exploration.columns[names.index(name)]
    positions = [i for i, c in enumerate(column.index["chunks"]) if c["source_id"] == doc]
    if not positions:
        st.caption("This column has no chunk in this document (only headings).")
        return
    chunks = column.index["chunks"]
    first, last = chunks[positions[0]]["order"], chunks[positions[-1]]["order"]
    if not first <= st.session_state.get("detail_order", first) <= last:
        st.session_state["detail_order"] = first
    order = right.number_input(
        f"Chunk order ({first:,} to {last:,})",
        min_value=first,
        max_value=last,
        step=1,
        key="detail_order",
        help="The number on the chunk's badge in the view; arrow keys step through them.",
    )
    position = positions[int(order) - first]
    chunk = chunks[position]
    with st.container(border=True, key="chunk_detail"):
        st.table(markdown_rows(chunk_facts(chunk, flagged[name][position])))
        where = f" (page {page_of(list(bounds), chunk['start']) + 1:,})" if len(bounds) > 1 else ""
        st.button(
            f"Show where it starts in the views{where}",
            key="detail_page",
            on_click=request_jump,
            args=(chunk["start"],),
        )
        st.caption("chunk_id")
        st.code(chunk["chunk_id"], language=None)
        st.caption("Text, exactly (select to copy, or download it)")
        st.html(chunk_text_html(chunk["text"]))
        st.download_button(
            "Download this chunk's text",
            chunk["text"].encode("utf-8"),
            f"chunk-{chunk['order']}.txt",
            "text/plain",
            key="dl_chunk_text",
            on_click="ignore",
            icon=":material/download:",
        )
