"""The chunk detail panel: a click on a chunk in a view opens it here; or pick a column
and a chunk's order (keyboard reachable), or a row of the column's searchable chunk list.
Everything about that chunk shows, its id and text copyable."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from explorer import ChunkRecord, Exploration
from explorer.view.detail import chunk_facts, chunk_list
from explorer.view.display import markdown_rows, plain_text
from explorer.view.paging import page_of
from explorer.view.render import chunk_text_html
from ui.navigation import request_jump

LIST = "chunk_list"


@st.cache_data(show_spinner=False, max_entries=6, ttl="10m")
def listed(
    index_id: str, doc: str, _chunks: Sequence[ChunkRecord], _flags: Sequence[tuple[str, ...]]
) -> list[dict[str, object]]:
    """The chunk list of one column's chunks in one document (the index id names both
    the documents and the config)."""
    return chunk_list(_chunks, _flags)


def _pick_row(orders: Sequence[int]) -> None:
    """The list's callback: the chunk of the row picked opens."""
    rows = st.session_state[LIST]["selection"]["rows"]
    if rows and 0 <= rows[0] < len(orders):
        st.session_state["detail_order"] = orders[rows[0]]


def show_detail(
    exploration: Exploration,
    doc: str,
    flagged: Mapping[str, Sequence[tuple[str, ...]]],
    bounds: Sequence[tuple[int, int]],
) -> None:
    """`bounds` are the document's pages: a chunk on another page can be shown there."""
    names = [column.name for column in exploration.columns]
    if st.session_state.get("detail_column") not in names:  # its column was removed
        st.session_state["detail_column"] = names[0]
        st.session_state.pop("detail_order", None)
    st.caption("Click a chunk in a view to open it here.")
    left, right = st.columns([2, 1])
    name = left.selectbox("Column", names, key="detail_column", format_func=plain_text)
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
    own = [chunks[i] for i in positions]
    with st.expander(f"Every chunk of {name} in this document ({len(own):,}): search, pick"):
        st.caption("Search with the magnifier above the list; pick a row to open its chunk.")
        st.dataframe(
            listed(column.result["index_id"], doc, own, [flagged[name][i] for i in positions]),
            key=LIST,
            on_select=lambda: _pick_row([c["order"] for c in own]),
            selection_mode="single-row",
            hide_index=True,
            width="stretch",
            height=300,
        )
