"""Pages of a long document: the views draw one page at a time, so a 1 MiB document is
not 8 MB of HTML at once, and every character stays reachable.

A page is a run of whole sections (cut where a line starts with `#`) of at most
`PAGE_CHARS` characters; a section longer than that is cut between lines, and a line
longer than that where it must. Pages are contiguous and cover the text exactly.
"""

from __future__ import annotations

import re

PAGE_CHARS = 40_000
_HEADING = re.compile(r"^#{1,6}[ \t]", re.MULTILINE)


def _line_starts(text: str, start: int, end: int) -> list[int]:
    starts = [start]
    position = text.find("\n", start, end)
    while position >= 0 and position + 1 < end:
        starts.append(position + 1)
        position = text.find("\n", position + 1, end)
    return starts


def pages(text: str, size: int = PAGE_CHARS) -> list[tuple[int, int]]:
    """`[start, end)` of each page, in order: `pages[0][0] == 0`, each page ends where
    the next starts, the last ends at `len(text)`, and none is empty (an empty text has
    one empty page)."""
    if len(text) <= size:
        return [(0, len(text))]
    cuts = sorted({0, *(m.start() for m in _HEADING.finditer(text))})
    found: list[tuple[int, int]] = []
    start = 0
    bounds = [*cuts[1:], len(text)]
    for position, end in enumerate(bounds):
        if end - start <= size:
            continue  # the section joins the page; cut before the one that overflows
        previous = cuts[position]  # the section's own start: the heading before `end`
        if start < previous and previous - start <= size:
            found.append((start, previous))
            start = previous
        while end - start > size:  # one section longer than a page: cut between lines
            lines = [s for s in _line_starts(text, start, end) if start < s <= start + size]
            cut = lines[-1] if lines else start + size
            found.append((start, cut))
            start = cut
    found.append((start, len(text)))
    return found


def page_of(bounds: list[tuple[int, int]], offset: int) -> int:
    """The index of the page that holds `offset`."""
    for number, (start, end) in enumerate(bounds):
        if start <= offset < end:
            return number
    return len(bounds) - 1
