"""A manifest written for plain files: every `.md`, `.txt`, `.pdf`, `.docx` or `.html`,
pinned to its SHA-256.

The app builds one when files arrive without a manifest, and `python -m explorer manifest
DIR` writes one for a folder; either is an ordinary manifest (no span checks yet) that
the person can keep, add checks to, and load again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from ..digests import sha_bytes
from ..errors import ErrorCode, ExplorerError
from ..limits import DEFAULT_CONVERTED_CHARS, MAX_CONVERTED_CHARS_LIMIT
from ..models import CONTROL_CHARACTERS, validated
from .convert import CONVERTED_SUFFIXES
from .loading import DEFAULT_MAX_DOCUMENT_BYTES, MAX_DOCUMENT_BYTES_LIMIT
from .manifest import Manifest

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
# Text files, and the files a converter makes Markdown of (explorer/sources/convert/).
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, *CONVERTED_SUFFIXES)
MAX_DRAFT_FILES = 10_000
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def require_plain_name(path: str, code: ErrorCode) -> None:
    """A file whose name holds a control character (a tab, a line break) cannot be listed
    in a manifest: refused under `code`, the name quoted with its escapes on one line."""
    if CONTROL_CHARACTERS.search(path):
        raise ExplorerError(
            code,
            f"the file name {path!r} holds a control character, which a manifest's path "
            "cannot: rename the file",
        )


def is_document_file(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in DOCUMENT_SUFFIXES


def _source_id(path: str, taken: set[str]) -> str:
    """The path without its suffix, folders joined by `-`, other characters as `-`;
    a number appended when two paths give the same id."""
    stem = PurePosixPath(path).with_suffix("").as_posix().replace("/", "-")
    base = _UNSAFE.sub("-", stem).strip("-.") or "document"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    taken.add(candidate)
    return candidate


def draft_manifest(files: Mapping[str, bytes]) -> Manifest:
    """A manifest listing every document file of `files` (path -> bytes), in path order,
    each with its SHA-256; other files are left out."""
    paths = sorted(path for path in files if is_document_file(path))
    if not paths:
        raise ExplorerError(
            ErrorCode.INVALID_UPLOAD,
            f"no manifest.json and no {', '.join(DOCUMENT_SUFFIXES)} file to build one from",
        )
    if len(paths) > MAX_DRAFT_FILES:
        raise ExplorerError(
            ErrorCode.INVALID_UPLOAD,
            f"{len(paths):,} document files is more than the {MAX_DRAFT_FILES:,} a manifest is "
            "built for",
        )
    for path in paths:
        require_plain_name(path, ErrorCode.INVALID_UPLOAD)
    taken: set[str] = set()
    documents = [
        {
            "source_id": _source_id(path, taken),
            "version": "1",
            "path": path,
            "sha256": sha_bytes(files[path]),
            "title": PurePosixPath(path).name,
        }
        for path in paths
    ]
    raw = {"manifest_version": 1, "documents": documents}
    return validated(Manifest.model_validate, raw, ErrorCode.INVALID_UPLOAD)


def document_files_under(folder: Path, max_file_bytes: int) -> dict[str, bytes]:
    """Every document file below `folder` (links not followed, hidden folders skipped), by
    its path relative to `folder`; a file over `max_file_bytes` is refused."""
    if not folder.is_dir():
        raise ExplorerError(ErrorCode.IO_ERROR, f"{str(folder)!r} is not a folder")
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or path.is_symlink():
            continue
        if not path.is_file() or not is_document_file(relative.as_posix()):
            continue
        require_plain_name(relative.as_posix(), ErrorCode.INVALID_MANIFEST)
        if len(found) >= MAX_DRAFT_FILES:
            raise ExplorerError(
                ErrorCode.IO_ERROR, f"more than {MAX_DRAFT_FILES:,} document files under the folder"
            )
        if path.stat().st_size > max_file_bytes:
            raise ExplorerError(
                ErrorCode.DOCUMENT_TOO_LARGE,
                f"{relative.as_posix()!r} holds more than {max_file_bytes:,} bytes",
            )
        found[relative.as_posix()] = path.read_bytes()
    return found


def _mebibytes(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB"


_ADVICE = {
    ErrorCode.SOURCE_DIGEST_MISMATCH: (
        "The file's bytes are not the ones the manifest pins. If this file is the one you "
        "mean, put its SHA-256 (below) in the manifest's sha256 for this path; otherwise "
        "upload the file the manifest pins."
    ),
    ErrorCode.SOURCE_NOT_FOUND: (
        "No file came for this path: upload it beside the manifest (matched by file name), "
        "or remove the document from the manifest."
    ),
    ErrorCode.PATH_OUTSIDE_MANIFEST: (
        "The path leaves the manifest's folder: list a path inside it, relative to the manifest."
    ),
    ErrorCode.DOCUMENT_TOO_LARGE: (
        "Split the file: the app reads documents of up to "
        f"{_mebibytes(DEFAULT_MAX_DOCUMENT_BYTES)} each, and a PDF, Word or HTML file that "
        f"converts to at most {DEFAULT_CONVERTED_CHARS:,} characters of text; or use the "
        "command line, whose --max-document-bytes raises the first limit to "
        f"{_mebibytes(MAX_DOCUMENT_BYTES_LIMIT)}, and --max-converted-chars the second to "
        f"{MAX_CONVERTED_CHARS_LIMIT:,}."
    ),
    ErrorCode.NOT_UTF8: "Save the file as UTF-8, {then}.",
    ErrorCode.NUL_BYTE: "Remove the NUL bytes (is it a text file?), {then}.",
    ErrorCode.EMPTY_DOCUMENT: "Give the file some text, or remove it from the manifest.",
    ErrorCode.ENCRYPTED_DOCUMENT: (
        "The PDF needs a password to open: save a copy without one (open it and print it "
        "to a new PDF), then upload that copy."
    ),
    ErrorCode.NO_TEXT_LAYER: (
        "The PDF holds pictures of pages and no text (a scan): run OCR on it first (for "
        "example ocrmypdf), then upload the new file."
    ),
    ErrorCode.CORRUPT_DOCUMENT: (
        "The file is damaged or cut short: open it in its program, save or export it "
        "again, then upload the new file."
    ),
    ErrorCode.NOT_A_DOCX: (
        "The file is not a Word .docx (perhaps an old .doc): open it in Word or "
        "LibreOffice, save it as .docx, then upload that."
    ),
    ErrorCode.TOO_MANY_PAGES: (
        "The PDF has more pages than the app reads: split it, or use the command line, "
        "whose --max-pages raises the limit."
    ),
    ErrorCode.HEADING_REQUIRED: (
        "Choose the markdown grammar (in the app's sidebar; --grammar markdown on the "
        "command line), which reads a text without a leading heading; or start the text "
        "with a '# ' heading line, {then}."
    ),
}


# How an advice ends once the file is changed: a manifest given pins the file's bytes,
# a manifest built here for the files (`draft_manifest`) pins what comes.
_PIN = "then pin its new SHA-256 in the manifest"
_UPLOAD = "then upload it again"


def failure_advice(code: str, drafted: bool = False) -> str:
    """What to change so a document that failed with `code` loads; `drafted`: the
    manifest was built for the files that came, so nothing is to be pinned by hand."""
    try:
        advice = _ADVICE.get(ErrorCode(code), "Fix what the detail says, then load it again.")
    except ValueError:
        return "Fix what the detail says, then load it again."
    return advice.replace("{then}", _UPLOAD if drafted else _PIN)
