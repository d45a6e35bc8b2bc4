"""The explore tab's *Diff two columns*: pick A and B; one view marks every boundary only
in A, only in B and in both, beside the other views (the same page, minimap and steps,
which go from difference to difference); the scoreboard's row for the pair; and the
questions one column answers and the other misses, each with a jump to where it is cut.

Widgets, layout and caching only: `explorer.retrieval.flips` computes the diff,
`explorer.view.diffview` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from explorer import Column, Exploration, ExplorerError, Manifest
from explorer.checking.diff import boundaries
from explorer.digests import digest
from explorer.retrieval.flips import Diff, Measured, diff_columns
from explorer.retrieval.questions import QuestionSet
from explorer.view.diffview import (
    DIFF_LEGEND,
    DIFF_STYLE,
    DiffMarks,
    render_diff_view,
    render_flips,
)
from explorer.view.display import markdown_literal, plain_text
from ui.common import show_error
from ui.retrieval import bundled_for

KEY_A, KEY_B, KEY_TOLERANCE = "diff_a", "diff_b", "diff_tolerance"
CACHE_TTL = "10m"  # as the page's other caches
MAX_TOLERANCE = 1000


@dataclass(frozen=True)
class Pair:
    """The two columns chosen, A the reference, and how far apart boundaries may match."""

    a: Column
    b: Column
    tolerance: int

    @property
    def name(self) -> str:
        return f"{self.a.name} ⇄ {self.b.name}"

    def marks(self, exploration: Exploration, source_id: str) -> DiffMarks:
        """One document's marks (the diff view's, and where its steps stop)."""
        length = len(exploration.text(source_id))
        a, b = (
            boundaries([(c["start"], c["end"]) for c in column.chunks_of(source_id)], length)
            for column in (self.a, self.b)
        )
        return DiffMarks(a, b, self.tolerance)


def chosen_pair(exploration: Exploration) -> Pair | None:
    """The pair the pickers hold (they are drawn later, under the views: the steps need
    the pair first), the first two columns at first; None with fewer than two columns."""
    names = [column.name for column in exploration.columns]
    if len(names) < 2:
        return None
    a = st.session_state.get(KEY_A)
    if a not in names:
        a = st.session_state[KEY_A] = names[0]
    b = st.session_state.get(KEY_B)
    if b not in names or b == a:
        b = st.session_state[KEY_B] = next(name for name in names if name != a)
    tolerance = st.session_state.get(KEY_TOLERANCE, 0)
    if type(tolerance) is not int or not 0 <= tolerance <= MAX_TOLERANCE:
        tolerance = st.session_state[KEY_TOLERANCE] = 0
    columns = {column.name: column for column in exploration.columns}
    return Pair(columns[a], columns[b], tolerance)


@st.cache_data(show_spinner="Diffing…", max_entries=8, ttl=CACHE_TTL)
def diff_cached(
    a_id: str,
    b_id: str,
    names: tuple[str, str],
    tolerance: int,
    asked: str,
    _exploration: Exploration,
    _a: Column,
    _b: Column,
    _questions: QuestionSet | None,
) -> Diff:
    """The pair's diff, keyed by both index ids, the names, the tolerance and the
    questions' digest."""
    measured = Measured(_questions) if _questions is not None else None
    return diff_columns(_exploration, _a, _b, tolerance, measured)


def questions_for(manifest: Manifest) -> QuestionSet | None:
    """The bundled questions written for these documents, if there are any."""
    bundled = bundled_for(manifest)
    return bundled[0].questions if bundled else None


def pair_diff(exploration: Exploration, manifest: Manifest, pair: Pair) -> Diff:
    questions = questions_for(manifest)
    asked = digest(questions.model_dump(mode="json", exclude_none=True)) if questions else ""
    return diff_cached(
        pair.a.index["index_id"],
        pair.b.index["index_id"],
        (pair.a.name, pair.b.name),
        pair.tolerance,
        asked,
        exploration,
        pair.a,
        pair.b,
        questions,
    )


def pair_row(pair: Pair, diff: Diff) -> dict[str, str]:
    """The scoreboard's row for the pair: B against A over every document both cut."""
    s = diff["summary"]
    return {
        "Pair (A ⇄ B)": pair.name,
        "Boundary F1": f"{s['boundary_f1']:.3f}",
        "Pk": f"{s['pk']:.3f}",
        "WindowDiff": f"{s['windowdiff']:.3f}",
        "Shared": f"{s['shared']:,}",
        "Only A": f"{s['only_a_count']:,}",
        "Only B": f"{s['only_b_count']:,}",
        "Tolerance": f"{pair.tolerance:,}",
    }


def show_diff(
    exploration: Exploration,
    doc: str,
    pair: Pair | None,
    diff: Diff | None,
    window: tuple[int, int] | None,
) -> None:
    """The pickers, the diff view of the document shown, and the flipped questions."""
    st.subheader("Diff two columns")
    if pair is None or diff is None:
        st.info("A diff needs two columns: add one in the sidebar.")
        return
    names = [column.name for column in exploration.columns]
    left, middle, right = st.columns([2, 2, 1], vertical_alignment="bottom")
    left.selectbox("A (the reference)", names, key=KEY_A, format_func=plain_text)
    middle.selectbox("B", [n for n in names if n != pair.a.name], key=KEY_B, format_func=plain_text)
    right.number_input(
        "Tolerance (characters)",
        min_value=0,
        max_value=MAX_TOLERANCE,
        step=1,
        key=KEY_TOLERANCE,
        help="Boundaries at most this far apart match, one to one.",
    )
    figures = next((d for d in diff["documents"] if d["source_id"] == doc), None)
    if figures is None:
        st.info(
            f"{markdown_literal(pair.a.name)} or {markdown_literal(pair.b.name)} does not cut "
            "this document (its grammar cannot read it): there is nothing to diff here."
        )
    else:
        st.html(DIFF_STYLE + DIFF_LEGEND)
        text = exploration.text(doc)
        st.html(
            render_diff_view(pair.name, text, doc, pair.marks(exploration, doc), figures, window)
        )
    show_flips(pair, diff)


def show_flips(pair: Pair, diff: Diff) -> None:
    if "hits" not in diff:
        st.caption(
            "Questions that flip need questions written for these documents (the bundled "
            "examples have them), or `python -m explorer diff --questions FILE`."
        )
        return
    hits = diff["hits"]
    st.markdown(
        f"**Questions that flip** (BM25, top {diff.get('k', 5)}; a hit is one retrieved "
        f"chunk holding the whole answer): {hits['a_only']} hit by A only, "
        f"{hits['b_only']} by B only, {hits['both']} by both, {hits['neither']} by neither."
    )
    flipped = diff.get("questions", [])
    if flipped:
        st.html(DIFF_STYLE + render_flips(flipped, (pair.a.name, pair.b.name)))


def diff_section(exploration: Exploration, manifest: Manifest) -> tuple[Pair | None, Diff | None]:
    """The pair chosen and its diff, or the refusal shown (a question file that does not
    fit the documents)."""
    pair = chosen_pair(exploration)
    if pair is None:
        return None, None
    try:
        return pair, pair_diff(exploration, manifest, pair)
    except ExplorerError as error:
        show_error(error)
        return pair, None
