"""Throughput of the core, printed as figures (not a timed test).

    make bench    (or: PYTHONPATH=. .venv/bin/python scripts/bench.py [CORPUS_DIR])

1. The real corpus (default ../shared/corpora/markdown-docs): every .md file is loaded
   through the verified loader; those without a leading heading are refused, as grammar
   v1 says. Then each policy builds a full index (identities included) and, separately,
   validation rebuilds and checks it.
2. Single documents of 1, 2 and 4 MiB cut from the corpus: the 4 MiB / 1 MiB time ratio
   shows whether the work grows linearly (4.0 is linear).

Each figure is the best of several runs in this one process, so ratios compare like
with like on a noisy machine.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from explorer import (
    POLICIES,
    DocumentRecord,
    ManifestDocument,
    MappingReader,
    build_index,
    load_documents,
    make_config,
    validate_index,
)
from explorer.digests import sha_bytes
from explorer.documents import document_record
from explorer.manifest import Manifest

MIB = 1024 * 1024
REPEATS = 5


def best_seconds(work: Callable[[], object], repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - began)
        del result  # freeing what was built is not part of building it
    return best


def load_folder(folder: Path) -> tuple[list[DocumentRecord], int, dict[str, int]]:
    # The corpus's documents lie in its sub-folders; SOURCES.md at its top describes it.
    paths = sorted(p for p in folder.rglob("*.md") if p.parent != folder)
    files = {str(p.relative_to(folder)): p.read_bytes() for p in paths}
    manifest = Manifest(
        manifest_version=1,
        documents=[
            ManifestDocument(source_id=path, version="1", path=path, sha256=sha_bytes(data))
            for path, data in files.items()
        ],
    )
    began = time.perf_counter()
    result = load_documents(manifest, MappingReader(files), max_bytes=64 * MIB)
    load_seconds = time.perf_counter() - began
    refused: dict[str, int] = {}
    for failure in result.failures:
        refused[failure.status] = refused.get(failure.status, 0) + 1
    size = sum(len(data) for data in files.values()) / 1e6
    print(
        f"loaded {len(result.documents)} of {len(files)} files ({size:.2f} MB) "
        f"in {load_seconds:.3f} s, digests verified"
    )
    return list(result.documents), len(files), refused


def megabytes(documents: list[DocumentRecord]) -> float:
    return sum(len(d["text"].encode("utf-8")) for d in documents) / 1e6


def corpus_figures(documents: list[DocumentRecord]) -> None:
    size = megabytes(documents)
    print(f"\n## Real corpus: {len(documents)} documents, {size:.2f} MB of text")
    print(f"{'policy':<15}{'max_chars':>10}{'chunks':>9}{'build MB/s':>12}{'validate MB/s':>15}")
    for name in POLICIES:
        config = make_config(name)
        index = build_index(documents, config)
        build = best_seconds(partial(build_index, documents, config))
        check = best_seconds(partial(validate_index, index))
        print(
            f"{name:<15}{config.max_chars!s:>10}{len(index['chunks']):>9}"
            f"{size / build:>12.1f}{size / check:>15.1f}"
        )


def single_document(corpus: list[DocumentRecord], size: int) -> DocumentRecord:
    """A heading, then corpus text repeated until `size` UTF-8 bytes."""
    body = "\n".join(d["text"] for d in corpus)
    text = "# Benchmark document\n\n"
    while len(text.encode("utf-8")) < size:
        text += body
    text = text.encode("utf-8")[:size].decode("utf-8", errors="ignore")
    record = {"source_id": f"bench-{size}", "version": "1", "path": "bench.md", "sha256": "0" * 64}
    return document_record(record, text)


def scaling_figures(corpus: list[DocumentRecord]) -> None:
    print("\n## Single documents: seconds per build, and the 4 MiB / 1 MiB ratio")
    print(f"{'policy':<15}{'1 MiB':>9}{'2 MiB':>9}{'4 MiB':>9}{'MB/s @4':>9}{'ratio':>8}")
    documents = {n: single_document(corpus, n * MIB) for n in (1, 2, 4)}
    for name in POLICIES:
        config = make_config(name)
        seconds = {
            n: best_seconds(partial(build_index, [d], config), repeats=3)
            for n, d in documents.items()
        }
        rate = 4 * MIB / 1e6 / seconds[4]
        print(
            f"{name:<15}{seconds[1]:>9.3f}{seconds[2]:>9.3f}{seconds[4]:>9.3f}"
            f"{rate:>9.1f}{seconds[4] / seconds[1]:>8.2f}"
        )


def main(argv: list[str]) -> int:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "markdown-docs"
    folder = Path(argv[0]) if argv else default
    if not folder.is_dir():
        print(f"error: io_error: no corpus folder at {folder}", file=sys.stderr)
        return 2
    documents, total, refused = load_folder(folder)
    print(f"refused: {refused or 'none'} (of {total} files)")
    corpus_figures(documents)
    scaling_figures(documents)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
