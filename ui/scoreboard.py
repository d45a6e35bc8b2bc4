"""The scoreboard: a row per column, the span checks by column, and chunk sizes.

Widgets and layout only: `explorer.view.scoreboard` computes, `explorer.view.render` draws HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import streamlit as st

from explorer import Exploration
from explorer.view.display import markdown_rows
from explorer.view.render import render_matrix
from explorer.view.scoreboard import check_matrix, column_score, score_rows, size_histogram


def show_scoreboard(exploration: Exploration, pairs: Sequence[Mapping[str, str]] = ()) -> None:
    """The scoreboard; its flag counts are the report's. `pairs`: a row for each pair of
    columns diffed (ui/diff.py)."""
    columns = exploration.columns
    scores = [column_score(c) for c in columns]
    st.subheader("Scoreboard")
    st.caption(
        "Every document, and every flag, what a policy does by design included: a view's "
        "header counts only its document's chunks whose badges the flags chosen above colour."
    )
    st.table(markdown_rows(score_rows(scores, skipped=len(exploration.skipped))))
    if pairs:
        st.markdown(
            "**Where the pair differs**: B's boundaries against A's, over every document both "
            "cut (chosen under Diff two columns)."
        )
        st.table(markdown_rows([dict(row) for row in pairs]))
    st.markdown("**Do the spans stay together?** One row per span check, one column per column.")
    matrix = check_matrix(columns, exploration.checks, exploration.skipped)
    st.html(render_matrix([c.name for c in columns], matrix, exploration.checks))
    with st.expander("Chunk sizes per column", expanded=False):
        st.altair_chart(size_chart(exploration), width="stretch")


def size_chart(exploration: Exploration) -> alt.FacetChart:
    histogram = size_histogram(exploration.columns)
    names = [column.name for column in exploration.columns]
    frame = {
        "values": [
            {"column": name, "from": edge, "to": edge + histogram.width, "chunks": count}
            for name, counts in histogram.counts.items()
            for edge, count in zip(histogram.edges, counts, strict=True)
        ]
    }
    title = f"chunk size in characters (bins of {histogram.width:,}"
    if histogram.beyond:
        title += f"; the last holds every chunk of {histogram.edges[-1]:,} or more"
    bars = (
        alt.Chart(frame)
        .mark_bar()
        .encode(
            x=alt.X("from:Q", title=title + ")"),
            x2=alt.X2("to:Q"),
            y=alt.Y("chunks:Q", title="chunks", axis=alt.Axis(format=",d", tickMinStep=1)),
            y2=alt.Y2("zero:Q"),
            color=alt.Color("column:N", legend=None, sort=names),
            tooltip=["column:N", "from:Q", "to:Q", alt.Tooltip("chunks:Q", format=",")],
        )
        .transform_calculate(zero="0")
        .properties(height=90, width=700)
    )
    # Each row's column name stands above it, level: turned on its side beside a row
    # 90 px tall, a long name ran into its neighbours' names.
    header = alt.Header(labelAngle=0, labelAlign="left", labelOrient="top", labelFontWeight="bold")
    chart: alt.FacetChart = bars.facet(
        row=alt.Row("column:N", title=None, sort=names, header=header)
    ).resolve_scale(y="independent")
    return chart
