"""Placing chunks in their document (docs/contract.md §5c): at their offsets, checked,
or located in order, exactly first, then ignoring whitespace (chunkers strip and join) and
unprintable characters (LangChain's Markdown splitter drops them).
Imported chunk files and the libraries behind live columns both place chunks here."""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from ..errors import ErrorCode, ExplorerError
from ..grammars.v1 import Span

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class Entry(NamedTuple):
    """One chunk of a file, whatever its shape: what it says and where it claims to be."""

    number: int  # 1-based, in file order
    text: str
    source_id: str | None
    path: str | None
    start: int | None
    end: int | None


class Placed(NamedTuple):
    span: Span
    loose: bool = False  # located ignoring whitespace and unprintable characters
    converted: bool = False  # offsets taken before CRLF normalization, converted


def _preview(text: str) -> str:
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


class Document:
    """One document's text, and what placing chunks in it needs, computed once."""

    def __init__(self, source_id: str, text: str) -> None:
        self.source_id = source_id
        self.text = text
        self._missed = 0  # characters read by searches that found nothing

    @cached_property
    def _crs_at(self) -> list[int]:
        # Where each "\r" of a CRLF file stood, if every "\n" had been "\r\n".
        return [at + i for i, at in enumerate(m.start() for m in re.finditer("\n", self.text))]

    def normalized(self, raw: int) -> int:
        """A raw CRLF file's offset as an offset of the normalized text."""
        return raw - bisect_left(self._crs_at, raw)

    def where(self, entry: Entry) -> str:
        return f"chunk {entry.number} of {self.source_id!r} ({_preview(entry.text)})"

    def holds(self, entry: Entry) -> bool:
        """Whether the chunk's start (and end, if given) hold its text."""
        start = entry.start if entry.start is not None else -1
        stop = start + len(entry.text)
        return start >= 0 and entry.end in (None, stop) and self.text[start:stop] == entry.text

    def _held(self, entry: Entry, start: int, end: int | None, raw: bool) -> Span | None:
        """The span the chunk's offsets give, if it holds the chunk's text: offsets of
        the normalized text, or (`raw`) of the text before CRLF normalization."""
        stop = start + len(entry.text) if end is None else end
        text = entry.text
        if raw:
            start, stop = self.normalized(start), self.normalized(stop)
            text = normalize_newlines(text)
        if 0 <= start < stop <= len(self.text) and self.text[start:stop] == text:
            return start, stop
        return None

    def raw_offsets(self, entries: Sequence[Entry]) -> bool:
        """Whether this document's chunks give offsets of the raw CRLF text: decided once
        for all of them, by the chunks whose offsets hold only one way (a chunk whose text
        also stands at its raw offsets, in a repeated run, follows its neighbours)."""
        only_raw = False
        for entry in entries:
            if entry.start is None:
                continue
            normal = self._held(entry, entry.start, entry.end, raw=False) is not None
            raw = self._held(entry, entry.start, entry.end, raw=True) is not None
            if normal and not raw:
                return False
            only_raw = only_raw or (raw and not normal)
        return only_raw

    def at_offsets(self, entry: Entry, start: int, end: int | None, raw: bool) -> Placed:
        """The span the chunk's offsets give, checked against the text."""
        span = self._held(entry, start, end, raw)
        if span is not None:
            return Placed(span, converted=raw)
        stop = start + len(entry.text) if end is None else end
        held = self.text[max(start, 0) : max(stop, 0)]
        kind = "CRLF offsets, as this document's other chunks give" if raw else "offsets"
        raise ExplorerError(
            ErrorCode.INVALID_CHUNK_FILE,
            f"{self.where(entry)}: its {kind} [{start}, {stop}) hold {_preview(held)}, "
            "not its text",
        )

    @cached_property
    def _runs(self) -> _Runs:
        return _Runs(self.text)

    def locate(self, entry: Entry, origin: int) -> Placed:
        """The chunk's first place from `origin` on: exactly, else ignoring whitespace and
        unprintable characters (`visible_runs`).
        Its first place without whitespace is found first (`str.find` on the text without
        whitespace, stopping there); an exact copy is then looked for up to twice as far
        (at least `EXACT_REACH` characters further), so a search costs about the distance
        it covers, and the chunks of a file in order scan their document about once."""
        text = normalize_newlines(entry.text)
        bare = "".join(run for _, run in visible_runs(text))
        if not bare:  # only whitespace: exactly or not at all
            at = self.text.find(text, origin)
            if at >= 0:
                return Placed((at, at + len(text)))
            self._missed += len(self.text) - origin
        else:
            span, missed = self._runs.find(bare, origin)
            self._missed += missed
            if span is not None:
                reach = span[1] + max(span[1] - origin, EXACT_REACH) + len(text)
                at = self.text.find(text, origin, reach)
                if at >= 0:
                    return Placed((at, at + len(text)))
                return Placed(span, loose=True)
        if self._missed > MAX_MISSED:
            raise ExplorerError(
                ErrorCode.TOO_MANY_CHUNKS,
                f"the chunks of {self.source_id!r} that are nowhere in it took searches of "
                f"more than {MAX_MISSED:,} characters, the limit (chunk {entry.number} is "
                "the last searched for): are they this document's?",
            )
        raise ExplorerError(
            ErrorCode.CHUNK_NOT_FOUND,
            f"{self.where(entry)} is not in the document from offset {origin} on, exactly "
            "or ignoring whitespace and unprintable characters",
        )


_NON_BLANK = re.compile(r"\S+")


def visible_runs(text: str) -> Iterator[tuple[int, str]]:
    """Where each run of visible characters starts, and the run: characters that are
    neither white space nor unprintable (`str.isprintable`: a zero-width joiner, a soft
    hyphen, a byte-order mark…), which LangChain's Markdown splitter drops from its lines."""
    for match in _NON_BLANK.finditer(text):
        run = match.group()
        if run.isprintable():
            yield match.start(), run
            continue
        begin = None
        for at, character in enumerate(run):
            if character.isprintable():
                begin = at if begin is None else begin
            elif begin is not None:
                yield match.start() + begin, run[begin:at]
                begin = None
        if begin is not None:
            yield match.start() + begin, run[begin:]


# How far past its first loose place an exact copy of a chunk is still preferred.
EXACT_REACH = 16 * 1024
# What the searches that find nothing may read of one document in all, a second or so: a
# chunk that is nowhere costs a pass over the rest of the text unless `_Grams` rules it
# out first, and chunks made to pass `_Grams` (or only blanks) would cost one pass each.
MAX_MISSED = 1 << 30


class _Grams:
    """Which strings of up to `MAX_GRAM` characters a text holds, and the last place of
    each (hashed, in numpy; a table per length, made when first asked): a search for a
    string with a piece the text does not hold at or after the right place can answer
    "nowhere" without a pass over the text. A hash collision only sends the search on to
    `str.find`, so the answer is never wrong."""

    def __init__(self, text: str) -> None:
        import numpy as np  # only once a chunk was nowhere

        self._codes = np.frombuffer(text.encode("utf-32-le"), np.uint32).astype(np.uint64)
        self._tables: dict[int, tuple[NDArray[np.uint64], NDArray[np.int64]]] = {}

    @staticmethod
    def _hashes(codes: NDArray[np.uint64], size: int) -> NDArray[np.uint64]:
        """The hash of each `size` characters of `codes` (wrapping 64-bit arithmetic)."""
        import numpy as np

        count = len(codes) - size + 1
        hashes = np.zeros(count, np.uint64)
        for shift in range(size):
            hashes *= np.uint64(_BASE)
            hashes += codes[shift : shift + count]
        return hashes

    def _table(self, size: int) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
        """Each distinct hash of `size` characters, sorted, and the last place it stands."""
        import numpy as np

        if size not in self._tables:
            hashes = self._hashes(self._codes, size)
            order = np.argsort(hashes, kind="stable")  # places rise within a hash
            ordered = hashes[order]
            last = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))
            self._tables[size] = ordered[last], order[last]
        return self._tables[size]

    def may_hold(self, piece: str, begin: int) -> bool:
        """False when the text surely holds `piece` nowhere from `begin` on."""
        import numpy as np

        size = min(len(piece), MAX_GRAM)
        if len(self._codes) - begin < len(piece):
            return False
        known, last = self._table(size)
        codes = np.frombuffer(piece.encode("utf-32-le"), np.uint32).astype(np.uint64)
        wanted = self._hashes(codes, size)
        at = np.minimum(np.searchsorted(known, wanted), len(known) - 1)
        needed = begin + np.arange(len(wanted))  # a match from `begin` on puts each there
        return bool(np.all((known[at] == wanted) & (last[at] >= needed)))


MAX_GRAM = 8
_BASE = 0x9E3779B97F4A7C15  # odd: a multiplier that loses no bit


class _Runs:
    """A text without its whitespace and unprintable characters (`bare`), and where each
    of its visible runs starts in the text and in `bare` (a last entry past the end), to
    map back; once a search has failed, the pieces `bare` holds, so that further failures
    cost no pass."""

    def __init__(self, text: str) -> None:
        runs = list(visible_runs(text))
        self.offsets = array("q", [0])  # one per run, then len(bare)
        total = 0
        for _, run in runs:
            total += len(run)
            self.offsets.append(total)
        self.starts = array("q", (start for start, _ in runs))  # one per run
        self.bare = "".join(run for _, run in runs)
        self._grams: _Grams | None = None  # made at the first failure

    def _position(self, index: int) -> int:
        """Where `bare[index]` stands in the text."""
        run = bisect_right(self.offsets, index) - 1
        return self.starts[run] + index - self.offsets[run]

    def find(self, bare: str, origin: int) -> tuple[Span | None, int]:
        """The first span from `origin` on whose text, without whitespace, is `bare`:
        from its first non-blank character to its last; and the characters read where
        there is none (none read when `_Grams` rules it out)."""
        run = bisect_right(self.starts, origin) - 1
        if run < 0:
            begin = 0
        else:
            length = self.offsets[run + 1] - self.offsets[run]
            inside = origin - self.starts[run]
            begin = self.offsets[run] + inside if inside < length else self.offsets[run + 1]
        if self._grams is not None and not self._grams.may_hold(bare, begin):
            return None, 0
        at = self.bare.find(bare, begin)
        if at < 0:
            if self._grams is None:  # a file with one chunk that is nowhere may have many
                self._grams = _Grams(self.bare)
            return None, len(self.bare) - begin
        return (self._position(at), self._position(at + len(bare) - 1) + 1), 0


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR as LF, as documents are normalized (docs/contract.md §3)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def locate_in_order(
    document: Document, entries: Sequence[Entry], offsets_must_hold: bool = True
) -> Iterator[tuple[Entry, Placed | ExplorerError]]:
    """Each chunk's place, or why it has none. A chunk without offsets is searched for from
    the previous chunk's start (after it, when the two chunks say the same). Offsets that
    do not hold the chunk's text are refused, or, unless `offsets_must_hold`, ignored;
    whether they are raw CRLF offsets is decided for the document, not chunk by chunk."""
    origin, previous = 0, None
    raw = offsets_must_hold and document.raw_offsets(entries)
    for entry in entries:
        try:
            if entry.start is not None and offsets_must_hold:
                placed = document.at_offsets(entry, entry.start, entry.end, raw)
            elif entry.start is not None and document.holds(entry):
                placed = Placed((entry.start, entry.start + len(entry.text)))
            else:
                again = previous is not None and entry.text == previous.text
                placed = document.locate(entry, origin + again)
        except ExplorerError as error:
            if error.code is ErrorCode.TOO_MANY_CHUNKS:  # not one chunk's: the file's
                raise
            yield entry, error
            continue
        origin, previous = placed.span[0], entry
        yield entry, placed


def locate_pieces(
    text: str, pieces: Sequence[tuple[str, int | None]], name: str = "the document"
) -> list[Span]:
    """A library's chunks (text, and its start where the library gives one) as spans of
    `text`; a start that does not hold the chunk's text is searched for instead."""
    entries = [
        Entry(n, piece, None, None, start, None) for n, (piece, start) in enumerate(pieces, 1)
    ]
    spans: list[Span] = []
    for _, placed in locate_in_order(Document(name, text), entries, offsets_must_hold=False):
        if isinstance(placed, ExplorerError):
            raise placed
        spans.append(placed.span)
    return spans


__all__ = ["Document", "Entry", "Placed", "locate_in_order", "locate_pieces"]
