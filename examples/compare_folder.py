"""Compare a chunking library with heading-aware on a folder of Markdown, through the
Python API.

    PYTHONPATH=. .venv/bin/python examples/compare_folder.py [FOLDER] [--max-chars N]

FOLDER (default: fixtures/markdown-docs) is read as the app reads a drop: with its
manifest.json when it has one, else every .md/.txt/.pdf/.docx/.html file below it, each
pinned to its SHA-256. Both columns are cut at the same size, heading-aware under the markdown
grammar (no leading heading needed); the script prints, per column, its chunks, their mean and
largest size, the cuts a reviewer should look at (mid-sentence, inside a code block), and
how many boundaries the two columns share.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from explorer import (
    DEFAULT_MAX_DOCUMENT_BYTES,
    Column,
    DirectoryReader,
    MappingReader,
    Settings,
    SourceReader,
    explore,
    load_documents,
    make_config,
    parse_manifest,
)
from explorer.sources.drafts import document_files_under, draft_manifest

ROOT = Path(__file__).resolve().parents[1]


def boundaries(column: Column) -> set[tuple[str, int]]:
    """Every place a column cuts: each chunk's start, per document."""
    return {(c["source_id"], c["start"]) for c in column.index["chunks"] if c["start"] > 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT / "fixtures/markdown-docs")
    parser.add_argument("--max-chars", type=int, default=800)
    parser.add_argument("--library", default="langchain-recursive")
    args = parser.parse_args()

    reader: SourceReader
    if (args.folder / "manifest.json").is_file():
        manifest = parse_manifest((args.folder / "manifest.json").read_bytes())
        reader = DirectoryReader(args.folder)
    else:  # no manifest: build one, as the app does for a drop of plain files
        files = document_files_under(args.folder, DEFAULT_MAX_DOCUMENT_BYTES)
        manifest = draft_manifest(files)
        reader = MappingReader(files)
    load = load_documents(manifest, reader)

    settings = Settings(
        (
            make_config(args.library, args.max_chars),  # a library cuts whole documents
            make_config("heading-aware", args.max_chars, grammar="markdown"),
        )
    )
    exploration = explore(load, manifest.span_checks, settings)

    print(f"{len(load.documents)} documents, both columns at {args.max_chars} characters")
    print(f"{'column':<22}{'chunks':>7}{'mean':>7}{'largest':>9}{'mid-sentence':>14}{'in code':>9}")
    for column in exploration.columns:
        sizes = [c["end"] - c["start"] for c in column.index["chunks"]]
        flags = column.result["flags"]
        print(
            f"{column.name:<22}{len(sizes):>7}{sum(sizes) // len(sizes):>7}{max(sizes):>9}"
            f"{flags['mid_sentence']:>14}{flags['in_code_block']:>9}"
        )
    library, ours = (boundaries(column) for column in exploration.columns)
    print(
        f"boundaries: {len(library & ours)} shared, {len(library - ours)} only "
        f"{exploration.columns[0].name}, {len(ours - library)} only {exploration.columns[1].name}"
    )


if __name__ == "__main__":
    main()
