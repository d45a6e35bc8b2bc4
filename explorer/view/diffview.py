"""The diff view: one document's text with a mark at every boundary of two columns,
only in A, only in B, or in both (checking/diff.py matches them), drawn like the other
views: the same minimap, and steps that go from difference to difference.

The marks of a difference are badges the navigation script steps through (`cbx-n` with
`data-at`, as a chunk start is in the other views); a boundary in both is drawn
without, so the steps skip it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from itertools import pairwise

from ..checking.diff import DocumentDiff, match
from ..retrieval.flips import FlippedQuestion
from .display import EXPLICIT_BIDI, plain_text
from .navigation import render_minimap
from .render import MAX_DRAWN_PIECES, _cut_pieces, _steps

DIFF_STYLE = (
    "<style>"
    ".cbx-dv .cbx-doc{background:#fff}"
    ".cbx-n.cbx-da::before{background:#c62828}"
    ".cbx-n.cbx-db::before{background:#1565c0}"
    ".cbx-dab::before{content:'A B';display:inline-block;font:700 10px/1.3 sans-serif;"
    "background:#9e9e9e;color:#fff;border-radius:7px;padding:0 4px;margin:0 2px 0 0;"
    "vertical-align:1px}"
    ".cbx-map .cbx-mda{right:50%!important;min-height:2px;background:#c62828}"
    ".cbx-map .cbx-mdb{left:50%!important;min-height:2px;background:#1565c0}"
    ".cbx-flips{font:13px/1.6 sans-serif;margin:4px 0 12px}"
    ".cbx-flips td,.cbx-flips th{border:1px solid #dde1e6;padding:3px 8px;text-align:left}"
    "</style>"
)

DIFF_LEGEND = (
    '<div class="cbx-legend">'
    '<span class="cbx-n cbx-da" data-n="A"></span> a boundary only in A &nbsp;·&nbsp; '
    '<span class="cbx-n cbx-db" data-n="B"></span> only in B &nbsp;·&nbsp; '
    '<span class="cbx-dab"></span> in both &nbsp;·&nbsp; the steps go from difference to '
    "difference; the strip beside the view marks A's in red (left), B's in blue (right)"
    "</div>"
)

DIFF_STEPS = _steps("difference", "Scroll to the {way} boundary only one column has", False)


class DiffMarks:
    """One document's boundaries of A and B, sorted: those only in A, only in B, and
    (A's offset of) each matched pair."""

    def __init__(self, a: Sequence[int], b: Sequence[int], tolerance: int = 0) -> None:
        matched = match(a, b, tolerance)
        self.only_a = matched.only_a
        self.only_b = matched.only_b
        lone = set(matched.only_a)
        self.both = [offset for offset in a if offset not in lone]

    @property
    def differences(self) -> list[int]:
        """Where the steps stop: every boundary that one column alone has, in order."""
        return sorted({*self.only_a, *self.only_b})


def render_diff_view(
    name: str,
    text: str,
    source_id: str,
    marks: DiffMarks,
    figures: DocumentDiff,
    window: tuple[int, int] | None = None,
) -> str:
    """The view of the pair `name` ("A ⇄ B") on one document, `window` its page."""
    low, high = window if window is not None else (0, len(text))
    kinds = {offset: "a" for offset in marks.only_a}
    kinds.update((offset, "b") for offset in marks.only_b if offset not in kinds)
    kinds.update((offset, "ab") for offset in marks.both if offset not in kinds)
    both_sides = set(marks.only_a) & set(marks.only_b)  # with a tolerance, one offset may be both
    said = (
        f"only A {figures['only_a_count']:,} · only B {figures['only_b_count']:,} · both "
        f"{figures['shared']:,} · F1 {figures['boundary_f1']:.3f} · Pk {figures['pk']:.3f} · "
        f"WindowDiff {figures['windowdiff']:.3f}"
    )
    head = (
        f'<div class="cbx-view cbx-dv" data-policy="{escape(name)}" data-doc="{escape(source_id)}" '
        f'data-len="{len(text)}" data-window="{low} {high}">'
        f'<div class="cbx-head"><div class="cbx-name">{escape(name)}</div>'
        f'<div class="cbx-line" title="{escape(said)}"><span class="cbx-count">{escape(said)}'
        f'</span> in <bdi class="cbx-docname">{escape(plain_text(source_id))}</bdi></div>'
    )
    drawn = sorted(offset for offset in kinds if low <= offset < high)
    if len(drawn) > MAX_DRAWN_PIECES:
        return (
            f'{head}</div><div class="cbx-limit">Not drawn: this page has {len(drawn):,} '
            f"boundaries, and a view draws at most {MAX_DRAWN_PIECES:,}.</div></div>"
        )
    strip = render_minimap(
        len(text),
        marks.differences,
        [(offset, offset + 1) for offset in marks.only_a],
        [(offset, offset + 1) for offset in marks.only_b],
        (low, high),
        ("cbx-mda", "cbx-mdb"),
        "The whole document: a line per difference, red (left) the boundaries only A has, "
        "blue (right) those only B has, the box the part shown. Click to jump there.",
    )
    parts: list[str] = []
    for start, end in pairwise([low, *(o for o in drawn if o > low), high]):
        kind = kinds.get(start)
        if kind == "ab":
            parts.append('<span class="cbx-dab" title="a boundary of both columns"></span>')
        elif kind is not None:
            sides = "ab" if start in both_sides else kind
            for side in sides:
                parts.append(
                    f'<span class="cbx-n cbx-d{side}" data-n="{side.upper()}" data-at="{start}" '
                    f'title="a boundary only {side.upper()} has, at {start:,}"></span>'
                )
        piece = _cut_pieces(text[start:end])
        if EXPLICIT_BIDI.search(piece):
            piece = f"<bdi>{piece}</bdi>"
        parts.append(f'<span data-o="{start}">{piece}</span>')
    return (
        f"{head}{DIFF_STEPS}</div>"
        f'<div class="cbx-body">{strip}<div class="cbx-doc">{"".join(parts)}</div></div></div>'
    )


def render_flips(questions: Sequence[FlippedQuestion], names: tuple[str, str]) -> str:
    """The questions one column answers and the other does not, each with a button to
    where the loser cuts its answer (else to the answer's start)."""
    rows = []
    for question in questions:
        winner, loser = (names[0], names[1]) if question["winner"] == "a" else (names[1], names[0])
        cuts = question["cut_by"] or [question["references"][0]["start"]]
        where = "".join(
            f'<button type="button" class="cbx-jump" data-doc="{escape(question["source_id"])}" '
            f'data-at="{offset}">{"cut at" if question["cut_by"] else "answer at"} {offset:,}'
            "</button>"
            for offset in cuts[:10]
        )
        rows.append(
            f"<tr><td><bdi>{escape(question['id'])}</bdi></td><td>{escape(winner)}</td>"
            f"<td>{escape(loser)}</td><td><bdi>{escape(plain_text(question['source_id']))}</bdi>"
            f"</td><td>{where}</td></tr>"
        )
    return (
        '<div class="cbx-scroll"><table class="cbx-flips"><thead><tr><th>question</th>'
        "<th>hit by</th><th>missed by</th><th>document</th><th>where the loser cuts the "
        f"answer</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
