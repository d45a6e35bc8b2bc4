"""Export the column you chose to LangChain, load it back, and check every chunk.

    PYTHONPATH=. .venv/bin/python examples/export_langchain.py [MANIFEST] [--out FILE]

Runs `explorer export MANIFEST --policy heading-aware --max-chars 800 --format langchain`
(the column the retrieval guide's decision chose on fixtures/markdown-docs), loads each
line as a `langchain_core.documents.Document`, and checks that every chunk's text is its
document's own characters at [start, end). FILE defaults to a temporary folder's
chunks.jsonl; give --out to keep it for your vector store.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from langchain_core.documents import Document

from explorer import DirectoryReader, load_documents, parse_manifest

ROOT = Path(__file__).resolve().parents[1]
COLUMN = ["--policy", "heading-aware", "--max-chars", "800"]


def export(manifest: Path, out: Path) -> list[Document]:
    """The column's chunks as LangChain Documents, through the command line."""
    command = [sys.executable, "-m", "explorer", "export", str(manifest), *COLUMN]
    subprocess.run([*command, "--format", "langchain", "--out", str(out)], check=True)
    with out.open(encoding="utf-8") as lines:
        return [Document(**json.loads(line)) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "manifest", nargs="?", type=Path, default=ROOT / "fixtures/markdown-docs/manifest.json"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        documents = export(args.manifest, args.out or Path(folder) / "chunks.jsonl")

    load = load_documents(
        parse_manifest(args.manifest.read_bytes()), DirectoryReader(args.manifest.parent)
    )
    texts = {record["source_id"]: record["text"] for record in load.documents}
    exact = sum(
        d.page_content == texts[d.metadata["source_id"]][d.metadata["start"] : d.metadata["end"]]
        for d in documents
    )
    first = documents[0].metadata
    print(f"{len(documents)} LangChain Documents from {len(texts)} documents")
    print(f"{exact} of {len(documents)} texts equal their document's slice [start, end)")
    print(
        f"first: {first['source_id']} [{first['start']}, {first['end']}) under "
        f"{' > '.join(first['headings']) or '(no heading)'}, index {first['index_id'][:12]}…"
    )


if __name__ == "__main__":
    main()
