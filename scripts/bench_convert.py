"""Conversion throughput (explorer/sources/convert/), printed as figures; part of make bench.

    PYTHONPATH=. .venv/bin/python scripts/bench_convert.py [CORPUS_DIR]

1. A 100-page PDF made here (fpdf2): a heading and twelve paragraphs a page.
2. A Word file made from real text: every chapter of the Rust book in the corpus
   (default ../shared/corpora/markdown-docs/rust-book), its headings as Word heading
   styles and its paragraphs as paragraphs (python-docx).
3. Any real PDF of the machine's documentation (/usr/share/doc), when there is one.

Each figure is the best of three conversions (the cache bypassed), then one load through
the verified loader twice: the second is served from the cache.
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

from docx import Document

from explorer.digests import sha_bytes
from explorer.limits import MAX_CONVERTED_CHARS_LIMIT
from explorer.sources.convert import Converter, converter_for
from explorer.sources.loading import decode_source
from explorer.sources.manifest import ManifestDocument
from tests.documents import pdf_bytes

MB = 1_000_000
SENTENCE = "Paragraph {j} of page {i}: the harbour cranes lift containers from ships onto the quay."
REAL_PDFS = ("/usr/share/doc/libtasn1-doc/libtasn1.pdf",)


def best_of(work: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - began)
    return best


def hundred_pages() -> bytes:
    return pdf_bytes(
        [
            [("h2", f"Section {i + 1}"), *(("p", SENTENCE.format(i=i, j=j)) for j in range(12))]
            for i in range(100)
        ]
    )


def word_file(chapters: list[Path]) -> bytes:
    """The chapters as one Word document: `#` lines as heading styles, the rest as
    paragraphs (code blocks included, as plain paragraphs)."""
    document = Document()
    for chapter in chapters:
        for block in chapter.read_text("utf-8").split("\n\n"):
            block = block.strip()
            hashes = len(block) - len(block.lstrip("#"))
            if 1 <= hashes <= 6 and block[hashes : hashes + 1] == " " and "\n" not in block:
                document.add_heading(block[hashes + 1 :], level=min(hashes, 4))
            elif block:
                document.add_paragraph(block)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def figure(name: str, path: str, data: bytes) -> None:
    converter: Converter | None = converter_for(path)
    assert converter is not None
    seconds = best_of(lambda: converter.convert(path, data, 100_000, MAX_CONVERTED_CHARS_LIMIT))
    converted = converter.convert(path, data, 100_000, MAX_CONVERTED_CHARS_LIMIT)
    pages = len(converted.page_starts) if converted.page_starts is not None else None
    entry = ManifestDocument(source_id="x", version="1", path=path, sha256=sha_bytes(data))
    began = time.perf_counter()
    decode_source(entry, data, max_pages=100_000, max_chars=MAX_CONVERTED_CHARS_LIMIT)
    first = time.perf_counter() - began
    began = time.perf_counter()
    decode_source(entry, data, max_pages=100_000, max_chars=MAX_CONVERTED_CHARS_LIMIT)
    cached = time.perf_counter() - began
    per_page = f"{pages / seconds:>10,.0f}" if pages else f"{'-':>10}"
    print(
        f"{name:<34}{len(data) / MB:>8.2f}{pages or '-':>7}{len(converted.text):>10,}"
        f"{seconds:>9.3f}{per_page}{len(data) / MB / seconds:>8.2f}"
        f"{first:>9.3f}{cached * 1000:>9.2f}"
    )


def main(argv: list[str]) -> int:
    default = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "markdown-docs"
    book = (Path(argv[0]) if argv else default) / "rust-book"
    chapters = sorted(book.rglob("ch*.md"))
    if not chapters:
        print(f"error: io_error: no Rust book chapters under {book}", file=sys.stderr)
        return 2
    print("\n## Converting documents (best of 3; a load; the same load again, from the cache)")
    print(
        f"{'file':<34}{'MB':>8}{'pages':>7}{'chars':>10}{'seconds':>9}{'pages/s':>10}"
        f"{'MB/s':>8}{'load s':>9}{'again ms':>9}"
    )
    figure("generated 100-page PDF", "hundred.pdf", hundred_pages())
    figure(f"Word: Rust book, {len(chapters)} chapters", "book.docx", word_file(chapters))
    for real in REAL_PDFS:
        if Path(real).is_file():
            figure(f"real PDF: {Path(real).name}", "real.pdf", Path(real).read_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
