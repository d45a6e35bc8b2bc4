"""A semantic column's curve beside its view (docs/contract.md §5d): each gap's distance
against its offset, down the page as the text runs.

Plain HTML (the app's HTML blocks draw no SVG): each gap a stem from the left as long as
its distance, ended by a mark (a round grey dot; a larger red one for a breakpoint; an
orange square where the maximum forced a cut), at its offset's place down the page; the
threshold a dashed line; a cut inside one sentence a tick across. Each mark is placed
at a percent of the page's characters; the page's navigation script (ui/navigation.js)
moves it level with the line where its offset lies in the view, makes the curve as tall
as the view's text and scrolls it with the view. Hovering a mark shows its windows.
"""

from __future__ import annotations

from bisect import bisect_left
from html import escape

from ..chunking.policies.semantic import Curve

CURVE_STYLE = (
    "<style>"
    # The box is as tall as the view's text beside it: what it draws is positioned out
    # of the flow, so however tall the curve is drawn it never grows the box.
    ".cbx-curve{flex:0 0 128px;position:relative;border:1px solid #d0d0d0;"
    "border-radius:4px;background:#fbfcfd;overflow:hidden}"
    ".cbx-ch{font:600 10px/15px sans-serif;color:#37474f;padding:1px 4px;height:15px;"
    "border-bottom:1px solid #e3e6ea;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    ".cbx-cs{position:absolute;top:18px;left:0;right:0;bottom:0;overflow:hidden}"
    ".cbx-cc{position:relative;height:100%;margin:0 8px 0 4px}"
    # A gap: a stem from the left as long as its distance, and its mark at the end.
    ".cbx-cc i{position:absolute;display:block;left:0;height:1px;background:#b0bec5;"
    "cursor:help}"
    '.cbx-cc i::after{content:"";position:absolute;right:-3px;top:-3px;width:7px;'
    "height:7px;border-radius:50%;background:#78909c}"
    ".cbx-cc .cbx-cb{z-index:2;background:#ef9a9a}"
    ".cbx-cc .cbx-cb::after{right:-5px;top:-5px;width:11px;height:11px;background:#d32f2f}"
    ".cbx-cc .cbx-cf{z-index:1;background:#ffe0b2}"
    ".cbx-cc .cbx-cf::after{right:-4px;top:-4px;width:9px;height:9px;border-radius:0;"
    "background:#f59e0b}"
    ".cbx-cc i:hover::after{outline:2px solid #1976d2}"
    ".cbx-cc .cbx-ct{top:0;bottom:0;height:auto;width:0;background:none;"
    "border-left:2px dashed #c2185b}"
    ".cbx-cc .cbx-cw{width:100%;height:0;background:none;border-top:2px solid #f59e0b}"
    ".cbx-cc .cbx-ct::after,.cbx-cc .cbx-cw::after{content:none}"
    "</style>"
)
# Characters of each window a point's hover text shows, at each end.
WINDOW_SHOWN = 120
# Percent of the width kept free at each side.
_PAD = 6.0


def _window_text(text: str, start: int, end: int) -> str:
    piece = text[start:end]
    if len(piece) > 2 * WINDOW_SHOWN:
        piece = f"{piece[:WINDOW_SHOWN]} … {piece[-WINDOW_SHOWN:]}"
    return " ".join(piece.split())


def _percent(part: float, whole: int) -> str:
    return f"{part / whole * 100:.4f}%"


def render_curve(
    text: str, source_id: str, name: str, curve: Curve, window: tuple[int, int]
) -> str:
    """The curve of the gaps in `window` (a page of the text), for the view of the column
    `name` of the document `source_id`."""
    low, high = window
    tall = max(high - low, 1)
    distances = curve.distances.tolist()
    highest = max([*distances, curve.threshold or 0.0, 1e-9])

    def across(distance: float) -> str:
        return f"{max(distance, 0.0) / highest * 100:.2f}%"

    offsets = [curve.offset(gap) for gap in range(len(distances))]
    first = bisect_left(offsets, low)
    last = bisect_left(offsets, high)
    breaks = set(curve.breakpoints)
    forced = set(curve.forced)
    marks: list[str] = []
    for gap in range(first, last):
        at = offsets[gap]
        down, x = _percent(at - low, tall), across(distances[gap])
        kind = "cbx-cb" if gap in breaks else "cbx-cf" if at in forced else "cbx-cp"
        what = {"cbx-cb": " (breakpoint)", "cbx-cf": " (cut for the maximum)"}.get(kind, "")
        left, right = curve.left[gap], curve.right[gap]
        title = (
            f"gap at {at:,}: distance {distances[gap]:.4f}{what}"
            f"\nleft [{left[0]:,}, {left[1]:,}): {_window_text(text, *left)}"
            f"\nright [{right[0]:,}, {right[1]:,}): {_window_text(text, *right)}"
        )
        marks.append(
            f'<i class="{kind}" style="top:{down};width:{x}" data-at="{at}" '
            f'title="{escape(title)}"></i>'
        )
    gaps = set(offsets)
    # A cut inside one sentence (fixed windows): a tick across the curve.
    ticks = [
        f'<i class="cbx-cw" style="top:{_percent(at - low, tall)}" data-at="{at}" '
        f'title="cut for the maximum inside one sentence, at {at:,}"></i>'
        for at in curve.forced
        if low <= at < high and at not in gaps
    ]
    threshold = ""
    said = "no gap: one sentence per section"
    if curve.threshold is not None:
        threshold = (
            f'<i class="cbx-ct" style="left:{across(curve.threshold)}" '
            f'title="threshold {curve.threshold:.4f}"></i>'
        )
        said = f"threshold {curve.threshold:.3f}"
    legend = (
        f"{name}: each gap between sentences, down the page at its offset, with its distance "
        f"(1 - cos of its two windows' embeddings) across; dashed: {said}; red: breakpoints "
        f"({len(curve.breakpoints):,} in the document); orange: cut for the maximum "
        f"({len(curve.forced):,}); hover a mark for its windows"
    )
    return (
        f'<div class="cbx-curve" data-policy="{escape(name)}" data-doc="{escape(source_id)}" '
        f'data-window="{low} {high}" title="{escape(legend)}">'
        f'<div class="cbx-ch">{escape(said)}</div><div class="cbx-cs"><div class="cbx-cc">'
        f"{threshold}{''.join(ticks)}{''.join(marks)}</div></div></div>"
    )
