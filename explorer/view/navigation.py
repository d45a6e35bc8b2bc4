"""Finding your way in a long document: the minimap beside each view, and where a jump
that the page asks for lands.

A minimap is the whole document scaled to a strip as tall as its view: a tick per chunk
start, crimson bars for the spans of checks, amber bars for flagged chunks, a box for the
page the views draw. Marks closer than a row (1/`ROWS` of the document) share one
element, so a strip holds at most a few times `ROWS` elements however many chunks the
document has.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence

ROWS = 400  # a strip's resolution: about a pixel per row on a 75vh view
_STEPS = (-1, 0, 1)


def _row(offset: int, length: int) -> int:
    return min(offset * ROWS // max(length, 1), ROWS - 1)


def _percent(rows: int) -> str:
    return f"{rows * 100 / ROWS:.2f}%"


def _runs(ranges: Iterable[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The rows `[first, last]` that `[start, end)` ranges cover, merged where they touch."""
    runs: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        first, last = _row(start, length), _row(max(end - 1, start), length)
        if runs and first <= runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], max(runs[-1][1], last))
        else:
            runs.append((first, last))
    return runs


def _bars(kind: str, runs: Sequence[tuple[int, int]]) -> str:
    return "".join(
        f'<i class="{kind}" style="top:{_percent(first)};height:{_percent(last - first + 1)}"></i>'
        for first, last in runs
    )


_TITLE = (
    "The whole document: a line per chunk start, crimson the spans of checks, amber "
    "flagged chunks, the box the part shown. Click to jump there."
)


def render_minimap(
    length: int,
    starts: Sequence[int],
    spans: Iterable[tuple[int, int]],
    flagged: Iterable[tuple[int, int]],
    window: tuple[int, int],
    kinds: tuple[str, str] = ("cbx-ms", "cbx-mf"),
    title: str = _TITLE,
) -> str:
    """The strip for one view of a document of `length` characters: `starts` are its
    chunks' starts in order, `spans` the checks' and `flagged` the flagged chunks'
    `[start, end)`, `window` the part the view draws. A tick carries the first chunk
    start of its row (`data-at`), where a click on it jumps. `kinds` are the classes of
    the two kinds of bars (left and right), `title` what the strip says on hover."""
    ticks: dict[int, int] = {}
    for start in starts:
        ticks.setdefault(_row(start, length), start)
    low, high = window
    page = _bars("cbx-mp", _runs([(low, high)], length)) if (low, high) != (0, length) else ""
    return (
        f'<div class="cbx-map" data-len="{length}" title="{title}">'
        + page
        + _bars(kinds[0], _runs(spans, length))
        + _bars(kinds[1], _runs(flagged, length))
        + "".join(
            f'<i class="cbx-mt" style="top:{_percent(row)}" data-at="{at}"></i>'
            for row, at in ticks.items()
        )
        + '<i class="cbx-mh"></i></div>'
    )


def step_boundary(starts: Sequence[int], offset: int, step: int) -> int | None:
    """The first chunk start after `offset` (step 1) or the last before it (step -1), in
    `starts` (ascending); None when there is none that way."""
    if step > 0:
        after = bisect_right(starts, offset)
        return starts[after] if after < len(starts) else None
    before = bisect_left(starts, offset)
    return starts[before - 1] if before > 0 else None


def jump_target(
    value: object,
    length: int,
    starts: Mapping[str, Sequence[int]],
    matching: Mapping[str, Sequence[int]],
) -> int | None:
    """Where a jump the page asked for lands, an offset in `[0, length]`; None for a
    request that is not one. `{"offset": n}` lands at n; with `"column"` and `"step"`
    (1 or -1), at that column's next or previous chunk start from n (its chunk `starts`),
    and with `"match": true` too, its next or previous start of a chunk that the flag
    filter matches (`matching`)."""
    if not isinstance(value, Mapping):
        return None
    offset, column, step = value.get("offset"), value.get("column"), value.get("step", 0)
    match = value.get("match", False)
    if type(offset) is not int or type(step) is not int or step not in _STEPS:
        return None
    if type(match) is not bool or not 0 <= offset <= length:
        return None
    if not step:
        return offset
    among = matching if match else starts
    if not isinstance(column, str) or column not in among:
        return None
    return step_boundary(among[column], offset, step)
