"""A document's outline: the path of headings (outermost first) above each heading, as
the grammar that places a column's chunks reads them. An export's `headings`."""

from __future__ import annotations

from . import v1


def heading_paths(text: str, grammar: str) -> dict[int, list[str]]:
    """Each heading's start: the titles of the headings it lies under, then its own.
    A heading closes every open heading of its level or deeper."""
    if grammar == "markdown":
        from . import markdown  # markdown-it is imported with the first such document

        found = markdown.heading_levels(text)
    else:
        found = v1.heading_levels(text)
    open_headings: list[tuple[int, str]] = []
    paths: dict[int, list[str]] = {}
    for start, level, title in found:
        while open_headings and open_headings[-1][0] >= level:
            open_headings.pop()
        open_headings.append((level, title))
        paths[start] = [title for _, title in open_headings]
    return paths
