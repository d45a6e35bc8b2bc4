"""Verified loading (docs/contract.md §3): bytes are checked against the manifest before decoding.

Reading is the only I/O, and it sits behind `SourceReader`: a folder on disk, or files
already in memory (an upload). Everything after the bytes are in hand is pure.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Final, Literal, Protocol

from ..digests import sha, sha_bytes
from ..errors import ErrorCode, ExplorerError
from .convert import DEFAULT_MAX_CHARS, DEFAULT_MAX_PAGES, convert, converter_for
from .documents import DocumentRecord, converted_fields, document_record
from .manifest import Manifest, ManifestDocument

DEFAULT_MAX_DOCUMENT_BYTES = 1024 * 1024
# The most `--max-document-bytes` may raise it to: an upload holds at most as much.
MAX_DOCUMENT_BYTES_LIMIT = 64 * 1024 * 1024
# All the documents of one manifest together, and the most `--max-total-bytes` may raise it to.
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES_LIMIT = 4 * 1024 * 1024 * 1024
# A document's status: "ok", or the code that refused it.
OK: Final = "ok"


class SourceReader(Protocol):
    def read(self, path: str, max_bytes: int) -> bytes:
        """The raw bytes at a manifest path, or `source_not_found`, `document_too_large`,
        `path_outside_manifest`."""
        ...


def check_relative_path(path: str) -> PurePosixPath:
    """A plain `/`-separated path that cannot leave the manifest's folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or path.startswith("~"):
        raise ExplorerError(
            ErrorCode.PATH_OUTSIDE_MANIFEST,
            f"{path!r} must be relative to the manifest's folder, with '/' between names",
        )
    if ".." in pure.parts or pure.parts in ((), (".",)):
        raise ExplorerError(
            ErrorCode.PATH_OUTSIDE_MANIFEST, f"{path!r} leads outside the manifest's folder"
        )
    return pure


_READ_PIECE = 1024 * 1024


def read_at_most(handle: BinaryIO, limit: int) -> bytes | None:
    """All of `handle` if it holds at most `limit` bytes, else None. Read in pieces:
    `read(limit + 1)` would set aside `limit` bytes up front, however small the file."""
    pieces: list[bytes] = []
    total = 0
    while total <= limit:
        piece = handle.read(min(_READ_PIECE, limit + 1 - total))
        if not piece:
            return b"".join(pieces)
        pieces.append(piece)
        total += len(piece)
    return None


def _too_large(path: str, max_bytes: int) -> ExplorerError:
    return ExplorerError(
        ErrorCode.DOCUMENT_TOO_LARGE, f"{path!r} is larger than the limit of {max_bytes:,} bytes"
    )


@dataclass(frozen=True)
class DirectoryReader:
    """Files below one folder (the manifest's); links may not lead out of it."""

    base: Path
    # Each sub-folder's real path, resolved once for all the files in it.
    _folders: dict[PurePosixPath, str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @cached_property
    def _root(self) -> str:
        """The folder's real path, resolved once for all its files."""
        return os.path.realpath(self.base)

    def _real_path(self, relative: PurePosixPath) -> str:
        """`os.path.realpath(root / relative, strict=True)`, without resolving the same
        folders again for every file: the file's folder once, then its own name (a link
        resolved in full). OSError if nothing is there."""
        folder = self._folders.get(relative.parent)
        if folder is None:
            folder = os.path.realpath(os.path.join(self._root, relative.parent), strict=True)
            self._folders[relative.parent] = folder
        target = os.path.join(folder, relative.name)
        if stat.S_ISLNK(os.lstat(target).st_mode):
            return os.path.realpath(target, strict=True)
        return target

    def read(self, path: str, max_bytes: int) -> bytes:
        relative = check_relative_path(path)
        root = self._root
        try:
            target = self._real_path(relative)
        except OSError:
            raise ExplorerError(ErrorCode.SOURCE_NOT_FOUND, f"no file at {path!r}") from None
        if target != root and not target.startswith(os.path.join(root, "")):
            raise ExplorerError(
                ErrorCode.PATH_OUTSIDE_MANIFEST,
                f"{path!r} is a link that leads outside the manifest's folder",
            )
        if not os.path.isfile(target):
            raise ExplorerError(ErrorCode.SOURCE_NOT_FOUND, f"{path!r} is not a regular file")
        with open(target, "rb") as handle:
            data = read_at_most(handle, max_bytes)
        if data is None:
            raise _too_large(path, max_bytes)
        return data


@dataclass(frozen=True)
class MappingReader:
    """Files already in memory, by manifest path (uploads, archives, tests)."""

    files: Mapping[str, bytes]

    def read(self, path: str, max_bytes: int) -> bytes:
        check_relative_path(path)
        data = self.files.get(path)
        if data is None:
            raise ExplorerError(ErrorCode.SOURCE_NOT_FOUND, f"no file was given for {path!r}")
        if len(data) > max_bytes:
            raise _too_large(path, max_bytes)
        return data


def decode_source(
    entry: ManifestDocument,
    data: bytes,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> DocumentRecord:
    """Steps 2-5 of docs/contract.md §3, in that order. Whether a grammar reads the text
    (grammar v1 needs a leading heading) is each column's own question, asked when it
    cuts the document: a document loads once, for every column. A PDF, Word or HTML file
    is converted to Markdown text in place of step 3 (decoding), of at most `max_pages`
    pages and `max_chars` characters."""
    path, pinned = entry["path"], entry["sha256"]
    actual = sha_bytes(data)
    if actual != pinned:
        raise ExplorerError(
            ErrorCode.SOURCE_DIGEST_MISMATCH,
            f"{path!r} has SHA-256 {actual[:12]}…, the manifest says {pinned[:12]}…",
        )
    converter = converter_for(path)
    fields: Mapping[str, object] = entry
    if converter is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ExplorerError(
                ErrorCode.NOT_UTF8, f"{path!r} is not UTF-8 (byte {error.start})"
            ) from None
    else:
        converted = convert(converter, path, data, actual, max_pages, max_chars)
        text = converted.text
        fields = {**entry, **converted_fields(converter, converted)}
        actual = sha(text)  # the converted text's digest stands where the bytes' would
    nul = text.find("\x00")
    if nul >= 0:
        raise ExplorerError(ErrorCode.NUL_BYTE, f"{path!r} has a NUL at character {nul}")
    if text.startswith("\ufeff") or "\r" in text:
        text = normalized(text)
        text_sha256 = sha(text)
    else:  # the text is the bytes, decoded: their digest is the text's
        text_sha256 = actual
    if not text or text.isspace():
        raise ExplorerError(ErrorCode.EMPTY_DOCUMENT, f"{path!r} has no text")
    return document_record(fields, text, text_sha256)


def normalized(text: str) -> str:
    """A decoded text as a document holds it: one leading BOM dropped, every CRLF and
    lone CR a LF."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class DocumentStatus:
    """How one document fared: `status` is OK or the code that refused it (a StrEnum,
    so it reads and serializes as the code's text), with a sentence in `detail`."""

    source_id: str
    path: str
    status: ErrorCode | Literal["ok"]
    detail: str

    @property
    def ok(self) -> bool:
        return self.status == OK


@dataclass(frozen=True)
class LoadResult:
    """Every document's status in manifest order, and the records of those that loaded."""

    statuses: tuple[DocumentStatus, ...]
    documents: tuple[DocumentRecord, ...]

    @property
    def failures(self) -> tuple[DocumentStatus, ...]:
        return tuple(s for s in self.statuses if not s.ok)


def _failed(entry: ManifestDocument, error: ExplorerError) -> DocumentStatus:
    return DocumentStatus(entry["source_id"], entry["path"], error.code, error.detail)


def load_one(
    entry: ManifestDocument,
    reader: SourceReader,
    max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> tuple[DocumentStatus, DocumentRecord | None, int]:
    """One document read and verified: its status, its record if it loaded, and how many
    bytes were read (which count towards `max_total_bytes` even when decoding fails).
    The step every engine takes per document, in one process or on a worker."""
    try:
        data = reader.read(entry["path"], max_bytes)
    except ExplorerError as error:
        return _failed(entry, error), None, 0
    try:
        record = decode_source(entry, data, max_pages, max_chars)
    except ExplorerError as error:
        return _failed(entry, error), None, len(data)
    detail = f"verified; {len(record['text']):,} characters"
    return DocumentStatus(entry["source_id"], entry["path"], OK, detail), record, len(data)


def require_total_bytes(total: int, max_total_bytes: int) -> None:
    """`document_too_large` once the documents read hold more than the limit together."""
    if total > max_total_bytes:
        raise ExplorerError(
            ErrorCode.DOCUMENT_TOO_LARGE,
            f"the manifest's documents hold more than {max_total_bytes:,} bytes together, "
            f"the limit; raise it with --max-total-bytes N (at most {MAX_TOTAL_BYTES_LIMIT:,})",
        )


def load_documents(
    manifest: Manifest,
    reader: SourceReader,
    max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> LoadResult:
    """Load each document on its own: one failure never hides the others. Documents that
    hold more than `max_total_bytes` together are refused as a whole."""
    statuses: list[DocumentStatus] = []
    documents = []
    total = 0
    for entry in manifest.documents:
        status, record, read = load_one(entry, reader, max_bytes, max_pages, max_chars)
        total += read
        require_total_bytes(total, max_total_bytes)
        statuses.append(status)
        if record is not None:
            documents.append(record)
    return LoadResult(tuple(statuses), tuple(documents))


def failure_lines(failures: Sequence[DocumentStatus], proceed: bool) -> list[str]:
    """How the command line reports documents that did not load: a warning each when
    the run goes on without them (`--skip-failed`), else an error each."""
    prefix = "warning" if proceed else "error"
    return [f"{prefix}: {f.status}: {f.source_id}: {f.detail}" for f in failures]


def require_loaded(failures: Sequence[DocumentStatus], count: int) -> None:
    """The refusal of a run with failed documents, under the first one's code."""
    if failures:
        first = failures[0].status
        assert first != OK
        raise ExplorerError(
            first,
            f"{len(failures)} of {count} documents failed to load; "
            "fix them, or pass --skip-failed to leave them out",
        )
