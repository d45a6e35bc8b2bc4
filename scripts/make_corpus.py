"""Make a large corpus for `--engine ray` (docs/cluster.md): documents made
from the Markdown files of a source folder, with a manifest pinning each one's SHA-256
and a questions file. Deterministic: the same arguments give the same bytes.

    python scripts/make_corpus.py /tmp/corpus --size-gb 2

Document n is a heading, then source files taken in turn from position 7n on (until it
holds about --document-kb), each with its paragraphs rotated by n: every document
differs, and its chunks cut differently. A manifest holds at most 100,000 documents, so
a 2 GB corpus needs documents of about 32 KB. Each question of
fixtures/markdown-docs/questions.json is asked of the first document that holds its
source file, when its quotes occur there exactly once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "corpora" / "markdown-docs"
QUESTIONS = ROOT / "fixtures" / "markdown-docs" / "questions.json"


def _varied(text: str, n: int) -> str:
    paragraphs = text.strip("\n").split("\n\n")
    turn = n % len(paragraphs)
    return "\n\n".join(paragraphs[turn:] + paragraphs[:turn])


def make(out: Path, size_bytes: int, document_bytes: int, source: Path) -> dict[str, Any]:
    files = sorted(p for p in source.rglob("*.md") if p.is_file())
    texts = [p.read_text("utf-8") for p in files]
    names = [f"{p.relative_to(source).parts[0]}/{p.stem}" for p in files]
    first_holding: dict[str, tuple[str, str]] = {}  # source name: (source_id, text)
    entries = []
    total, n = 0, 0
    while total < size_bytes:
        parts, taken, at = [f"# Generated document {n}\n"], 0, 7 * n
        held = []
        while taken < document_bytes:
            index = at % len(texts)
            parts.append(_varied(texts[index], n))
            held.append(names[index])
            taken += len(parts[-1])
            at += 1
        text = "\n\n".join(parts) + "\n"
        data = text.encode("utf-8")
        path = f"docs/{n // 1000:03d}/{n:06d}.md"
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        source_id = f"generated/{n:06d}"
        entries.append(
            {
                "source_id": source_id,
                "version": "1",
                "path": path,
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
        for name in held:
            first_holding.setdefault(name, (source_id, text))
        total += len(data)
        n += 1
    manifest = {"manifest_version": 1, "documents": entries}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), "utf-8")
    questions = []
    for question in json.loads(QUESTIONS.read_text("utf-8"))["questions"]:
        held_by = first_holding.get(question["source_id"])
        quotes = [r.get("quote") for r in question["references"]]
        if held_by is None or not all(q and held_by[1].count(q) == 1 for q in quotes):
            continue
        questions.append({**question, "source_id": held_by[0]})
    questions_file = {"questions_version": 1, "questions": questions}
    (out / "questions.json").write_text(json.dumps(questions_file, indent=1), "utf-8")
    return {"documents": n, "bytes": total, "questions": len(questions)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a new folder, outside the repository")
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--document-kb", type=int, default=32)
    parser.add_argument("--source", type=Path, default=SOURCE)
    args = parser.parse_args()
    made = make(args.out, int(args.size_gb * 2**30), args.document_kb * 1024, args.source)
    print(json.dumps(made))


if __name__ == "__main__":
    main()
