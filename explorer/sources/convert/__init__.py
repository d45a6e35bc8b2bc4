"""Documents as users have them (PDF, Word, HTML) converted offline to Markdown text.

One module per format behind `Converter`, and one registry line each (`CONVERTERS`):
the loader asks `converter_for(path)` after the file's SHA-256 is verified and before
any text is decoded. A converter's identity (name, version, options) enters the
document's revision, so another converter version makes another revision, never a
silent change. Conversions are cached by the file's SHA-256 and that identity.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from ...digests import digest
from .base import (
    DEFAULT_MAX_PAGES,
    Converted,
    Converter,
    ConverterInfo,
    require_pages,
)
from .docx import DOCX
from .html import HTML
from .pdf import PDF

__all__ = [
    "CONVERTERS",
    "DEFAULT_MAX_PAGES",
    "Converted",
    "Converter",
    "ConverterInfo",
    "convert",
    "converter_for",
]

# The registry: a new format is one module and one line here.
CONVERTERS: tuple[Converter, ...] = (PDF, DOCX, HTML)
_BY_SUFFIX = {suffix: c for c in CONVERTERS for suffix in c.suffixes}
CONVERTED_SUFFIXES = tuple(_BY_SUFFIX)


def converter_for(path: str) -> Converter | None:
    """The converter of a manifest path's suffix, or None for a text file."""
    return _BY_SUFFIX.get(PurePosixPath(path).suffix.lower())


class _Cache:
    """The latest conversions by (file SHA-256, converter identity), up to a number of
    characters in all, so re-running a comparison never converts a file again."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[tuple[str, str], Converted] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> Converted | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple[str, str], value: Converted) -> None:
        with self._lock:
            if key in self._entries or len(value.text) > self.max_chars:
                return
            self._entries[key] = value
            self._chars += len(value.text)
            while self._chars > self.max_chars:
                _, dropped = self._entries.popitem(last=False)
                self._chars -= len(dropped.text)


_CACHE = _Cache(max_chars=64 * 1024 * 1024)


def convert(converter: Converter, path: str, data: bytes, sha256: str, max_pages: int) -> Converted:
    """`converter.convert`, or its cached result for the same bytes (by `sha256`, already
    verified) and the same converter identity. A cached result longer than `max_pages` is
    refused as a new conversion would be."""
    key = (sha256, digest(converter.info()))
    found = _CACHE.get(key)
    if found is None:
        found = converter.convert(path, data, max_pages)
        _CACHE.put(key, found)
    elif found.page_starts is not None:
        require_pages(path, len(found.page_starts), max_pages)
    return found
