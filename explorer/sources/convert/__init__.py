"""Documents as users have them (PDF, Word, HTML) converted offline to Markdown text.

One module per format behind `Converter`, and one registry line each (`CONVERTERS`):
the loader asks `converter_for(path)` after the file's SHA-256 is verified and before
any text is decoded. A converter's identity (name, version, options) enters the
document's revision, so another converter version makes another revision, never a
silent change. Conversions are cached by the file's SHA-256 and that identity, and so
are refusals (with the limits they were made under): a file is converted once, however
many times it is asked for.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import PurePosixPath

from ...digests import digest
from ...errors import ExplorerError
from .base import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_PAGES,
    Converted,
    Converter,
    ConverterInfo,
    require_chars,
    require_pages,
)
from .docx import DOCX
from .html import HTML
from .pdf import PDF

__all__ = [
    "CONVERTERS",
    "DEFAULT_MAX_CHARS",
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


# A conversion by (file SHA-256, converter identity); a refusal by those, the limits and
# the path it names. A refusal is kept without its traceback (which holds the text).
_Key = tuple[str, ...]
_Entry = Converted | ExplorerError


def _size(entry: _Entry) -> int:
    return len(entry.text) if isinstance(entry, Converted) else len(entry.detail)


class _Cache:
    """The latest conversions and refusals, up to a number of characters in all, so
    re-running a comparison (or the app asking twice) never converts a file again."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: _Key) -> _Entry | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: _Key, value: _Entry) -> None:
        with self._lock:
            if key in self._entries or _size(value) > self.max_chars:
                return
            self._entries[key] = value
            self._chars += _size(value)
            while self._chars > self.max_chars:
                _, dropped = self._entries.popitem(last=False)
                self._chars -= _size(dropped)


_CACHE = _Cache(max_chars=64 * 1024 * 1024)


def convert(
    converter: Converter,
    path: str,
    data: bytes,
    sha256: str,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> Converted:
    """`converter.convert`, or its cached result for the same bytes (by `sha256`, already
    verified) and the same converter identity: a cached text of more pages or characters
    than the limits is refused as a new conversion would be, and a refusal under the same
    limits is given again without converting."""
    identity = digest(converter.info())
    key = (sha256, identity)
    refusal_key = (*key, str(max_pages), str(max_chars), path)
    found = _CACHE.get(key) or _CACHE.get(refusal_key)
    if isinstance(found, ExplorerError):
        raise ExplorerError(found.code, found.detail)
    if found is None:
        try:
            found = converter.convert(path, data, max_pages, max_chars)
        except ExplorerError as error:
            _CACHE.put(refusal_key, ExplorerError(error.code, error.detail))
            raise
        _CACHE.put(key, found)
        return found
    if found.page_starts is not None:
        require_pages(path, len(found.page_starts), max_pages)
    require_chars(path, len(found.text), max_chars)
    return found
