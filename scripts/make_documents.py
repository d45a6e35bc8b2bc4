"""Write a folder of documents as users have them, to try the converters on:

    PYTHONPATH=. .venv/bin/python scripts/make_documents.py DIR

guide.pdf (3 pages), handbook.docx, faq.html, and two PDFs that are refused, locked.pdf
(encrypted) and scan.pdf (no text layer), with a manifest.json built for them as
`python -m explorer manifest DIR` builds one.
"""

from __future__ import annotations

import sys
from pathlib import Path

from explorer.sources.drafts import draft_manifest
from explorer.sources.uploads import manifest_json
from tests.documents import HTML_FAQ, docx_bytes, pdf_bytes, scanned_pdf_bytes


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: make_documents.py DIR", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "guide.pdf": pdf_bytes(),
        "handbook.docx": docx_bytes(),
        "faq.html": HTML_FAQ.encode(),
        "locked.pdf": pdf_bytes(owner_password="owner", user_password="user"),
        "scan.pdf": scanned_pdf_bytes(),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    (folder / "manifest.json").write_text(manifest_json(draft_manifest(files)), "utf-8")
    print(f"wrote {len(files)} documents and manifest.json to {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
