"""Grammar `markdown`: sections and blocks as a CommonMark parser sees them.

Built on markdown-it-py's block tokens (CommonMark, with the front-matter and table
plugins), never on patterns of our own. Sections start at top-level ATX and setext
headings, so nothing inside fenced or indented code, an HTML block, front matter, a list
or a block quote starts one. The units that policies pack are the top-level blocks:
paragraph, fenced or indented code, table, list, block quote, HTML block, thematic break,
front matter. Lines are split at "\\n" only, as markdown-it splits them; offsets are code
points of the normalized text.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from .units import Unit
from .v1 import Span

# Only the block structure is needed: inline parsing (emphasis, links…) would cost three
# quarters of the time and change no block. A heading's `inline` token still carries its
# title as `content`.
_PARSER = (
    MarkdownIt("commonmark")
    .use(front_matter_plugin)
    .enable("table")
    .disable(["inline", "text_join"])
)


_CODE = frozenset({"fence", "code_block"})


@dataclass(frozen=True, slots=True)
class MarkdownSection:
    """Grammar v1's `Section` fields, and the blocks of the body.

    The preamble (front matter and whatever precedes the first heading) has an empty
    title and `heading_start == start == 0`; a document that opens with a heading has
    none, so every `heading_start` is distinct.
    """

    heading_start: int
    title: str
    start: int
    end: int
    blocks: tuple[Span, ...]
    # Code blocks (fenced or indented) nested in a block (a list, a quote), in order:
    # a block cut between lines is never cut inside one of these that fits in the size.
    nested_code: tuple[Span, ...] = ()

    def units(self, text: str) -> list[Span]:
        """The blocks, each from its first character to the end of its last line (newline
        included), like grammar v1's paragraphs; found with the section."""
        return list(self.blocks)

    def split(self, text: str, unit: Span, size: int, measure: Unit) -> list[Span]:
        """A block larger than the size, cut between lines (`split_block`), never inside
        a code block nested in it that fits in the size."""
        code = self.nested_code
        inside = code[bisect_left(code, (unit[0], 0)) : bisect_left(code, (unit[1], 0))]
        return split_block(text, unit, size, measure, inside)


def _line_starts(text: str) -> list[int]:
    """Where each line starts; one more entry than lines, past the end of the text."""
    return list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))


def sections(text: str) -> list[MarkdownSection]:
    """Every section that has a block, in document order; never refuses a document."""
    starts = _line_starts(text)
    length = len(text)

    def offset(line: int) -> int:
        return min(starts[line], length)

    def is_blank(line: int) -> bool:
        return text[offset(line) : offset(line + 1)].isspace() or offset(line) == length

    result: list[MarkdownSection] = []
    # The open section: its heading's start, title and body's start, and its blocks.
    heading_start, title, body_start = 0, "", 0
    blocks: list[Span] = []
    nested_code: list[Span] = []

    def add_block(first: int, stop: int) -> None:
        """Lines `[first, stop)` without blank lines at either end; none if all are blank.

        A line of other whitespace (U+00A0…) is text to CommonMark, blank to grammar v1.
        """
        while stop > first and is_blank(stop - 1):
            stop -= 1
        while first < stop and is_blank(first):
            first += 1
        if stop > first:
            blocks.append((offset(first), offset(stop)))

    def add_lines(first: int, stop: int) -> None:
        """Lines no token covers (link reference definitions): runs of non-blank lines."""
        run = first
        for line in range(first, stop):
            if is_blank(line):
                add_block(run, line)
                run = line + 1
        add_block(run, stop)

    def close(end: int) -> None:
        if blocks:
            found = MarkdownSection(
                heading_start, title, body_start, end, tuple(blocks), tuple(nested_code)
            )
            result.append(found)

    tokens = _PARSER.parse(text)
    covered = 0  # the first line after the last top-level token
    for position, token in enumerate(tokens):
        if token.nesting < 0 or token.map is None:
            continue
        first, stop = token.map
        if token.level != 0:
            if token.type in _CODE:
                nested_code.append((offset(first), offset(stop)))
            continue
        add_lines(covered, first)
        covered = stop
        if token.type == "heading_open":
            close(offset(first))
            blocks, nested_code = [], []
            heading_start, body_start = offset(first), offset(stop)
            title = tokens[position + 1].content
        else:
            add_block(first, stop)
    add_lines(covered, len(starts) - 1)
    close(length)
    return result


def split_block(
    text: str, block: Span, size: int, unit: Unit, keep: Sequence[Span] = ()
) -> list[Span]:
    """A block in pieces of at most `size`, cut between lines where one can be.

    Neighbouring lines are grouped greedily; a line larger than `size` on its own is cut
    by the unit (`Unit.cut`). Each span of `keep` (whole lines, in order: code nested in
    the block) that fits in `size` counts as one line, so no cut falls inside it. Token
    counts of lines do not simply add up, so a group of lines is measured again as a
    whole and gives back lines until it fits.
    """
    start, end = block
    if unit.measure(text[start:end]) <= size:
        return [block]
    whole = [(a, b) for a, b in keep if start <= a < b <= end and unit.measure(text[a:b]) <= size]
    lines: list[Span] = []
    line_start = start
    next_kept = 0
    while line_start < end:
        while next_kept < len(whole) and whole[next_kept][0] < line_start:
            next_kept += 1
        if next_kept < len(whole) and whole[next_kept][0] == line_start:
            line_end = whole[next_kept][1]
        else:
            newline = text.find("\n", line_start, end)
            line_end = end if newline < 0 else newline + 1
        lines.append((line_start, line_end))
        line_start = line_end
    costs = [unit.measure(text[s:e]) for s, e in lines]
    pieces: list[Span] = []
    first = 0
    while first < len(lines):
        if costs[first] > size:
            pieces.extend(unit.cut(text, *lines[first], size))
            first += 1
            continue
        stop, total = first, 0
        while stop < len(lines) and total + costs[stop] <= size:
            total += costs[stop]
            stop += 1
        while stop - first > 1 and unit.measure(text[lines[first][0] : lines[stop - 1][1]]) > size:
            stop -= 1
        pieces.append((lines[first][0], lines[stop - 1][1]))
        first = stop
    return pieces
