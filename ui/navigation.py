"""Navigation in the views: the script that makes the minimaps, the boundary and match
steps and the matrix's span buttons jump, and that scrolls the views together (`navigation.js`).

A click on a chunk comes here as the `inspect` trigger and opens it in the chunk detail;
text selected in a view, as the `span` trigger, becomes a span of the check being written.
A jump within the page the views draw happens in the browser alone. A jump elsewhere
(another page, another document, a boundary beyond the page) comes here as the
component's `jump` trigger: the callback turns the document, `turn_page` the page, and
the target goes back to the script, which scrolls every view to it once they draw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import streamlit as st

from explorer import Column
from explorer.view.display import markdown_literal
from explorer.view.navigation import jump_target
from explorer.view.paging import page_of

SCRIPT = (Path(__file__).parent / "navigation.js").read_text(encoding="utf-8")
KEY = "navigation"
OPENED = "inspect_note"  # what a click opened, said by the detail (no element in a callback)
SPAN_SET = "span_set"  # a span was selected: the check form, outside the detail, shows it
_navigator = st.components.v2.component("cbx_navigation", js=SCRIPT, isolate_styles=False)


def _on_jump() -> None:
    """Before the rerun: keep the request, and turn to its document if it names one."""
    request = st.session_state[KEY]["jump"]
    if isinstance(request, Mapping):
        st.session_state["nav_request"] = dict(request)
        if isinstance(request.get("doc"), str):
            st.session_state["doc"] = request["doc"]


def _on_inspect() -> None:
    """Before the rerun: a click on a chunk in a view opens it in the chunk detail (the
    detail refuses a column or an order it does not have, as it does any stale one)."""
    request = st.session_state[KEY]["inspect"]
    if not isinstance(request, Mapping):
        return
    column, order = request.get("column"), request.get("order")
    if isinstance(column, str) and type(order) is int and order >= 0:
        st.session_state["detail_column"] = column
        st.session_state["detail_order"] = order
        st.session_state[OPENED] = (
            f"Chunk {order:,} of {markdown_literal(column)} is open under Chunk detail, "
            "below the views."
        )


def _on_span() -> None:
    """Before the rerun: text selected in a view becomes span A of the check being
    written (span B once A is set), by offsets; the form checks it when it is added."""
    request = st.session_state[KEY]["span"]
    if not isinstance(request, Mapping):
        return
    start, end = request.get("start"), request.get("end")
    if type(start) is not int or type(end) is not int or not 0 <= start < end:
        return
    side = "b" if st.session_state.get("check_a_start") is not None else "a"
    st.session_state["check_mode"] = "Offsets"
    st.session_state[f"check_{side}_start"] = start
    st.session_state[f"check_{side}_end"] = end
    st.session_state[SPAN_SET] = True
    st.toast(f"Span {side.upper()} is [{start:,}, {end:,}): add the check under Span checks.")


def request_jump(offset: int) -> None:
    """A button's callback: on the next run, every view goes to `offset` of the document
    shown, turning the page if it must."""
    st.session_state["nav_request"] = {"offset": offset}


def turn_page(
    doc: str,
    length: int,
    bounds: Sequence[tuple[int, int]],
    columns: Sequence[Column],
    flagged: Mapping[str, Sequence[tuple[str, ...]]],
    shown: frozenset[str],
    more: Mapping[str, Sequence[int]] | None = None,
) -> None:
    """Before the page picker: the page that holds the place a jump asked for. `flagged`
    holds each column's chunk flags, `shown` the flags the filter asks for (a step to the
    next or previous match); `more` the places other views step through, by view (the
    diff view's differences)."""
    request = st.session_state.pop("nav_request", None)
    if request is None:
        return
    starts: dict[str, Sequence[int]] = {}
    matching: dict[str, list[int]] = {}
    for column in columns:
        chunks = zip(column.index["chunks"], flagged[column.name], strict=True)
        own = [(c["start"], names) for c, names in chunks if c["source_id"] == doc]
        starts[column.name] = [start for start, _ in own]
        matching[column.name] = [start for start, names in own if shown.intersection(names)]
    starts.update(more or {})
    target = jump_target(request, length, starts, matching)
    if target is None:
        said = _nothing_that_way(request, starts)
        if said is not None:
            st.toast(said)
        return
    st.session_state["page"] = page_of(list(bounds), target) + 1
    sequence = st.session_state.get("nav_target", {}).get("seq", 0) + 1
    st.session_state["nav_target"] = {"doc": doc, "offset": target, "seq": sequence}


def _nothing_that_way(request: object, columns: Mapping[str, object]) -> str | None:
    """What a well-formed step that found nothing says (a place in the text is always
    found; anything else the page could send says nothing)."""
    if not isinstance(request, Mapping):
        return None
    step, column, offset = request.get("step"), request.get("column"), request.get("offset")
    if type(step) is not int or step not in (1, -1) or type(offset) is not int:
        return None
    if not isinstance(column, str) or column not in columns:
        return None
    what = "chunk that the flag filter matches" if request.get("match") is True else "chunk start"
    way = "after" if step == 1 else "before"
    return f"No {what} {way} this place in {markdown_literal(column)}."


def early_navigator() -> None:
    """Mount the script above the views, so that it listens before they are drawn: a
    click that comes before `navigator` is in is kept and sent by it."""
    _navigator(key=f"{KEY}_early", data={"early": True}, height=0)


def navigator() -> None:
    """Mount the script once per run; its data is the last target the server chose."""
    _navigator(
        key=KEY,
        data={"target": st.session_state.get("nav_target")},
        on_jump_change=_on_jump,
        on_inspect_change=_on_inspect,
        on_span_change=_on_span,
        height=0,
    )
