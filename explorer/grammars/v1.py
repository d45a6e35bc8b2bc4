"""Grammar version 1 (docs/contract.md §4): ATX headings make sections, blank lines split
paragraphs.

This is deliberately not a Markdown parser: code fences, setext headings and tables are
plain lines. Offsets are Python code-point positions in the normalized text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ErrorCode, ExplorerError

GRAMMAR_VERSION = 1

_NON_SPACE = re.compile(r"\S")  # `\s` is exactly `str.isspace`
# One space after one to six hashes; the title is the rest of the line, verbatim.
_HEADING = re.compile(r"^#{1,6} (.+)(?:\n|$)", re.MULTILINE)

Span = tuple[int, int]
# A piece of a unit (`GrammarSection.split`), with its measure where the grammar took it.
Piece = tuple[Span, int | None]


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's body: `[start, end)` runs from after the heading line to the next one."""

    heading_start: int
    title: str
    start: int
    end: int
    # True when "\n" is the only line break in the whole text (known once per document).
    plain_lines: bool = False

    def units(self, text: str) -> list[Span]:
        """The paragraphs of the body."""
        return section_paragraphs(text, self)

    def split(self, text: str, unit: Span, size: int, measure: object) -> list[Piece]:
        """A paragraph larger than the size stands alone, whole: the size is a target."""
        return [(unit, None)]

    def sentence_units(self, text: str) -> list[tuple[Span, bool]]:
        """Every paragraph, as prose: grammar v1 sees nothing else."""
        return [(unit, True) for unit in self.units(text)]


def require_heading(text: str) -> None:
    """Refuse a text that does not open with a heading line."""
    if _HEADING.match(text) is None:
        first_line = text.split("\n", 1)[0][:60]
        raise ExplorerError(
            ErrorCode.HEADING_REQUIRED,
            f"under grammar v1 the text must start with a heading such as '# Title', not "
            f"{first_line!r} (the markdown grammar reads a text without one)",
        )


def _headings(text: str) -> list[re.Match[str]]:
    """Every heading line: `str.find` jumps to each line that starts with '#'."""
    found = []
    position = -1
    while True:
        heading = _HEADING.match(text, position + 1)
        if heading is not None:
            found.append(heading)
        position = text.find("\n#", position + 1)
        if position < 0:
            return found


def heading_levels(text: str) -> list[tuple[int, int, str]]:
    """Every heading line's start, level (its number of '#') and title, in order."""
    return [
        (heading.start(), heading.group(0).index(" "), heading.group(1))
        for heading in _headings(text)
    ]


def sections(text: str) -> list[Section]:
    """Every section with a non-blank body, in document order, of a text that starts
    with a heading."""
    require_heading(text)
    return headed_sections(text)


def headed_sections(text: str) -> list[Section]:
    """Every section with a non-blank body, in document order, of any text (text before
    the first heading is in none of them)."""
    headings = _headings(text)
    plain_lines = not any(character in text for character in _OTHER_BREAK_CHARACTERS)
    result = []
    for position, heading in enumerate(headings):
        start = heading.end()
        end = headings[position + 1].start() if position + 1 < len(headings) else len(text)
        if _NON_SPACE.search(text, start, end) is not None:
            result.append(Section(heading.start(), heading.group(1), start, end, plain_lines))
    return result


# Line breaks that `str.splitlines` honours besides "\n" ("\r" does not survive loading).
_OTHER_BREAK_CHARACTERS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_OTHER_BREAKS = re.compile(f"[{_OTHER_BREAK_CHARACTERS}]")
# Where "\n" is the only line break (`\s` is exactly `str.isspace`): a blank first line,
# and each newline that a blank line follows.
_BLANK_FIRST_LINE = re.compile(r"[^\S\n]*(?:\n|\Z)")
_BLANK_NEXT_LINE = re.compile(r"\n[^\S\n]*(?=\n|\Z)")


def paragraphs(text: str, start: int, end: int) -> list[Span]:
    """Maximal runs of non-blank lines in `text[start:end]`, each ending after its last line.

    Lines are those of `str.splitlines(keepends=True)`, so form feeds, U+2028 and the like
    end a line too; a line is blank when it is only whitespace. `start` must begin a line.
    """
    if _OTHER_BREAKS.search(text, start, end) is not None:
        return _paragraphs_by_lines(text, start, end)
    return _paragraphs_between_blank_lines(text, start, end)


def section_paragraphs(text: str, section: Section) -> list[Span]:
    """`paragraphs` of a section's body, without searching it for rare line breaks again."""
    if section.plain_lines:
        return _paragraphs_between_blank_lines(text, section.start, section.end)
    return paragraphs(text, section.start, section.end)


def _paragraphs_between_blank_lines(text: str, start: int, end: int) -> list[Span]:
    """Paragraphs are the gaps between blank lines, found without visiting every line."""
    result: list[Span] = []
    cursor = search_from = start
    first = _BLANK_FIRST_LINE.match(text, start, end)
    if first is not None:
        cursor = first.end()
        search_from = max(cursor - 1, start)  # its newline tells about the next line
    for blank in _BLANK_NEXT_LINE.finditer(text, search_from, end):
        line_start = blank.start() + 1
        if line_start > cursor:
            result.append((cursor, line_start))
        cursor = min(blank.end() + 1, end)
    if cursor < end:
        result.append((cursor, end))
    return result


def _paragraphs_by_lines(text: str, start: int, end: int) -> list[Span]:
    """The definition itself, line by line: for text with rarer line breaks."""
    result: list[Span] = []
    cursor = start
    begin = -1
    last = start
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
