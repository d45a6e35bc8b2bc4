"""*Export a column*: any column's chunks as a file LangChain or LlamaIndex reads (or the
explorer's own records), and the Python that cuts a text as the column does; the Explore
tab offers it for the column picked, the Retrieval tab for the decision's choice.

Widgets only: `explorer.pipeline.export_column` writes the lines, `explorer.chunking.
snippet` the code.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from explorer import Column, Exploration, ExplorerError
from explorer.chunking.export import ExportFormat
from explorer.chunking.snippet import snippet
from explorer.pipeline import export_column
from explorer.view.display import file_name_part, markdown_literal, plain_text

FORMATS: tuple[tuple[ExportFormat, str], ...] = (
    ("langchain", "LangChain"),
    ("llamaindex", "LlamaIndex"),
    ("jsonl", "JSONL"),
)


def show_export(exploration: Exploration) -> None:
    """Pick a column: three downloads of its chunks, and its snippet to copy."""
    columns = {column.name: column for column in exploration.columns}
    name = st.selectbox(
        "Export a column", list(columns), key="export_column", format_func=plain_text
    )
    offer_export(columns[name], "export")


def offer_export(column: Column, key: str) -> None:
    """Three downloads of `column`'s chunks (keys `dl_{key}_{format}`), and its snippet
    to copy (an imported column has none: said instead)."""
    places = st.columns(len(FORMATS))
    for place, (shape, label) in zip(places, FORMATS, strict=True):
        place.download_button(
            f"Download for {label}",
            partial(export_column, column, shape),
            f"chunks-{file_name_part(column.name)}-{shape}.jsonl",
            "application/jsonl",
            key=f"dl_{key}_{shape}",
            on_click="ignore",
            icon=":material/download:",
            help=f"The chunks of {markdown_literal(column.name)}: one JSON object per line, "
            "one per chunk, in the index's order, with its ids, heading path and the "
            "column's config.",
        )
    try:
        code = snippet(column.name, column.config)
    except ExplorerError as error:
        st.info(markdown_literal(error.detail))
        return
    st.caption(
        "Python that defines chunk(text) and cuts a text as this column does, in your own "
        "pipeline (copy it with the button at its top right):"
    )
    st.code(code, language="python")
