"""Grammar version 1 (SPEC §4): ATX headings make sections, blank lines split paragraphs.

This is deliberately not a Markdown parser: code fences, setext headings and tables are
plain lines. Offsets are Python code-point positions in the normalized text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ErrorCode, ExplorerError

GRAMMAR_VERSION = 1

# One space after one to six hashes; the title is the rest of the line, verbatim.
_HEADING = re.compile(r"^#{1,6} (.+)(?:\n|$)", re.MULTILINE)

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's body: `[start, end)` runs from after the heading line to the next one."""

    heading_start: int
    title: str
    start: int
    end: int


def require_heading(text: str) -> None:
    """Refuse a text that does not open with a heading line."""
    if _HEADING.match(text) is None:
        first_line = text.split("\n", 1)[0][:60]
        raise ExplorerError(
            ErrorCode.HEADING_REQUIRED,
            f"the text must start with a heading such as '# Title', not {first_line!r}",
        )


def sections(text: str) -> list[Section]:
    """Every section with a non-blank body, in document order."""
    require_heading(text)
    headings = list(_HEADING.finditer(text))
    result = []
    for position, heading in enumerate(headings):
        start = heading.end()
        end = headings[position + 1].start() if position + 1 < len(headings) else len(text)
        if start < end and not text[start:end].isspace():
            result.append(Section(heading.start(), heading.group(1), start, end))
    return result


def paragraphs(text: str, start: int, end: int) -> list[Span]:
    """Maximal runs of non-blank lines in `text[start:end]`, each ending after its last line.

    Lines are those of `str.splitlines(keepends=True)`, so form feeds, U+2028 and the like
    end a line too; a line is blank when it is only whitespace.
    """
    result: list[Span] = []
    cursor = start
    begin = -1
    for line in text[start:end].splitlines(keepends=True):
        line_end = cursor + len(line)
        if not line.isspace():
            if begin < 0:
                begin = cursor
            last = line_end
        elif begin >= 0:
            result.append((begin, last))
            begin = -1
        cursor = line_end
    if begin >= 0:
        result.append((begin, last))
    return result
