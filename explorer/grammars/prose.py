"""Where a line longer than the size is cut (docs/contract.md §4b): after a sentence,
else between words, and inside a word only when one word alone is longer than the size.

A long one-line paragraph (a filing's, a generated page's) would otherwise be cut by
the unit's windows, inside words and numbers ("valua|tion", "0|.25%"). Its pieces are
its sentences, so that packing them cuts at the last sentence end that fits and an
overlap repeats whole sentences. The semantic policy splits prose by its own, stricter
rule (`chunking.sentences`, §5d): using either rule in the other's place changes that
side's recorded chunks.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

from .units import Unit
from .v1 import Piece, Span

# A sentence ends with . ! ? or …, then perhaps closing quotes, brackets or emphasis.
SENTENCE_END = "[.!?\u2026][\"'\u201d\u2019\u00bb)\\]}*_`]*"
# A sentence's end inside a line: white space follows it (its run is `\s+`).
_SENTENCE_BREAK = re.compile(SENTENCE_END + r"(?=\s)")
_SPACE_RUN = re.compile(r"\s+")
_WORD_END = re.compile(r"\S\s")


def line_pieces(text: str, start: int, end: int, size: int, unit: Unit) -> list[Piece]:
    """The line `text[start:end]` in pieces that each measure at most `size` (but a
    single character that alone is more): its sentences, a sentence larger than the size
    cut greedily at the last white space that fits, a word larger than the size by the
    unit's windows. White space where a piece ends inside the line belongs to no piece;
    the first piece starts at `start`, and a sentence that fits ends the line at `end`."""
    pieces: list[Piece] = []
    for sentence_start, sentence_end in _sentences(text, start, end):
        measure = unit.measure_span(text, sentence_start, sentence_end)
        if measure <= size:
            pieces.append(((sentence_start, sentence_end), measure))
        else:
            words = _between_words(text, sentence_start, sentence_end, size, unit)
            pieces.extend((span, None) for span in words)
    return pieces


def _sentences(text: str, start: int, end: int) -> Iterator[Span]:
    """The sentences of a line, each from its first character to its end (the line's
    last to the line's end, its newline included)."""
    begin = start
    for found in _SENTENCE_BREAK.finditer(text, start, end):
        space = _SPACE_RUN.match(text, found.end(), end)
        after = space.end() if space is not None else found.end()
        if after >= end:
            break  # the line's last sentence ends with the line
        yield begin, found.end()
        begin = after
    yield begin, end


def _between_words(text: str, start: int, end: int, size: int, unit: Unit) -> Iterator[Span]:
    """`text[start:end]` (larger than `size`) cut greedily at the last white space that
    fits, or where the unit's window ends when no white space does."""
    position = start
    while position < end:
        stop = unit.reach(text, position, end, size)
        if stop >= end:
            yield position, end
            return
        # The last word's end followed by white space, at most at `stop`.
        last = deque(_WORD_END.finditer(text, position, stop + 1), maxlen=1)
        if last:
            words_end = last[0].start() + 1
        else:
            # One word alone is larger than the size: its windows but the last, which
            # may share a piece with the words after it.
            found = _WORD_END.search(text, stop, end)
            words_end = found.start() + 1 if found is not None else end
            windows = list(unit.cut(text, position, words_end, size))
            if len(windows) > 1:
                yield from windows[:-1]
                position = windows[-1][0]
                continue
        yield position, words_end
        space = _SPACE_RUN.match(text, words_end, end)
        position = space.end() if space is not None else words_end
