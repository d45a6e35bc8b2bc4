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

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from heapq import merge
from itertools import accumulate, pairwise

from markdown_it import MarkdownIt
from markdown_it_pyrs import MarkdownIt as MarkdownItRs
from mdit_py_plugins.front_matter import front_matter_plugin

from ..memo import once
from .prose import line_pieces
from .units import Measures, Unit
from .v1 import Piece, Span

# Only the block structure is needed: inline parsing (emphasis, links…) would cost three
# quarters of the time and change no block. A heading's `inline` token still carries its
# title as `content`.
_REFERENCE = (
    MarkdownIt("commonmark")
    .use(front_matter_plugin)
    .enable("table")
    .disable(["inline", "text_join"])
)

# The same block rules in markdown-it.rs (markdown-it-pyrs), 11-17 times faster; its tree
# gives each block's UTF-8 byte range. The front matter plugin is done in Python
# (`_front_matter_stop`), as markdown-it-py's does it; a link reference definition is a
# node here, and no token there (its lines are left to `add_lines`).
_FAST = MarkdownItRs("zero").enable_many(
    [
        "blockquote",
        "code",
        "fence",
        "heading",
        "hr",
        "lheading",
        "list",
        "paragraph",
        "reference",
        "html_block",
        "table",
    ]
)

# Where the two parsers are known to part, each found by differential fuzzing
# (tests/test_fast_path.py), all within one run of non-blank lines: a lazy continuation
# line of a block quote's paragraph that is an ordered list item which may not interrupt
# a paragraph (`> a\n2. b`) or a table row (markdown-it.rs starts a table), an ordered
# list item among a table's rows (markdown-it.rs reads it as a row), a row above a line
# of dashes without a pipe (`| a |\n---`: a table to markdown-it-py, a setext heading to
# markdown-it.rs) or a row in a list item or quote above a delimiter row; and a line
# of only spaces some of which are not ASCII (U+00A0…): blank to markdown-it.rs, text to
# markdown-it-py. `_may_part` finds them in linear time, and markdown-it-py parses such
# a document.
_SPACE = "\x0b\x0c\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_ODD_SPACE = re.compile(f"[{_SPACE}]")
_ODD_BLANK = re.compile(f"^[ \\t]*[{_SPACE}][ \\t{_SPACE}]*$", re.MULTILINE)
_QUOTE = re.compile(r"[ \t]*>")
_ORDERED = re.compile(r"[ \t>]*[0-9]{1,9}[.)]")
# The characters of a line that may be a table's delimiter row or a setext underline
# (`_may_delimit`), and a line in a list item or quote.
_DELIMITER_CHARACTERS = " \t|:-"
_ITEM = re.compile(r"[ \t]*(?:[-+*>]|[0-9]{1,9}[.)])")
# The container markers a line starts with (and more: any indentation).
_CONTAINER_MARKS = re.compile(r"(?:[ \t]*(?:>|[-+*](?=[ \t])|[0-9]{1,9}[.)](?=[ \t])))*")
# The newline of a line that a blank line (or the text's end) follows.
_RUN_END = re.compile(r"\n[ \t]*(?=\n|\Z)")
# A quote's line, found in the text with a newline before it: the match starts where
# the line starts in the text.
_QUOTE_LINE = re.compile(r"\n[ \t]*>")


def _may_part(text: str) -> bool:
    """Whether the document holds a pattern where the parsers part (see above). Each
    but the odd blank line lies in a run of non-blank lines that holds a `|` or a
    quote's line: only those runs are read line by line."""
    if _ODD_SPACE.search(text) and _ODD_BLANK.search(text):
        return True
    quote_lines = (match.start() for match in _QUOTE_LINE.finditer("\n" + text))
    end = -1  # where the last run read ends
    for mark in merge(_found(text, "|"), quote_lines):
        if mark > end:
            start, end = _run(text, mark)
            if _run_may_part(text[start:end].split("\n")):
                return True
    return False


def _found(text: str, character: str) -> Iterator[int]:
    """Where `character` is in `text`, in order."""
    position = text.find(character)
    while position >= 0:
        yield position
        position = text.find(character, position + 1)


def _run(text: str, position: int) -> Span:
    """The run of non-blank lines around `position` (on a line that is not blank): from
    the start of its first line to the end of its last, newline excluded."""
    start = text.rfind("\n", 0, position) + 1
    while start > 0:
        above = text.rfind("\n", 0, start - 1) + 1
        if not text[above : start - 1].strip(" \t"):
            break
        start = above
    end = _RUN_END.search(text, position)
    return start, len(text) if end is None else end.start()


def _run_may_part(lines: list[str]) -> bool:
    """`_may_part` in one run of non-blank lines. A line that starts with as many `>`
    as any quote's line above it (counted there with the list markers between them)
    continues every quote it may be in, so it is no lazy continuation line."""
    quoted = 0  # the most `>` a quote's line above starts with
    after_pipe = False  # below a row
    header = ""  # the line above, if it has a pipe
    for line in lines:
        ordered = _ORDERED.match(line) is not None
        if ordered and after_pipe:
            return True
        # A row or an ordered item that may be a lazy continuation line.
        lazy = quoted and (ordered or "|" in line)
        if lazy and line[: len(line) - len(line.lstrip(" \t>"))].count(">") < quoted:
            return True
        if header and _may_delimit(line) and ("|" not in line or _ITEM.match(header)):
            return True
        prefix = _CONTAINER_MARKS.match(line) if _QUOTE.match(line) else None
        if prefix:
            quoted = max(quoted, prefix.group().count(">"))
        after_pipe = after_pipe or "|" in line
        header = line if "|" in line else ""
    return False


def _may_delimit(line: str) -> bool:
    """Whether `line` is only spaces, tabs, pipes, colons and dashes, one dash at least:
    in linear time (a pattern with two runs around the dash took the square of a long
    line's length to fail)."""
    return "-" in line and not line.strip(_DELIMITER_CHARACTERS)


_CODE = frozenset({"fence", "code_block"})
# The token level at which `fast_blocks` leaves a document to markdown-it-py, below its
# `maxNesting` (20); and a line start that could open that many containers (a level
# takes at least one column; a tab is at most four), searched in the text with a
# newline before it (a pattern that starts with a character is searched for fast).
_DEEPEST = 16
_DEEP_LINE = re.compile(r"\n[ \t>*+\-0-9.)]{64}")
_CONTAINERS = frozenset({"blockquote", "bullet_list", "ordered_list"})
_HEADINGS = frozenset({"heading", "lheading"})

# What `top_blocks` yields: a top-level block, a heading, or a code block nested in a
# top-level block (in document order, after that block).
_BLOCK, _HEADING, _NESTED_CODE, _PARAGRAPH, _LIST_ITEM = 0, 1, 2, 3, 4
_LISTS = frozenset({"bullet_list", "ordered_list"})
Found = tuple[int, int, int, str]  # kind, first line, line after the last, title


def top_blocks(text: str, starts: list[int]) -> Iterable[Found]:
    """Every top-level block, heading and nested code block with its lines; by
    markdown-it.rs, or by markdown-it-py for a document where the two may part."""
    if _may_part(text):
        return reference_blocks(text)
    found = fast_blocks(text, starts)
    return reference_blocks(text) if found is None else found


def reference_blocks(text: str) -> Iterator[Found]:
    """`top_blocks` by markdown-it-py (and its front matter plugin)."""
    tokens = _REFERENCE.parse(text)
    for position, token in enumerate(tokens):
        if token.nesting < 0 or token.map is None:
            continue
        first, stop = token.map
        if token.level != 0:
            if token.type in _CODE:
                yield _NESTED_CODE, first, stop, ""
            elif token.level == 1 and token.type == "list_item_open":
                yield _LIST_ITEM, first, stop, ""
        elif token.type == "heading_open":
            yield _HEADING, first, stop, tokens[position + 1].content
        else:
            yield (_PARAGRAPH if token.type == "paragraph_open" else _BLOCK), first, stop, ""


def fast_blocks(text: str, starts: list[int]) -> list[Found] | None:
    """`top_blocks` by markdown-it.rs, front matter found first; None where markdown-it-py
    may see other lines: a fence nested in a list or quote that its container closes
    (markdown-it-py's ends after the blank lines that follow it, markdown-it.rs's
    before), and blocks nested nearly as deep as markdown-it-py's `maxNesting` (20),
    past which it parses no deeper while markdown-it.rs goes on; and a document with a
    line whose container markers and indentation could nest deeper than that
    (`_DEEP_LINE`), which markdown-it.rs is not even given: it recurses once per level,
    and some 25,000 levels overflow the stack of its thread."""
    if _DEEP_LINE.search("\n" + text):
        return None
    first_line = _front_matter_stop(text, starts)
    found: list[Found] = [(_BLOCK, 0, first_line, "")] if first_line else []
    rest = text[starts[first_line] :] if first_line else text
    data = rest.encode("utf-8")
    # Where each line starts, as a byte offset of `rest` plus `shift`, from line
    # `line_shift` of `text` on. In ASCII a byte is a code point: the lines' `starts`.
    if len(data) == len(rest):
        bounds, shift, line_shift = starts, starts[first_line], 0
    else:
        bounds, shift, line_shift = [0], 0, first_line
        bounds.extend(match.end() for match in _NEWLINE.finditer(data))

    def lines(srcmap: tuple[int, int]) -> tuple[int, int]:
        """The lines `[first, stop)` that hold a node's bytes, as lines of `text`."""
        begin, end = srcmap
        first = bisect_right(bounds, begin + shift) - 1
        stop = bisect_right(bounds, end - 1 + shift) if end > begin else first + 1
        return first + line_shift, stop + line_shift

    for node in _FAST.tree(rest).children:
        name = node.name
        srcmap = node.srcmap
        if srcmap is None or name == "definition":
            continue
        first, stop = lines(srcmap)
        if name in _HEADINGS:
            # markdown-it-py strips a title with str.strip (all of Unicode's spaces).
            title = node.children[0].meta["content"].strip() if node.children else ""
            found.append((_HEADING, first, stop, title))
            continue
        found.append((_PARAGRAPH if name == "paragraph" else _BLOCK, first, stop, ""))
        if name in _LISTS:
            found.extend(
                (_LIST_ITEM, *lines(item.srcmap), "") for item in node.children if item.srcmap
            )
        if name not in _CONTAINERS or not _may_nest(text[starts[first] : starts[stop]]):
            continue
        # Depth first, in document order, each node with its token level in markdown-it-py.
        stack = [(inner, 1) for inner in reversed(node.children)]
        while stack:
            inner, level = stack.pop()
            if level >= _DEEPEST:
                return None
            stack.extend((child, level + 1) for child in reversed(inner.children))
            if inner.name not in _CODE or inner.srcmap is None:
                continue
            code_first, code_stop = lines(inner.srcmap)
            if inner.name == "fence":
                closing_start = bounds[code_stop - 1 - line_shift] - shift
                closing = data[closing_start : inner.srcmap[1]]
                marker = (inner.meta["marker"] * inner.meta["marker_len"]).encode()
                closing = closing.lstrip(b" \t>")
                if code_stop - code_first < 2 or closing.rstrip(b"`~ \t") or marker not in closing:
                    return None
            found.append((_NESTED_CODE, code_first, code_stop, ""))
    return found


_NEWLINE = re.compile(b"\n")
# A line that starts with twelve characters of container markers and indentation,
# searched for as `_DEEP_LINE`.
_NESTING_LINE = re.compile(r"\n[ \t>*+\-0-9.)]{12}")


def _may_nest(lines: str) -> bool:
    """Whether a list's or quote's lines may hold a code block, or a node at token level
    `_DEEPEST`; if not, `fast_blocks` need not walk its nested nodes.

    A fence opens with three backticks or tildes in a row. An indented code block needs
    four columns of indentation past its container's content column: its line holds a
    tab or four spaces in a row. Below a list or quote, a node is at most four levels
    deeper than the innermost container above it (a table's cell's text), so level 16
    takes twelve containers (a list counts two: the list and its item), all of them open
    on the line where that node starts. That line starts with a `>` for each quote and,
    for each list, its item's marker and a space or two columns of indentation: where
    it holds no tab, with twelve characters at least."""
    return (
        "```" in lines
        or "~~~" in lines
        or "\t" in lines
        or "    " in lines
        or _NESTING_LINE.search("\n" + lines) is not None
    )


def _front_matter_stop(text: str, starts: list[int]) -> int:
    """The line after the front matter, or 0 if the document has none: mdit-py-plugins'
    front matter rule, line for line. It opens with three dashes or more at the start
    of the document and closes at a line of at least as many dashes (indented less than
    four columns) or a `...` line, before the document ends."""
    if not text.startswith("---"):
        return 0
    # markdown-it counts no line after a final newline.
    count = len(starts) - (2 if text.endswith("\n") else 1)
    opening = text[: starts[1] - 1]
    marker = len(opening) - len(opening.lstrip("-"))
    for number in range(1, count):
        line = text[starts[number] : starts[number + 1] - 1]
        body = line.lstrip(" \t")
        if line.startswith("...") and not line[3:].strip(" \t"):
            return number + 1
        if not body.startswith("-") or _columns(line[: len(line) - len(body)]) >= 4:
            continue
        dashes = len(body) - len(body.lstrip("-"))
        if dashes >= marker and not body[dashes:].strip(" \t"):
            return number + 1
    return 0


def _columns(indent: str) -> int:
    """The width of spaces and tabs at a line's start, a tab to the next multiple of 4."""
    width = 0
    for character in indent:
        width = width + 4 - width % 4 if character == "\t" else width + 1
    return width


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
    # The blocks that are paragraphs (prose), in order, and where each item of a
    # top-level list starts: for the semantic policy's sentences (`sentence_units`).
    paragraphs: tuple[Span, ...] = ()
    items: tuple[int, ...] = ()

    def units(self, text: str) -> list[Span]:
        """The blocks, each from its first character to the end of its last line (newline
        included), like grammar v1's paragraphs; found with the section."""
        return list(self.blocks)

    def split(self, text: str, unit: Span, size: int, measure: Unit) -> list[Piece]:
        """A block larger than the size, cut between lines (`split_block`), never inside
        a code block nested in it that fits in the size."""
        code = self.nested_code
        inside = code[bisect_left(code, (unit[0], 0)) : bisect_left(code, (unit[1], 0))]
        what = ("split", unit, size, measure.name, inside)
        return once(text, what, lambda: split_block(text, unit, size, measure, inside))

    def sentence_units(self, text: str) -> list[tuple[Span, bool]]:
        """The blocks, a top-level list's cut where each of its items starts, each with
        whether it is a paragraph."""
        paragraphs = set(self.paragraphs)
        items = self.items
        found: list[tuple[Span, bool]] = []
        for start, end in self.blocks:
            inside = items[bisect_right(items, start) : bisect_left(items, end)]
            bounds = [start, *inside, end]
            prose = (start, end) in paragraphs
            found.extend(((a, b), prose) for a, b in pairwise(bounds))
        return found


def line_starts(text: str) -> list[int]:
    """Where each line starts; one more entry than lines, past the end of the text."""
    return list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))


def heading_levels(text: str) -> list[tuple[int, int, str]]:
    """Every top-level heading's start, level (ATX: its number of '#'; setext: 1 under
    '=', 2 under '-') and title, in order."""
    starts = line_starts(text)
    found = []
    for kind, first, stop, title in top_blocks(text, starts):
        if kind != _HEADING:
            continue
        line = text[starts[first] : starts[first + 1]].lstrip(" ")
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
        else:
            underline = text[starts[stop - 1] : starts[stop]].strip()
            level = 1 if underline.startswith("=") else 2
        found.append((starts[first], level, title))
    return found


def sections(text: str) -> list[MarkdownSection]:
    """Every section that has a block, in document order; never refuses a document."""
    starts = line_starts(text)
    return sections_of(text, starts, top_blocks(text, starts))


def sections_of(text: str, starts: list[int], found: Iterable[Found]) -> list[MarkdownSection]:
    """The sections of the blocks a parser found (`top_blocks`), lines at `starts`."""
    length = len(text)
    # Where each line starts, the last entry (past the text's end) at its end.
    at = starts.copy()
    at[-1] = length

    def is_blank(line: int) -> bool:
        begin = at[line]
        return begin == length or (text[begin].isspace() and text[begin : at[line + 1]].isspace())

    result: list[MarkdownSection] = []
    # The open section: its heading's start, title and body's start, and its blocks.
    heading_start, title, body_start = 0, "", 0
    blocks: list[Span] = []
    nested_code: list[Span] = []
    paragraphs: list[Span] = []
    items: list[int] = []

    def add_block(first: int, stop: int) -> None:
        """Lines `[first, stop)` without blank lines at either end; none if all are blank.

        A line of other whitespace (U+00A0…) is text to CommonMark, blank to grammar v1.
        """
        while stop > first and is_blank(stop - 1):
            stop -= 1
        while first < stop and is_blank(first):
            first += 1
        if stop > first:
            blocks.append((at[first], at[stop]))

    def add_lines(first: int, stop: int) -> None:
        """Lines no token covers (link reference definitions): runs of non-blank lines."""
        if stop <= first or text[at[first] : at[stop]].isspace():
            return
        run = first
        for line in range(first, stop):
            if is_blank(line):
                add_block(run, line)
                run = line + 1
        add_block(run, stop)

    def close(end: int) -> None:
        if blocks:
            found = MarkdownSection(
                heading_start,
                title,
                body_start,
                end,
                tuple(blocks),
                tuple(nested_code),
                tuple(paragraphs),
                tuple(items),
            )
            result.append(found)

    covered = 0  # the first line after the last top-level block
    for kind, first, stop, heading_title in found:
        if kind == _NESTED_CODE:
            nested_code.append((at[first], at[stop]))
            continue
        if kind == _LIST_ITEM:
            items.append(at[first])
            continue
        add_lines(covered, first)
        covered = stop
        if kind == _HEADING:
            close(at[first])
            blocks, nested_code, paragraphs, items = [], [], [], []
            heading_start, body_start = at[first], at[stop]
            title = heading_title
        else:
            held = len(blocks)
            add_block(first, stop)
            if kind == _PARAGRAPH and len(blocks) > held:
                paragraphs.append(blocks[-1])
    add_lines(covered, len(starts) - 1)
    close(length)
    return result


def split_block(
    text: str, block: Span, size: int, unit: Unit, keep: Sequence[Span] = ()
) -> list[Piece]:
    """A block in pieces of at most `size`, cut between lines where one can be, each
    group of lines with its measure (a piece of a line with its measure or without).

    Neighbouring lines are grouped greedily; a line larger than `size` on its own is cut
    in its sentences, words or windows (`line_pieces`). Each span of `keep` (whole lines,
    in order: code nested in the block) that fits in `size` counts as one line, so no cut
    falls inside it. Token counts of lines do not always add up, so a group of lines is
    measured as a whole (`Measures.run`, or counted again) and gives back lines until it
    fits.
    """
    start, end = block
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
    measures = unit.measure_units(text, lines)
    whole_measure = _measure_lines(text, lines, measures, unit, 0, len(lines))
    if whole_measure <= size:
        return [(block, whole_measure)]
    costs = measures.costs
    pieces: list[Piece] = []
    first = 0
    while first < len(lines):
        if costs[first] > size:
            pieces.extend(line_pieces(text, *lines[first], size, unit))
            first += 1
            continue
        stop, total = first, 0
        while stop < len(lines) and total + costs[stop] <= size:
            total += costs[stop]
            stop += 1
        measure = _measure_lines(text, lines, measures, unit, first, stop)
        while stop - first > 1 and measure > size:
            stop -= 1
            measure = _measure_lines(text, lines, measures, unit, first, stop)
        pieces.append(((lines[first][0], lines[stop - 1][1]), measure))
        first = stop
    return pieces


def _measure_lines(
    text: str, lines: list[Span], measures: Measures, unit: Unit, first: int, stop: int
) -> int:
    """The measure of lines `[first, stop)` as one text: summed where it can be."""
    summed = measures.run(first, stop - 1)
    if summed is not None:
        return summed
    return unit.measure(text[lines[first][0] : lines[stop - 1][1]])
