"""What the commands read and write: an input file read up to a limit, a manifest's
documents loaded once, a file written whole or not at all, output as it is produced."""

from __future__ import annotations

import argparse
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ..chunking.config import ChunkConfig
from ..chunking.index import readable
from ..errors import ErrorCode, ExplorerError, io_error
from ..sources.documents import DocumentRecord
from ..sources.loading import (
    DirectoryReader,
    LoadResult,
    failure_lines,
    load_documents,
    read_at_most,
    require_loaded,
)
from ..sources.manifest import Manifest, parse_manifest, require_unique_source_ids

MAX_INPUT_FILE_BYTES = 512 * 1024 * 1024


def _read(path: Path, what: str, limit: int = MAX_INPUT_FILE_BYTES) -> bytes:
    try:
        with path.open("rb") as handle:
            data = read_at_most(handle, limit)
    except OSError as error:
        raise io_error(f"read {what}", path, error) from None
    if data is None:
        raise ExplorerError(
            ErrorCode.IO_ERROR, f"{what} {str(path)!r} is larger than {limit // 2**20} MiB"
        )
    return data


def _documents(args: argparse.Namespace, manifest: Manifest) -> LoadResult:
    """`manifest`'s documents, read from its folder within the command's limits."""
    return load_documents(
        manifest,
        DirectoryReader(args.manifest.parent),
        args.max_document_bytes,
        args.max_total_bytes,
        args.max_pages,
        args.max_converted_chars,
    )


def _load(args: argparse.Namespace, err: TextIO) -> tuple[Manifest, LoadResult]:
    """The manifest's documents, loaded once for every column (whether a column's
    grammar reads each is the column's own question: `readable`)."""
    manifest = parse_manifest(_read(args.manifest, "manifest"))
    if args.command != "ingest":  # one index keyed by source_id
        require_unique_source_ids(manifest)
    load = _documents(args, manifest)
    # A persistent index records failures and keeps serving the old version: no refusal.
    proceed = args.skip_failed or args.command == "ingest"
    for line in failure_lines(load.failures, proceed):
        print(line, file=err)
    if not proceed:
        require_loaded(load.failures, len(load.statuses))
    return manifest, load


def _readable(
    load: LoadResult, config: ChunkConfig, stderr: TextIO, whole: bool = False
) -> list[DocumentRecord]:
    """The documents one column cuts (`readable`), what it leaves out said on stderr.
    `whole` (an index file, chunk maps): a document the column cannot read refuses the
    command, as one that does not load does, unless --skip-failed."""
    cut = readable(load.documents, config, config.strategy)
    if whole:
        cut.whole()
    documents = cut.required()
    _print_notes(stderr, config.strategy, cut.notes)
    return documents


def _print_notes(stderr: TextIO, name: str, notes: Sequence[str]) -> None:
    """What placing a chunk file's chunks had to say, as the report says it too."""
    for note in notes:
        print(f"note: {name}: {note}", file=stderr)


# Writes JSON bytes, piece by piece, to the `write` it is given.
Producer = Callable[[Callable[[bytes], object]], object]


def _mode_to_keep(path: Path) -> int | None:
    """The permissions of the regular file at `path`, None if nothing is there; anything
    else (a device such as /dev/null, a link such as one to /dev/stdout, a folder, a pipe)
    is refused rather than silently replaced by a regular file."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise io_error("write", path, error) from None
    if stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode)
    kind = (
        "a symbolic link"
        if stat.S_ISLNK(status.st_mode)
        else "a folder"
        if stat.S_ISDIR(status.st_mode)
        else "a device, pipe or socket"
    )
    raise ExplorerError(
        ErrorCode.IO_ERROR,
        f"will not write {str(path)!r}: it exists and is {kind}, not a regular file",
    )


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomically(path: Path, content: str | Producer) -> None:
    """Either the whole file appears, or nothing does. A new file gets 0666 less the
    umask, as `open` would give it; a replaced regular file keeps its permissions."""
    mode = _mode_to_keep(path)
    try:
        fd, temporary = tempfile.mkstemp(
            dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise io_error("write", path, error) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask() if mode is None else mode)
        with os.fdopen(fd, "wb", buffering=1024 * 1024) as handle:
            if isinstance(content, str):
                handle.write(content.encode("utf-8"))
            else:
                content(handle.write)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise io_error("write", path, error) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _emit(produce: Producer, out: Path | None, stdout: TextIO) -> None:
    """Bytes go out as they are produced: to `out` atomically, else to standard output
    (its binary buffer when it has one)."""
    if out is not None:
        _write_atomically(out, produce)
        return
    buffer = getattr(stdout, "buffer", None)
    if buffer is None:
        produce(lambda piece: stdout.write(piece.decode("utf-8")))
        return
    try:
        stdout.flush()
        produce(buffer.write)
        buffer.flush()
    except BrokenPipeError:
        # The reader left (`| head`): nothing more can go there, and Python's own flush at
        # exit must not fail on what is still buffered.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, buffer.fileno())
        os.close(devnull)
        raise ExplorerError(
            ErrorCode.IO_ERROR, "standard output was closed before all the JSON was written"
        ) from None
