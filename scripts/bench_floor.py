"""Where one process's time goes when it indexes the bench corpus, and the least it can be.

    PYTHONPATH=. .venv/bin/python scripts/bench_floor.py [CORPUS_DIR]

The corpus is `make bench`'s 10.4 MB one (the shared Markdown corpus's loadable files
copied 6 times, heading-aware 220). Each stage is timed on its own, best of 5 in this
process; the imports in fresh processes, best of 5. The last stage is the C work no
implementation of the seed's ids can skip: per chunk, the SHA-256 of its text and of
its canonical JSON, the JSON escaping of its text, and the formatting of its fields.
The sum of the stages that any `index --out` must run is the floor printed at the end.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from hashlib import sha256
from pathlib import Path

import orjson

# scripts/ is on the path as this script runs: make bench's corpus, built the same way.
from bench import ENVIRONMENT, ROOT, best_seconds, copied_corpus, load_folder

from explorer import make_config
from explorer.chunking.config import grammar_for
from explorer.chunking.index import _placed, write_index
from explorer.limits import MAX_CHUNKS_LIMIT, Limits
from explorer.sources.loading import DirectoryReader, load_documents
from explorer.sources.manifest import parse_manifest

NO_LIMITS = Limits(chunks_per_document=MAX_CHUNKS_LIMIT, chunks_per_index=MAX_CHUNKS_LIMIT)


def import_seconds() -> float:
    """`import explorer.cli` in a fresh interpreter, as `python -m explorer` starts."""
    code = (
        "import time; t = time.perf_counter(); import explorer.cli; print(time.perf_counter() - t)"
    )
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code],
                capture_output=True,
                text=True,
                env=ENVIRONMENT,
                cwd=ROOT,
                check=True,
            ).stdout
        )
        for _ in range(5)
    ]
    return min(runs)


def main(argv: list[str]) -> int:
    default = ROOT.parent / "shared" / "corpora" / "markdown-docs"
    folder = Path(argv[0]) if argv else default
    documents, _, _ = load_folder(folder)
    with tempfile.TemporaryDirectory(prefix="explorer-floor-") as temporary:
        manifest_path, size = copied_corpus(folder, documents, 6, Path(temporary))
        raw = manifest_path.read_bytes()
        config = make_config("heading-aware")
        grammar = grammar_for(config)
        manifest = parse_manifest(raw)
        reader = DirectoryReader(manifest_path.parent)
        loaded = load_documents(manifest, reader, 64 << 20, 1 << 30).documents
        spans = [(d["text"], [s for _, s in _placed(d["text"], config, None)]) for d in loaded]
        chunks = sum(len(s) for _, s in spans)

        def essential() -> None:
            prefix = sha256(b"prefix")
            for text, placed in spans:
                for start, end in placed:
                    piece = text[start:end]
                    digest = sha256(piece.encode()).hexdigest()
                    fields = b'%d,%d,"text":%b,"text_sha256":"%b"' % (
                        start,
                        end,
                        orjson.dumps(piece),
                        digest.encode(),
                    )
                    chunk = prefix.copy()
                    chunk.update(fields)
                    b'{"chunk_id":"%b",%b' % (chunk.hexdigest().encode(), fields)

        stages = {
            "interpreter and imports (fresh process)": import_seconds(),
            "manifest parsed": best_seconds(lambda: parse_manifest(raw)),
            "documents read and verified": best_seconds(
                lambda: load_documents(
                    manifest, DirectoryReader(manifest_path.parent), 64 << 20, 1 << 30
                )
            ),
            "sections": best_seconds(lambda: [grammar.sections(d["text"]) for d in loaded]),
            "sections and packing": best_seconds(
                lambda: [list(_placed(d["text"], config, None)) for d in loaded]
            ),
            "write_index (bytes dropped)": best_seconds(
                lambda: write_index(loaded, config, lambda _: None, limits=NO_LIMITS)
            ),
            "  of it, the ids' C work alone": best_seconds(essential),
        }
    print(f"{len(loaded):,} documents, {size:.2f} MB, {chunks:,} chunks, heading-aware 220")
    for name, seconds in stages.items():
        print(f"{name:<44}{seconds:>8.3f} s")
    floor = sum(
        stages[name]
        for name in (
            "interpreter and imports (fresh process)",
            "manifest parsed",
            "documents read and verified",
            "sections and packing",
            "  of it, the ids' C work alone",
        )
    )
    print(
        f"floor of one process: {floor:.3f} s (imports, manifest, reading, sections and "
        f"packing, the ids' C work) = {size / floor:.1f} MB/s at most"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
