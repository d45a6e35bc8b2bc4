"""Write fixtures/chunk-files/llamaindex-library.json: LlamaIndex's own nodes over the
library fixture, for tests/test_imports_libraries.py. llama-index-core is too heavy to pin
in requirements.txt, so this ran once, in a throwaway environment:

    python -m venv /tmp/llama && /tmp/llama/bin/pip install llama-index-core==0.14.25
    /tmp/llama/bin/python scripts/llamaindex_fixture.py

The nodes are `TextNode.to_dict()` of `SentenceSplitter(chunk_size=48, chunk_overlap=8)`
over each document's normalized text, `file_path` naming its manifest path.
"""

from __future__ import annotations

import json
from pathlib import Path

from llama_index.core import Document  # type: ignore[import-not-found]  # not pinned: see above
from llama_index.core.node_parser import SentenceSplitter  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "fixtures" / "library"
OUT = ROOT / "fixtures" / "chunk-files" / "llamaindex-library.json"


def main() -> None:
    manifest = json.loads((LIBRARY / "manifest.json").read_text(encoding="utf-8"))
    documents = []
    for entry in manifest["documents"]:
        raw = (LIBRARY / entry["path"]).read_bytes().decode("utf-8")
        text = raw.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
        documents.append(Document(text=text, metadata={"file_path": entry["path"]}))
    nodes = SentenceSplitter(chunk_size=48, chunk_overlap=8).get_nodes_from_documents(documents)
    OUT.write_text(
        json.dumps([node.to_dict() for node in nodes], indent=1) + "\n", encoding="utf-8"
    )
    print(f"wrote {len(nodes)} nodes to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
