"""The sentence rule of the semantic policy (docs/contract.md §5d), in one pass.

A prose unit's sentences tile it: each runs from its first character to where the next
one starts, so that a run of sentences covers exactly what the unit covers. A sentence
ends after a run of `.`, `!` or `?`, any closing quotes or brackets after it, and the
whitespace after those, when the character after the whitespace is an upper-case letter,
a digit or an opening quote or bracket; except after a single `.` that follows an
abbreviation (`ABBREVIATIONS`), one letter (an initial) or a word with a `.` inside
(`e.g`, `U.S`, `example.com`).

A long line under the markdown grammar is cut by another, simpler rule (`grammars.prose`,
§4b): using either rule in the other's place changes that side's recorded chunks.
"""

from __future__ import annotations

import re

from ..grammars.v1 import Span

# The lookbehind starts a match only at the start of a run of end marks, so a long run
# of them is matched once, not once per mark: linear in the text.
_END = re.compile(r"(?<![.!?])[.!?]++[\"')\]\u2019\u201d]*+\s++")
_OPENING = frozenset("\"'([\u2018\u201c")
ABBREVIATIONS = frozenset(
    {"approx", "cf", "dr", "fig", "jr", "mr", "mrs", "ms", "no", "prof", "sr", "st", "vol", "vs"}
)
# The longest abbreviation, and a little more: the word before a `.` is read this far.
_WORD_CHARS = 8


def _ends_here(text: str, mark: int, low: int) -> bool:
    """Whether the single `.` at `mark` may end a sentence: the word before it (back to
    whitespace or `low`) is not an abbreviation, an initial, or dotted."""
    first = max(low, mark - _WORD_CHARS)
    before = text[first:mark]
    cut = max(before.rfind(" "), before.rfind("\n"), before.rfind("\t"))
    if cut < 0 and first > low:
        return True  # a word longer than any abbreviation
    word = before[cut + 1 :].lstrip("\"'([\u2018\u201c*_`").casefold()
    return not (word in ABBREVIATIONS or len(word) == 1 or "." in word)


def sentences(text: str, start: int, end: int) -> list[Span]:
    """The sentences of prose `text[start:end]` (non-blank), tiling it."""
    spans: list[Span] = []
    begin = start
    for match in _END.finditer(text, start, end):
        after = match.end()
        if after >= end:
            break
        following = text[after]
        if not (following.isupper() or following.isdigit() or following in _OPENING):
            continue
        marks = match.group().rstrip()
        if marks.rstrip("\"')]\u2019\u201d") == "." and not _ends_here(text, match.start(), begin):
            continue
        spans.append((begin, after))
        begin = after
    spans.append((begin, end))
    return spans
