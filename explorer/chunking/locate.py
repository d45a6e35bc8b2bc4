"""Placing chunks in their document (docs/contract.md §5c): at their offsets, checked,
or located in order, exactly first, then ignoring whitespace (chunkers strip and join).
Imported chunk files and the libraries behind live columns both place chunks here."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import NamedTuple

from ..errors import ErrorCode, ExplorerError
from ..grammars.v1 import Span


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
    loose: bool = False  # located ignoring whitespace
    converted: bool = False  # offsets taken before CRLF normalization, converted


def _preview(text: str) -> str:
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


class Document:
    """One document's text, and what placing chunks in it needs, computed once."""

    def __init__(self, source_id: str, text: str) -> None:
        self.source_id = source_id
        self.text = text

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

    def at_offsets(self, entry: Entry, start: int, end: int | None) -> Placed:
        """The span the chunk's offsets give, checked against the text."""
        stop = start + len(entry.text) if end is None else end
        if 0 <= start < stop <= len(self.text) and self.text[start:stop] == entry.text:
            return Placed((start, stop))
        text = normalize_newlines(entry.text)
        begin, finish = self.normalized(start), self.normalized(stop)
        if 0 <= begin < finish <= len(self.text) and self.text[begin:finish] == text:
            return Placed((begin, finish), converted=True)
        held = self.text[max(start, 0) : max(stop, 0)]
        raise ExplorerError(
            ErrorCode.INVALID_CHUNK_FILE,
            f"{self.where(entry)}: its offsets [{start}, {stop}) hold {_preview(held)}, "
            "not its text, in the normalized document or with CRLF offsets",
        )

    def locate(self, entry: Entry, origin: int) -> Placed:
        """The chunk's first place from `origin` on: exactly, else ignoring whitespace."""
        text = normalize_newlines(entry.text)
        at = self.text.find(text, origin)
        if at >= 0:
            return Placed((at, at + len(text)))
        words = text.split()
        if words and sum(map(len, words)) <= len(self.text) - origin:
            found = re.compile(r"\s*".join(map(re.escape, words))).search(self.text, origin)
            if found is not None:
                return Placed((found.start(), found.end()), loose=True)
        raise ExplorerError(
            ErrorCode.CHUNK_NOT_FOUND,
            f"{self.where(entry)} is not in the document from offset {origin} on, exactly "
            "or ignoring whitespace",
        )


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR as LF, as documents are normalized (docs/contract.md §3)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def locate_in_order(
    document: Document, entries: Sequence[Entry], offsets_must_hold: bool = True
) -> Iterator[tuple[Entry, Placed | ExplorerError]]:
    """Each chunk's place, or why it has none. A chunk without offsets is searched for from
    the previous chunk's start (after it, when the two chunks say the same). Offsets that
    do not hold the chunk's text are refused, or, unless `offsets_must_hold`, ignored."""
    origin, previous = 0, None
    for entry in entries:
        try:
            if entry.start is not None and offsets_must_hold:
                placed = document.at_offsets(entry, entry.start, entry.end)
            elif entry.start is not None and document.holds(entry):
                placed = Placed((entry.start, entry.start + len(entry.text)))
            else:
                again = previous is not None and entry.text == previous.text
                placed = document.locate(entry, origin + again)
        except ExplorerError as error:
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
