"""PDF, Word and HTML documents (explorer/sources/convert/): converted offline to Markdown,
their converter in the revision, a PDF's pages cited by every chunk, bad files refused."""

from __future__ import annotations

import io
import json
import socket
import sqlite3
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.chunking.index import build_index, chunk_pages, page_label
from explorer.chunking.policies import make_config
from explorer.errors import ErrorCode, ExplorerError
from explorer.limits import DEFAULT_CONVERTED_CHARS
from explorer.sources import convert as conversion
from explorer.sources.convert import pdf as pdf_module
from explorer.sources.convert.html import MAX_DEPTH
from explorer.sources.convert.pdf import PdfConverter
from explorer.sources.loading import DirectoryReader, MappingReader, decode_source, load_documents
from explorer.sources.manifest import parse_manifest
from explorer.sources.uploads import bundle_from_files, bundle_from_zip
from explorer.store.schema import _MIGRATE_1_TO_2, SCHEMA_1, STORE_VERSION
from tests.conftest import ManifestBuilder, run_cli, sha256_hex, zipped
from tests.documents import (
    CODE_LINES,
    HANDBOOK_PAGES,
    HTML_FAQ,
    SPHINX_PAGE,
    code_docx_bytes,
    docx_bytes,
    nested_quotes_html,
    pdf_bytes,
    scanned_pdf_bytes,
    shared_stream_pdf_bytes,
)

GUIDE = pdf_bytes()
HANDBOOK = docx_bytes()
FAQ = HTML_FAQ.encode()
FOLDER = {"guide.pdf": GUIDE, "handbook.docx": HANDBOOK, "faq.html": FAQ}


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No socket can be opened: a converter that fetched anything would fail."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a converter tried to reach the network")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test converts for itself (the cache is tested on its own)."""
    monkeypatch.setattr(conversion, "_CACHE", conversion._Cache(max_chars=1 << 20))


def entry(path: str, data: bytes) -> Any:
    return {
        "source_id": Path(path).stem,
        "version": "1.0",
        "path": path,
        "sha256": sha256_hex(data),
    }


def loaded(
    path: str, data: bytes, max_pages: int = 2_000, max_chars: int = DEFAULT_CONVERTED_CHARS
) -> Any:
    return decode_source(entry(path, data), data, max_pages=max_pages, max_chars=max_chars)


def refusal(path: str, data: bytes, **options: Any) -> ExplorerError:
    with pytest.raises(ExplorerError) as caught:
        loaded(path, data, **options)
    return caught.value


# --- conversion -------------------------------------------------------------------------


def test_every_format_converts_with_the_network_blocked(offline: None) -> None:
    for path, data in FOLDER.items():
        record = loaded(path, data)
        assert record["text"].startswith("# ")
        assert record["converter"]["name"]


def test_a_pdf_keeps_every_sentence_once_in_reading_order_with_headings_and_pages() -> None:
    record = loaded("guide.pdf", GUIDE)
    text = record["text"]
    at = 0
    for page_number, page in enumerate(HANDBOOK_PAGES, 1):
        for kind, sentence in page:
            assert text.count(sentence) == 1
            found = text.index(sentence, at)
            assert chunk_pages(record["page_starts"], found, found + len(sentence)) == [page_number]
            heading = {"h1": "# ", "h2": "## "}.get(kind)
            if heading is not None:
                assert text[found - len(heading) : found] == heading
            at = found
    assert len(record["page_starts"]) == 3 and record["page_starts"][0] == 0


def test_word_headings_lists_and_tables_become_markdown() -> None:
    text = loaded("handbook.docx", HANDBOOK)["text"]
    assert text.startswith("# Staff Handbook\n")
    assert "\n## Working Hours\n" in text and "\n## Leave\n" in text
    assert "- Bring your badge every day.\n- Sign in at the gate." in text
    assert "| Annual | 25 |" in text


def test_word_code_blocks_stay_code_verbatim_and_their_comments_are_not_headings() -> None:
    """pandoc's "Source Code" paragraphs and "Verbatim Char" runs: the code's lines as
    they are (indentation, blank lines, no Markdown escapes) in a fenced block, which is
    indented where a `# comment` line would otherwise be a heading to grammar v1."""
    record = loaded("code.docx", code_docx_bytes())
    code = "\n".join(f"   {line}" if line else "" for line in CODE_LINES)
    assert record["text"] == (
        "# Users\n\nThe list `active_users` holds every user\\_id that signed in.\n\n"
        f"   ```\n{code}\n   ```\n\n"
        "## Shell\n\n   ```\n   # List the files\n   ls  -l  *_test.py\n   ```\n"
    )
    for grammar in ("v1", "markdown"):
        index = build_index([record], make_config("heading-aware", 2_000, grammar=grammar))
        assert [c["section_title"] for c in index["chunks"]] == ["Users", "Shell"]
        assert "\n       # Count the admins\n" in index["chunks"][0]["text"]
        assert not any("\\" in c["text"] for c in index["chunks"][1:])


def test_html_code_is_verbatim_with_its_blank_lines_backticks_and_list_indentation() -> None:
    page = (
        b"<h1>Setup</h1><ol><li><p>Run:</p><pre>pip install x\n\n\n# done\n</pre></li></ol>"
        b"<pre><code>echo ``` a_b *c*\n\tindented\n</code></pre><p>snake_case</p>"
    )
    assert loaded("setup.html", page)["text"] == (
        "# Setup\n\n1. Run:\n\n      ```\n      pip install x\n   \n   \n      # done\n"
        "      ```\n\n````\necho ``` a_b *c*\n\tindented\n````\n\nsnake\\_case\n"
    )


def test_html_keeps_the_body_text_and_drops_scripts_styles_and_navigation() -> None:
    record = loaded("faq.html", FAQ)
    text = record["text"]
    assert text.startswith("# Harbour FAQ\n")
    assert "## When is the harbour open?" in text and "**six**" in text
    assert "never run" not in text and "color" not in text and "Home" not in text
    assert "page_starts" not in record  # only documents with pages have them


def test_a_sphinx_page_keeps_its_text_without_menus_sidebar_footer_or_permalinks() -> None:
    """Python's documentation as Sphinx builds it: the text starts at the page's title,
    whose section title is its text alone, and no "Navigation" list or "¶" is left."""
    record = loaded("json.html", SPHINX_PAGE.encode())
    assert record["text"] == (
        "# `json` — JSON encoder and decoder\n\n"
        "**Source code:** [Lib/json/\\_\\_init\\_\\_.py]"
        "(https://github.com/python/cpython/tree/3.11/Lib/json/__init__.py)\n\n"
        "JSON is a lightweight data interchange format inspired by JavaScript object literal "
        "syntax.\n\n"
        "```\n>>> import json\n>>> json.dumps(['foo'])\n'[\"foo\"]'\n```\n\n"
        "## Basic Usage\n\n"
        "json.dump(*obj*, *fp*)\n:   Serialize *obj* as a JSON formatted stream to *fp*.\n"
    )
    for grammar in ("v1", "markdown"):
        index = build_index([record], make_config("heading-aware", 220, grammar=grammar))
        titles = [c["section_title"] for c in index["chunks"]]
        assert titles[0] == "`json` — JSON encoder and decoder"
        assert titles[-1] == "Basic Usage"


def test_html_drops_the_pages_banner_footer_and_anchors_but_keeps_an_articles_own() -> None:
    page = b"""<html><body><header><a href="/">Acme Blog</a><ul><li>Posts</li></ul></header>
    <div role="banner">Top banner</div>
    <article><header><h1 id="t"><a class="anchor" href="#t"><svg><path/></svg></a>Release
    notes</h1><p>By Ada</p></header>
    <h2 id="fix">Fixes <a href="#fix">#</a></h2><p>See <a href="#fix">this section</a>.</p>
    <footer>Tags: releases</footer></article>
    <aside class="footnote"><p>[1] A footnote.</p></aside>
    <footer><p>Copyright Acme</p></footer><div role="contentinfo">Contact us</div>
    </body></html>"""
    assert loaded("blog.html", page)["text"] == (
        "# Release notes\n\nBy Ada\n\n## Fixes\n\nSee [this section](#fix).\n\n"
        "Tags: releases\n\n[1] A footnote.\n"
    )


def test_headings_are_section_titles_and_each_pdf_chunk_cites_its_page() -> None:
    documents = [loaded(path, data) for path, data in FOLDER.items()]
    index = build_index(documents, make_config("heading-aware", 220))
    titles = {(c["source_id"], c["section_title"]) for c in index["chunks"]}
    assert {("guide", "Wind Limits"), ("handbook", "Leave"), ("faq", "Harbour FAQ")} <= titles
    for chunk in index["chunks"]:
        assert ("pages" in chunk) == (chunk["source_id"] == "guide")
    pages = {c["section_title"]: c["pages"] for c in index["chunks"] if c["source_id"] == "guide"}
    assert pages == {
        "Field Guide to Harbour Cranes": [1],
        "Daily Checks": [1],
        "Wind Limits": [2],
        "Handing Over": [3],
    }


def test_a_chunk_across_a_page_break_names_both_pages() -> None:
    data = pdf_bytes(
        [[("h1", "Notes"), ("p", "Begun on one page.")], [("p", "Ended on the next.")]]
    )
    record = loaded("notes.pdf", data)
    index = build_index([record], make_config("heading-aware", 500))
    assert [(c["text"], c["pages"]) for c in index["chunks"]] == [
        ("Begun on one page.\n\nEnded on the next.", [1, 2])
    ]
    assert page_label([3]) == "p. 3" and page_label([3, 4]) == "pp. 3\u20134"


def test_pages_enter_the_chunk_id_and_the_index_validates(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest(FOLDER)
    out = manifest.parent / "index.json"
    assert run_cli("index", manifest, "--policy", "paragraph", "--out", out).code == 0
    index = json.loads(out.read_text())
    assert run_cli("validate", out, "--manifest", manifest).code == 0
    first = next(c for c in index["chunks"] if "pages" in c)
    first["pages"] = [2]
    out.write_text(json.dumps(index))
    result = run_cli("validate", out)
    assert result.code == 1 and ".pages" in result.err
    index["documents"][1]["page_starts"][1] += 1  # the digests cover the pages
    out.write_text(json.dumps(index))
    assert "document_revision" in run_cli("validate", out).err


def test_another_converter_version_is_another_revision(
    make_manifest: ManifestBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = make_manifest(FOLDER)
    out = manifest.parent / "index.json"
    assert run_cli("index", manifest, "--policy", "paragraph", "--out", out).code == 0
    before = {
        d["source_id"]: d["document_revision"] for d in json.loads(out.read_text())["documents"]
    }
    newer = {"name": "pypdfium2", "version": "99.0", "options": {"rules": 1}}
    monkeypatch.setattr(PdfConverter, "info", lambda self: newer)
    after = loaded("guide.pdf", GUIDE)
    assert after["converter"] == newer and after["document_revision"] != before["guide"]
    result = run_cli("validate", out, "--manifest", manifest)  # converts again, compares
    assert result.code == 1
    assert "documents[1] ('guide').converter is not what its source file" in result.err


def test_a_conversion_is_cached_by_the_files_digest_and_its_converter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    convert = PdfConverter.convert

    def counted(self: PdfConverter, path: str, data: bytes, max_pages: int, max_chars: int) -> Any:
        calls.append(path)
        return convert(self, path, data, max_pages, max_chars)

    monkeypatch.setattr(PdfConverter, "convert", counted)
    first = loaded("guide.pdf", GUIDE)
    assert loaded("guide.pdf", GUIDE) == first and calls == ["guide.pdf"]
    monkeypatch.setattr(PdfConverter, "info", lambda self: {"name": "x", "version": "2"})
    loaded("guide.pdf", GUIDE)
    assert calls == ["guide.pdf", "guide.pdf"]
    with pytest.raises(ExplorerError, match=r"^too_many_pages: "):  # the limit holds when cached
        loaded("guide.pdf", GUIDE, max_pages=2)


# --- bad files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "data", "code", "says"),
    [
        (
            "locked.pdf",
            pdf_bytes(owner_password="owner", user_password="user"),
            ErrorCode.ENCRYPTED_DOCUMENT,
            "without the password",
        ),
        ("scan.pdf", scanned_pdf_bytes(), ErrorCode.NO_TEXT_LAYER, "run OCR on it first"),
        ("cut.pdf", GUIDE[: len(GUIDE) // 3], ErrorCode.CORRUPT_DOCUMENT, "export it again"),
        ("noise.pdf", b"%PDF-1.7\nnot really", ErrorCode.CORRUPT_DOCUMENT, "damaged"),
        ("old.docx", b"\xd0\xcf\x11\xe0 an old .doc", ErrorCode.NOT_A_DOCX, "save it as .docx"),
        ("cut.docx", HANDBOOK[: len(HANDBOOK) // 2], ErrorCode.CORRUPT_DOCUMENT, "damaged"),
        ("empty.docx", zipped({"a.txt": b"x"}), ErrorCode.CORRUPT_DOCUMENT, "word/document.xml"),
        ("blank.html", b"<html><script>x()</script></html>", ErrorCode.EMPTY_DOCUMENT, "no text"),
    ],
)
def test_a_bad_file_is_refused_by_name_with_its_own_code(
    path: str, data: bytes, code: ErrorCode, says: str
) -> None:
    error = refusal(path, data)
    assert error.code is code and repr(path) in error.detail and says in error.detail


def test_a_pdf_over_the_page_limit_is_refused_before_its_text_is_read() -> None:
    error = refusal("guide.pdf", GUIDE, max_pages=2)
    assert error.code is ErrorCode.TOO_MANY_PAGES and "--max-pages" in error.detail
    assert loaded("guide.pdf", GUIDE, max_pages=3)["page_starts"] == [0, 166, 313]


def test_html_nested_past_what_the_converter_reads_is_refused_not_a_traceback() -> None:
    def nested(depth: int) -> bytes:
        return b"<div>" * depth + b"<h1>Deep</h1>" + b"</div>" * depth

    assert loaded("ok.html", nested(MAX_DEPTH - 1))["text"] == "# Deep\n"
    for depth in (MAX_DEPTH + 1, 20_000):
        error = refusal("deep.html", nested(depth))
        assert error.code is ErrorCode.CORRUPT_DOCUMENT and "nests" in error.detail


def test_a_word_file_whose_reader_fails_is_refused_not_a_traceback() -> None:
    body = b"<w:tbl><w:tr><w:tc>" * 2000 + b"</w:tc></w:tr></w:tbl>" * 2000
    document = (
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b"<w:body>" + body + b"</w:body></w:document>"
    )
    nested = zipped({"word/document.xml": document, "[Content_Types].xml": b"<Types/>"})
    assert refusal("nested.docx", nested).code is ErrorCode.CORRUPT_DOCUMENT


def test_a_word_file_that_unpacks_to_too_much_is_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", b"<w/>")
        archive.writestr("filler.bin", b"\0" * (20 * 1024 * 1024))
    bomb = buffer.getvalue()
    assert refusal("bomb.docx", bomb).code is ErrorCode.DOCUMENT_TOO_LARGE


def test_a_pdf_whose_pages_share_one_stream_is_refused_once_its_text_passes_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2,000 pages drawing one compressed stream of 200,000 characters: 315 KB that
    would convert to 400 M characters. Pages are read only until the limit is passed."""
    bomb = shared_stream_pdf_bytes(2_000, 2_000)
    assert len(bomb) < 320_000
    read: list[int] = []
    page_lines = pdf_module._page_lines

    def counted(*args: Any) -> Any:
        read.append(args[1])
        return page_lines(*args)

    monkeypatch.setattr(pdf_module, "_page_lines", counted)
    error = refusal("bomb.pdf", bomb, max_chars=1_000_000)
    assert error.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert error.detail.startswith("'bomb.pdf' converts to more than 1,000,000 characters")
    assert "--max-converted-chars" in error.detail
    assert read == [0, 1, 2, 3, 4, 5]  # 199,998 characters a page: the 6th passes 1,000,000
    assert len(loaded("small.pdf", shared_stream_pdf_bytes(5, 2_000), max_chars=1_000_000)["text"])


def test_html_that_multiplies_its_lines_is_refused_while_it_converts() -> None:
    """50 nested quotes around 20,000 lines: each line gets 50 markers, 2 M characters
    from 60 KB. The conversion stops at the limit: its memory follows the limit."""
    import tracemalloc

    page = b"<blockquote>" * 50 + b"<p>" + b"x\n" * 20_000 + b"</p>" + b"</blockquote>" * 50
    tracemalloc.start()
    try:
        error = refusal("quotes.html", page, max_chars=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert "converts to more than 100,000 characters" in error.detail
    assert peak < 8_000_000  # converted in full: 17.7 MB at its peak
    assert loaded("quotes.html", page, max_chars=3_000_000)["text"].count(">") == 1_000_000


def test_html_of_many_deeply_nested_elements_is_refused_before_it_converts() -> None:
    """126 nested quotes around 20,000 lines (the attack was 200,000 lines in 1 MB):
    markdownify would look up 126 ancestors of each of 40,000 elements; the page is
    refused before it starts."""
    page = nested_quotes_html(breaks=20_000)
    error = refusal("quotes.html", page, max_chars=1_000_000)
    assert error.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert "add up to more than 1,000,000" in error.detail
    assert "--max-converted-chars" in error.detail


_WORD = b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'


def word_file(body: bytes, padding: int = 0) -> bytes:
    """A .docx of `body`, and `padding` bytes that do not compress (a picture, say)."""
    import random

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "word/document.xml", _WORD + b"<w:body>" + body + b"</w:body></w:document>"
        )
        if padding:
            archive.writestr("word/media/image1.png", random.Random(7).randbytes(padding))
    return buffer.getvalue()


def test_a_small_word_file_of_empty_paragraphs_is_refused_by_its_ratio() -> None:
    """7.5 MB of `<w:p/>` in a 10 KB file (it took mammoth 104 s): the file may unpack to
    20 times its size, or 1 MiB, not 8 MiB."""
    bomb = word_file(b"<w:p/>" * 1_250_000)
    assert len(bomb) < 45_000
    error = refusal("bomb.docx", bomb)
    assert error.code is ErrorCode.DOCUMENT_TOO_LARGE
    assert "more than the 1,048,576 a Word file of its size may hold" in error.detail
    assert refusal("ok.docx", word_file(b"<w:p/>" * 200_000)).code is ErrorCode.DOCUMENT_TOO_LARGE


def test_a_word_file_nested_a_million_deep_is_refused_while_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """1 M nested elements (a RecursionError after 9 s in mammoth), padded so the ratio
    lets it through: refused at the 65th level, before mammoth reads anything."""
    import mammoth

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("mammoth read a file the converter should have refused")

    monkeypatch.setattr(mammoth, "convert_to_html", never)
    deep = word_file(b"<w:sdt>" * 1_000_000 + b"</w:sdt>" * 1_000_000, padding=800_000)
    error = refusal("deep.docx", deep)
    assert error.code is ErrorCode.CORRUPT_DOCUMENT
    assert "'word/document.xml' more than 64 deep" in error.detail
    doctype = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]>' + _WORD + b"</w:document>"
    entities = zipped({"word/document.xml": doctype})
    assert "document type declaration" in refusal("dtd.docx", entities).detail


def test_a_word_file_is_bounded_by_the_converted_text_too() -> None:
    error = refusal("handbook.docx", HANDBOOK, max_chars=100)
    assert error.code is ErrorCode.DOCUMENT_TOO_LARGE and "--max-converted-chars" in error.detail


def test_a_refusal_is_cached_so_a_file_is_converted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    convert = PdfConverter.convert

    def counted(self: PdfConverter, path: str, data: bytes, max_pages: int, max_chars: int) -> Any:
        calls.append(max_chars)
        return convert(self, path, data, max_pages, max_chars)

    monkeypatch.setattr(PdfConverter, "convert", counted)
    for _ in range(3):
        assert refusal("guide.pdf", GUIDE, max_chars=100).code is ErrorCode.DOCUMENT_TOO_LARGE
    assert calls == [100]
    assert loaded("guide.pdf", GUIDE, max_chars=1_000)["text"]  # another limit converts
    assert refusal("guide.pdf", GUIDE, max_chars=100).code is ErrorCode.DOCUMENT_TOO_LARGE
    assert calls == [100, 1_000]  # and the text it made answers the smaller limit too


def test_the_command_line_names_and_raises_the_converted_text_limit(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest({"guide.pdf": GUIDE})
    refused = run_cli("compare", manifest, "--max-converted-chars", "100")
    assert refused.code == 2
    assert refused.err.startswith(
        "error: document_too_large: guide: 'guide.pdf' converts to more than 100 characters"
    )
    assert run_cli("compare", manifest, "--max-converted-chars", "1000").code == 0
    too_high = run_cli("compare", manifest, "--max-converted-chars", str(2**26 + 1))
    assert too_high.code == 2 and "is more than the maximum, 67,108,864" in too_high.err


def test_skip_failed_goes_on_without_the_encrypted_and_the_scanned_pdf(
    make_manifest: ManifestBuilder,
) -> None:
    files = {
        **FOLDER,
        "locked.pdf": pdf_bytes(owner_password="o", user_password="u"),
        "scan.pdf": scanned_pdf_bytes(),
    }
    manifest = make_manifest(files)
    refused = run_cli("compare", manifest)
    assert refused.code == 2
    assert "error: encrypted_document: locked: 'locked.pdf' is encrypted" in refused.err
    assert "error: no_text_layer: scan: 'scan.pdf' has no text layer" in refused.err
    result = run_cli("compare", manifest, "--skip-failed")
    assert result.code == 0, result.err
    statuses = {d["source_id"]: d["status"] for d in result.json()["documents"]}
    assert statuses == {
        "faq": "ok",
        "guide": "ok",
        "handbook": "ok",
        "locked": "encrypted_document",
        "scan": "no_text_layer",
    }


# --- where documents enter ---------------------------------------------------------------


def test_manifest_dir_lists_pdf_word_and_html_files(tmp_path: Path) -> None:
    for name, data in {**FOLDER, "notes.htm": FAQ, "picture.png": b"\x89PNG"}.items():
        (tmp_path / name).write_bytes(data)
    result = run_cli("manifest", tmp_path)
    assert result.code == 0, result.err
    paths = [d["path"] for d in json.loads(result.out)["documents"]]
    assert paths == ["faq.html", "guide.pdf", "handbook.docx", "notes.htm"]


def test_uploads_and_archives_without_a_manifest_take_these_formats() -> None:
    for bundle in (bundle_from_files(list(FOLDER.items())), bundle_from_zip(zipped(FOLDER))):
        assert bundle.drafted and sorted(bundle.files) == sorted(FOLDER)
        result = load_documents(bundle.manifest, MappingReader(bundle.files))
        assert not result.failures and len(result.documents) == 3


def test_ingest_and_search_cite_a_pdf_chunks_pages(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest(FOLDER)
    db = manifest.parent / "index.db"
    assert run_cli("ingest", manifest, "--db", db, "--embedder", "none").code == 0
    result = run_cli("search", "wind gusts", "--tenant", "default", "--db", db, "--json")
    hits = json.loads(result.out)["hits"]
    assert hits[0]["source_id"] == "guide" and hits[0]["pages"] == [2]
    faq = run_cli("search", "visitors quay", "--tenant", "default", "--db", db, "--json")
    hits = json.loads(faq.out)["hits"]
    assert {hit["source_id"] for hit in hits} >= {"faq"}
    assert all((hit["pages"] is None) == (hit["source_id"] != "guide") for hit in hits)
    line = run_cli("search", "wind gusts", "--tenant", "default", "--db", db).out
    assert line.startswith("guide v1.0 lines ") and " p. 2 [" in line


def test_evaluate_names_the_pages_of_each_retrieved_pdf_chunk(
    make_manifest: ManifestBuilder,
) -> None:
    manifest = make_manifest(FOLDER)
    questions = manifest.parent / "questions.json"
    question = {
        "id": "wind",
        "question": "When must lifting stop?",
        "source_id": "guide",
        "references": [{"quote": "Stop lifting when the wind gusts"}],
    }
    questions.write_text(json.dumps({"questions_version": 1, "questions": [question]}))
    result = run_cli("evaluate", manifest, "--questions", questions, "--k", "2")
    assert result.code == 0, result.err
    retrieved = result.json()["policies"][0]["questions"][0]["retrieved"]
    assert retrieved[0]["pages"] == [2]


def test_a_documents_revision_is_loaded_the_same_from_disk(make_manifest: ManifestBuilder) -> None:
    manifest = make_manifest(FOLDER)
    load = load_documents(
        parse_manifest(manifest.read_bytes()), DirectoryReader(manifest.parent), max_pages=10
    )
    assert [d["source_id"] for d in load.documents] == ["guide", "handbook", "faq"]
    assert load.documents[0] == loaded("guide.pdf", GUIDE)


# --- invariants ----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    suffix=st.sampled_from([".pdf", ".docx", ".html"]),
    cuts=st.lists(st.tuples(st.integers(0, 40_000), st.binary(max_size=8)), max_size=4),
    length=st.integers(0, 40_000),
)
def test_a_damaged_file_loads_or_is_refused_with_a_code(
    suffix: str, cuts: list[tuple[int, bytes]], length: int
) -> None:
    """Real files with bytes overwritten and cut short: a record, or an ExplorerError."""
    data = bytearray(
        FOLDER[{".pdf": "guide.pdf", ".docx": "handbook.docx", ".html": "faq.html"}[suffix]]
    )
    for at, replacement in cuts:
        data[at % max(len(data), 1) : at % max(len(data), 1) + len(replacement)] = replacement
    data = data[: max(1, length % (len(data) + 1))]
    try:
        record = loaded(f"file{suffix}", bytes(data))
    except ExplorerError:
        return
    assert record["text"] and "\x00" not in record["text"] and "\r" not in record["text"]
    starts = record.get("page_starts", [0])
    assert starts[0] == 0 and starts == sorted(starts) and starts[-1] <= len(record["text"])


@given(
    starts=st.lists(st.integers(0, 50), min_size=1, max_size=6).map(lambda s: [0, *sorted(s)]),
    span=st.tuples(st.integers(0, 60), st.integers(1, 60)),
)
def test_a_chunks_pages_are_every_page_its_characters_lie_on(
    starts: list[int], span: tuple[int, int]
) -> None:
    start, end = min(span), max(span) + 1
    on = {max(i for i, at in enumerate(starts) if at <= c) + 1 for c in range(start, end)}
    pages = chunk_pages(starts, start, end)
    assert pages == sorted(set(pages)) and set(pages) >= on
    assert pages[0] == min(on) and pages[-1] == max(on)  # empty pages between are named too


def test_a_version_2_store_is_migrated_and_its_chunks_have_no_pages(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    with sqlite3.connect(db) as raw:
        raw.executescript(SCHEMA_1)
        raw.executescript("INSERT INTO meta VALUES ('app', 'chunk-boundary-explorer'), "
                          "('store_version', '1');")  # fmt: skip
        raw.executescript(_MIGRATE_1_TO_2)  # as store version 2 made its files
        raw.executescript(
            "INSERT INTO runs (run_id, started, config, documents_before, chunks_before) "
            " VALUES (1, '2026-01-01T00:00:00+00:00', '{}', 0, 0);"
            "INSERT INTO versions VALUES (1, 'acme', 'old', '1', 'rev', 'cfg', 'active', 1, 1, "
            " NULL);"
            "INSERT INTO documents VALUES ('acme', 'old', 1);"
            "INSERT INTO chunks VALUES (1, 'key', 1, 'acme', 'old', 'cid', 0, 4, 24, 3, 3, "
            " 'Kept through the move', 'sha', 'Title');"
            "INSERT INTO chunks_fts (rowid, text) VALUES (1, 'Kept through the move');"
            "INSERT INTO search_cache VALUES ('acme', '\"kept\"', 5, '[]');"
        )
    result = run_cli("search", "kept", "--tenant", "acme", "--db", db, "--mode", "bm25", "--json")
    assert [hit["pages"] for hit in json.loads(result.out)["hits"]] == [None]
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (
            STORE_VERSION,
        )
