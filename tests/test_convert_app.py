"""A PDF, a Word file and an HTML page dropped into the app: the views mark the PDF's page
breaks, and the chunk detail and the Retrieval tab cite its pages."""

from __future__ import annotations

import re
from typing import Any

import pytest

from explorer.chunking.index import build_index
from explorer.chunking.policies import make_config
from explorer.sources import convert as conversion
from explorer.sources.convert.pdf import PdfConverter
from explorer.sources.loading import decode_source
from explorer.sources.uploads import MAX_TOTAL_BYTES
from explorer.view.render import render_ranked_view
from tests.conftest import sha256_hex
from tests.documents import (
    HTML_FAQ,
    docx_bytes,
    pdf_bytes,
    scanned_pdf_bytes,
    shared_stream_pdf_bytes,
)
from tests.test_app import UPLOAD, start, upload

FILES = [
    ("guide.pdf", pdf_bytes(), "application/pdf"),
    ("handbook.docx", docx_bytes(), "application/octet-stream"),
    ("faq.html", HTML_FAQ.encode(), "text/html"),
]


def test_a_dropped_pdf_shows_its_page_breaks_and_the_detail_cites_its_page() -> None:
    at = upload(FILES)
    at.selectbox(key="doc").set_value("guide").run()
    assert not at.exception
    drawn = "".join(h.value for h in at.html)
    views = drawn.split('<div class="cbx-view"')[1:]
    assert len(views) == 3  # one per policy, each with both breaks
    assert all(re.findall(r'data-p="(p\. \d+)"', v) == ["p. 2", "p. 3"] for v in views)
    assert "· p. 2 ·" in views[0]  # a chunk's hover text names its page
    at.number_input(key="detail_order").set_value(2).run()
    facts = next(t.value for t in at.table if "Pages of the PDF" in str(t.value))
    cited = facts.set_index("Field")["Value"]["Pages of the PDF"]
    assert cited.replace("\\", "") in ("p. 1", "p. 2", "pp. 1\u20132")


def test_the_other_documents_have_no_pages() -> None:
    at = upload(FILES)
    for doc in ("handbook", "faq"):
        at.selectbox(key="doc").set_value(doc).run()
        assert not at.exception
        assert not any('class="cbx-pb"' in h.value for h in at.html)
        assert not any("Pages of the PDF" in str(t.value) for t in at.table)


def test_the_ranked_view_cites_each_hits_page() -> None:
    data = pdf_bytes()
    entry = {"source_id": "guide", "version": "1", "path": "guide.pdf", "sha256": sha256_hex(data)}
    record = decode_source(entry, data)  # type: ignore[arg-type]
    config = make_config("heading-aware", 220)
    index = build_index([record], config)
    chunk = index["chunks"][2]
    result = {
        "id": "q",
        "source_id": "other",
        "references": [{"start": 0, "end": 5}],
        "retrieved": [
            {
                "chunk_id": chunk["chunk_id"],
                "source_id": "guide",
                "start": chunk["start"],
                "end": chunk["end"],
                "rank": 1,
                "score": 1.0,
                "pages": chunk["pages"],
            }
        ],
        "recall": 0.0,
        "precision": 0.0,
        "iou": 0.0,
        "hit": False,
    }
    html = render_ranked_view(
        "other text",
        "heading-aware",
        config.as_json(),
        index,
        result,  # type: ignore[arg-type]
    )
    assert f"[{chunk['start']:,}, {chunk['end']:,}) (p. 2)" in html


def test_a_scanned_pdf_dropped_in_the_app_says_to_run_ocr() -> None:
    at = upload([*FILES, ("scan.pdf", scanned_pdf_bytes(), "application/pdf")])
    said = " ".join(m.value for m in at.markdown)
    assert "no\\_text\\_layer" in said and "run OCR on it first" in said


def test_a_dropped_file_whose_name_holds_a_control_character_is_an_invalid_upload() -> None:
    at = upload([("tab\there.md", b"# A\n", "text/markdown")])
    assert [e.value.split(":")[0] for e in at.error] == ["**invalid_upload**"]
    assert "holds a control character" in at.error[0].value


def test_a_pdf_that_converts_to_too_much_is_refused_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """315 KB of 2,000 pages sharing one stream: refused with the limit named, after
    one conversion that stopped at the limit (the app asks for a drop's text twice)."""
    monkeypatch.setattr(conversion, "_CACHE", conversion._Cache(max_chars=1 << 20))
    calls: list[str] = []
    convert = PdfConverter.convert

    def counted(self: PdfConverter, path: str, data: bytes, max_pages: int, max_chars: int) -> Any:
        calls.append(path)
        return convert(self, path, data, max_pages, max_chars)

    monkeypatch.setattr(PdfConverter, "convert", counted)
    at = upload([("bomb.pdf", shared_stream_pdf_bytes(2_000, 2_000), "application/pdf")])
    said = " ".join(m.value for m in at.markdown)
    assert "did not load (document\\_too\\_large)" in said and "--max-converted-chars" in said
    details = [d.replace("\\", "") for t in at.table for d in t.value.get("Detail", [])]
    assert details[0].startswith("'bomb.pdf' converts to more than 8,388,608 characters")
    at.run()
    assert calls == ["bomb.pdf"]


def test_the_uploader_shows_the_real_limits_before_the_upload() -> None:
    """Streamlit writes "Limit 64MB per file" under the uploader: the label says what
    holds for a document (1 MiB) and for a .zip (64 MiB, the limit Streamlit shows)."""
    at = start()
    at.radio(key="source").set_value(UPLOAD).run()
    uploader = at.file_uploader(key="upload")
    assert uploader.label.endswith(": each document up to 1 MiB, a .zip up to 64 MiB")
    assert uploader.proto.max_upload_size_mb == MAX_TOTAL_BYTES // 2**20 == 64
    assert "8,388,608 characters" in uploader.help and "--max-converted-chars" in uploader.help
