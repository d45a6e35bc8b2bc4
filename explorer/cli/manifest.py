"""`manifest`: a manifest drafted for a folder's files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from ..sources.drafts import document_files_under, draft_manifest
from ..sources.loading import DEFAULT_MAX_DOCUMENT_BYTES
from ..sources.uploads import manifest_json
from .files import _emit
from .options import Commands, _positive


def add_manifest(commands: Commands) -> None:
    draft = commands.add_parser(
        "manifest",
        help="Write a manifest for a folder's .md, .txt, .pdf, .docx and .html files, each "
        "pinned to its SHA-256.",
    )
    draft.add_argument("folder", type=Path, help="the folder; paths are relative to it")
    draft.add_argument(
        "--out",
        type=Path,
        help="write the manifest here, not to standard output (put it in the folder: its "
        "paths are relative to the folder)",
    )
    draft.add_argument(
        "--max-document-bytes",
        type=_positive,
        default=DEFAULT_MAX_DOCUMENT_BYTES,
        help="refuse a file larger than this (default 1 MiB)",
    )


def _manifest(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    manifest = draft_manifest(document_files_under(args.folder, args.max_document_bytes))
    content = manifest_json(manifest).encode("utf-8")
    _emit(lambda write: write(content), args.out, stdout)
    print(f"{len(manifest.documents)} documents", file=stderr)
    return 0
