"""How often heading-aware under the markdown grammar cuts inside a word or a sentence,
and how often its overlap repeats anything (issue 37, items 4 and 5).

    PYTHONPATH=. .venv/bin/python scripts/word_cuts.py [CORPUS_DIR]

CORPUS_DIR defaults to ../shared/corpora/markdown-docs; the 10-K-like excerpt is
tests/data/ten-k-excerpt.md (three one-line paragraphs). Per config: the chunks, those
with a cut inside a word (a letter or digit on both sides of its start or end), those
flagged `mid_sentence` and `over_size` (explorer.checking.flags), and how many chunks
start before the previous chunk of their section ends (the overlap repeats something).
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer import build_index, make_config
from explorer.checking.flags import index_flags
from explorer.chunking.index import ChunkRecord
from explorer.digests import sha_bytes
from explorer.limits import MAX_CHUNKS_LIMIT, Limits
from explorer.sources.documents import DocumentRecord
from explorer.sources.loading import MappingReader, load_documents
from explorer.sources.manifest import Manifest, ManifestDocument

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "markdown-docs"
NO_LIMITS = Limits(chunks_per_document=MAX_CHUNKS_LIMIT, chunks_per_index=MAX_CHUNKS_LIMIT)
CONFIGS: dict[str, dict[str, int]] = {
    "220 chars": {"max_chars": 220},
    "501 chars": {"max_chars": 501},
    "55 tokens": {"max_tokens": 55},
    "55 tokens overlap 32": {"max_tokens": 55, "overlap": 32},
    "300 chars overlap 100": {"max_chars": 300, "overlap": 100},
}


def load(files: dict[str, bytes]) -> list[DocumentRecord]:
    documents = [
        ManifestDocument(source_id=path, version="1", path=path, sha256=sha_bytes(data))
        for path, data in files.items()
    ]
    manifest = Manifest(manifest_version=1, documents=documents)
    return list(load_documents(manifest, MappingReader(files), max_bytes=64 << 20).documents)


def inside_a_word(text: str, cut: int) -> bool:
    return 0 < cut < len(text) and text[cut - 1].isalnum() and text[cut].isalnum()


def repeating(chunks: list[ChunkRecord]) -> int:
    ends: dict[str, int] = {}
    count = 0
    for chunk in chunks:
        end = ends.get(chunk["section_id"])
        count += end is not None and chunk["start"] < end
        ends[chunk["section_id"]] = chunk["end"]
    return count


def main(corpus: Path) -> None:
    sets = {
        "10-K excerpt": {"ten-k.md": (ROOT / "tests" / "data" / "ten-k-excerpt.md").read_bytes()},
        f"corpus ({corpus.name})": {
            str(path.relative_to(corpus)): path.read_bytes()
            for path in sorted(corpus.rglob("*.md"))
        },
    }
    for label, files in sets.items():
        documents = load(files)
        texts = {d["source_id"]: d["text"] for d in documents}
        for name, sizes in CONFIGS.items():
            config = make_config("heading-aware", grammar="markdown", **sizes)  # type: ignore[arg-type]
            chunks = build_index(documents, config, NO_LIMITS)["chunks"]
            flags = index_flags(texts, chunks, config)
            words = sum(
                any(inside_a_word(texts[c["source_id"]], cut) for cut in (c["start"], c["end"]))
                for c in chunks
            )
            sentences = sum("mid_sentence" in names for names in flags)
            over = sum("over_size" in names for names in flags)
            print(
                f"{label:24} {name:22} chunks {len(chunks):6}  inside a word {words:5}  "
                f"mid_sentence {sentences:5}  over_size {over:3}  repeating {repeating(chunks):5}"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CORPUS)
