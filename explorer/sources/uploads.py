"""Manifests that arrive as uploads: a `.zip`, or `manifest.json` beside its files.

Everything here works on bytes in memory; `Bundle` feeds `MappingReader`, so uploaded
sources go through the same verified loading as files on disk.
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol, TypeVar

from ..digests import canonical_json, sha, sha_bytes
from ..errors import ErrorCode, ExplorerError
from ..jsonio import dump_json
from .drafts import draft_manifest, is_document_file
from .manifest import Manifest, parse_manifest

MANIFEST_NAME = "manifest.json"
MAX_FILES = 500
MAX_TOTAL_BYTES = 64 * 1024 * 1024
# An archive's table of contents (folders count too) is read only when it is this small:
# a record is 46 bytes and a name, so 500 files with long paths fit well inside.
MAX_ENTRIES = 2 * MAX_FILES
MAX_DIRECTORY_BYTES = 1024 * 1024
PASTED_PATH = "pasted.md"


class Upload(Protocol):
    """An uploaded file whose size is known before its bytes are read (Streamlit's
    `UploadedFile` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...

    def getvalue(self) -> bytes: ...


U = TypeVar("U", bound=Upload)


@dataclass(frozen=True)
class Bundle:
    """A parsed manifest and the raw bytes of its files, keyed by manifest path."""

    manifest: Manifest
    files: Mapping[str, bytes] = field(default_factory=dict)
    drafted: bool = False  # the manifest was built here, for files that came without one

    @property
    def key(self) -> str:
        """A content digest: equal bundles load to equal documents (a cache key)."""
        files = {path: sha_bytes(data) for path, data in sorted(self.files.items())}
        return sha(canonical_json({"manifest": manifest_json(self.manifest), "files": files}))


def manifest_json(manifest: Manifest) -> str:
    """The manifest as a file: only the keys that were given."""
    return dump_json(manifest.model_dump(exclude_unset=True))


def _refuse(detail: str) -> ExplorerError:
    return ExplorerError(ErrorCode.INVALID_UPLOAD, detail)


def _check_budget(count: int, total: int) -> None:
    if count > MAX_FILES:
        raise _refuse(f"{count} files is more than the {MAX_FILES} an upload may hold")
    if total > MAX_TOTAL_BYTES:
        raise _too_large()


def _too_large() -> ExplorerError:
    return _refuse(f"the files hold more than {MAX_TOTAL_BYTES:,} bytes")


def _entry_path(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or "\\" in name or ".." in path.parts or ":" in name:
        raise _refuse(f"the archive entry {name!r} escapes the archive")
    return path


_END = struct.Struct("<4s4H2LH")  # end of central directory record
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")


def _unreadable() -> ExplorerError:
    return _refuse("the file is not a readable .zip archive")


def _directory_size(data: bytes) -> tuple[int, int]:
    """(entries, bytes) of the archive's central directory, read from its end record
    alone, so an archive of a million entries is refused before one is parsed."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - _END.size - 0xFFFF))
    if at < 0 or at + _END.size > len(data):
        raise _unreadable()
    _, _, _, _, entries, size, _, _ = _END.unpack_from(data, at)
    locator = at - _END64_LOCATOR.size
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        # ZIP64, which `zipfile` then believes instead: check the figures it will use.
        offset = _END64_LOCATOR.unpack_from(data, locator)[2]
        if offset + _END64.size > len(data) or data[offset : offset + 4] != b"PK\x06\x06":
            raise _unreadable()
        _, _, _, _, _, _, _, entries, size, _ = _END64.unpack_from(data, offset)
    return entries, size


def _check_directory(data: bytes) -> None:
    entries, size = _directory_size(data)
    if entries > MAX_ENTRIES:
        raise _refuse(
            f"the archive lists {entries:,} entries, more than the {MAX_ENTRIES:,} "
            f"an upload may hold"
        )
    if size > MAX_DIRECTORY_BYTES:
        raise _refuse(
            f"the archive's table of contents takes {size:,} bytes, more than "
            f"{MAX_DIRECTORY_BYTES:,}"
        )


def _refuse_duplicates(names: Sequence[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise _refuse(f"{what} {name!r} appears more than once")
        seen.add(name)


def bundle_from_zip(data: bytes) -> Bundle:
    """The archive's shallowest `manifest.json`, with the files beside and below it.

    Counts and sizes are checked from the archive's own directory before any member is
    read; two entries with one path (after `./` and `//` are dropped) are refused.
    """
    _check_directory(data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise _unreadable() from None
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        _check_budget(len(entries), sum(info.file_size for info in entries))
        for info in entries:
            _entry_path(info.filename)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise _refuse(f"the archive entry {info.filename!r} is a link")
            if info.flag_bits & 0x1:
                raise _refuse(f"the archive entry {info.filename!r} is encrypted")
        _refuse_duplicates(
            [_entry_path(i.filename).as_posix() for i in entries], "the archive entry"
        )
        manifests = sorted(
            (len(_entry_path(i.filename).parts), i.filename)
            for i in entries
            if PurePosixPath(i.filename).name == MANIFEST_NAME
        )
        if not manifests:
            return _drafted(archive, entries)
        if len(manifests) > 1 and manifests[0][0] == manifests[1][0]:
            raise _refuse(f"the archive holds several {MANIFEST_NAME} at the same depth")
        base = PurePosixPath(manifests[0][1]).parent
        files: dict[str, bytes] = {}
        budget = MAX_TOTAL_BYTES
        manifest_bytes = b""
        for info in entries:
            content = _member(archive, info, budget)
            budget -= len(content)
            if info.filename == manifests[0][1]:
                manifest_bytes = content
            elif PurePosixPath(info.filename).is_relative_to(base):
                files[PurePosixPath(info.filename).relative_to(base).as_posix()] = content
    return Bundle(parse_manifest(manifest_bytes), files)


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> bytes:
    """One entry's bytes, refused past `budget` whatever the archive states its size is."""
    try:
        with archive.open(info) as handle:
            content = handle.read(budget + 1)
    except (zipfile.BadZipFile, RuntimeError, OSError, NotImplementedError) as error:
        raise _refuse(f"cannot read {info.filename!r} from the archive: {error}") from None
    if len(content) > budget:  # the archive's stated sizes were lies
        raise _too_large()
    return content


def _drafted(archive: zipfile.ZipFile, entries: Sequence[zipfile.ZipInfo]) -> Bundle:
    """An archive without a manifest: one is built for its document files."""
    files: dict[str, bytes] = {}
    budget = MAX_TOTAL_BYTES
    for info in entries:
        if not is_document_file(info.filename):
            continue
        content = _member(archive, info, budget)
        budget -= len(content)
        files[_entry_path(info.filename).as_posix()] = content
    if not files:
        raise _refuse(f"the archive holds no {MANIFEST_NAME} and no document file to build one for")
    return Bundle(draft_manifest(files), files, drafted=True)


def bundle_from_files(uploads: Sequence[tuple[str, bytes]]) -> Bundle:
    """`manifest.json` and its files, each matched to a manifest path by file name; or,
    when no JSON file came, plain document files, for which a manifest is built."""
    _check_budget(len(uploads), sum(len(data) for _, data in uploads))
    names = [PurePosixPath(name.replace("\\", "/")).name for name, _ in uploads]
    if not any(name.lower().endswith(".json") for name in names):
        _refuse_duplicates(names, "the uploaded file")
        files = dict(zip(names, (data for _, data in uploads), strict=True))
        return Bundle(draft_manifest(files), files, drafted=True)
    manifests = [i for i, name in enumerate(names) if name == MANIFEST_NAME]
    if not manifests:
        jsons = [i for i, name in enumerate(names) if name.endswith(".json")]
        manifests = jsons if len(jsons) == 1 else []
    if len(manifests) != 1:
        raise _refuse(
            f"upload exactly one {MANIFEST_NAME} with its files, or one .zip holding them"
        )
    manifest = parse_manifest(uploads[manifests[0]][1])
    by_name: dict[str, list[bytes]] = {}
    for i, (name, data) in enumerate(zip(names, (d for _, d in uploads), strict=True)):
        if i != manifests[0]:
            by_name.setdefault(name, []).append(data)
    duplicates = sorted(name for name, found in by_name.items() if len(found) > 1)
    if duplicates:
        raise _refuse(f"several uploaded files are named {duplicates[0]!r}")
    wanted: dict[str, str] = {}
    for document in manifest.documents:
        path = document["path"]
        name = PurePosixPath(path).name
        if name in wanted:
            raise _refuse(
                f"the manifest paths {wanted[name]!r} and {path!r} share the file "
                f"name {name!r}, so uploads cannot tell them apart: upload a .zip instead"
            )
        wanted[name] = path
    files = {path: by_name[name][0] for name, path in wanted.items() if name in by_name}
    return Bundle(manifest, files)


def latest_uploads(uploads: Sequence[U]) -> tuple[list[U], list[str]]:
    """The uploads with one file per name (the last one dropped, in the order they came
    first), and the names that came more than once: a file dropped again beside a new
    one replaces itself instead of refusing the whole upload."""
    latest: dict[str, U] = {}
    counts: dict[str, int] = {}
    for upload in uploads:
        latest[upload.name] = upload
        counts[upload.name] = counts.get(upload.name, 0) + 1
    return list(latest.values()), [name for name, count in counts.items() if count > 1]


def bundle_from_uploads(uploads: Sequence[Upload]) -> Bundle:
    """One `.zip`, or a manifest with its files: counts and sizes are checked before any
    upload's bytes are read."""
    _check_budget(len(uploads), sum(upload.size for upload in uploads))
    if len(uploads) == 1 and uploads[0].name.lower().endswith(".zip"):
        return bundle_from_zip(uploads[0].getvalue())
    if any(upload.name.lower().endswith(".zip") for upload in uploads):
        raise _refuse("upload a .zip on its own, not together with other files")
    return bundle_from_files([(upload.name, upload.getvalue()) for upload in uploads])


def pasted_bundle(markdown: str, title: str = "Pasted text") -> Bundle:
    """A one-document manifest for text typed or pasted into the app."""
    data = markdown.encode("utf-8")
    manifest = Manifest.model_validate(
        {
            "manifest_version": 1,
            "documents": [
                {
                    "source_id": "pasted",
                    "version": "1",
                    "path": PASTED_PATH,
                    "sha256": sha_bytes(data),
                    "title": title,
                }
            ],
        }
    )
    return Bundle(manifest, {PASTED_PATH: data})


def bundle_zip(bundle: Bundle) -> bytes:
    """A `.zip` that `bundle_from_zip` reads back: the manifest and its files."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST_NAME, manifest_json(bundle.manifest))
        for path, data in sorted(bundle.files.items()):
            archive.writestr(path, data)
    return buffer.getvalue()
