"""PDF to Markdown with PDFium (pypdfium2): each page's text layer in reading order, a
line set in larger type than the body made a heading, a wider gap between lines a new
paragraph, and where each page starts in the text."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ...errors import ErrorCode, ExplorerError
from .base import Converted, ConverterInfo, corrupt, require_chars, require_pages, versions

# How the text is laid out (a change here is another converter identity).
RULES = 1
# A line is a heading when its type is this much larger than the body's ...
HEADING_RATIO = 1.15
# ... and it is no longer than this; the largest sizes make '#', then '##', then '###'.
HEADING_MAX_CHARS = 150
HEADING_LEVELS = 3
# A gap between two lines of more than this part of the body size starts a paragraph.
PARAGRAPH_GAP = 0.6
PAGE_SEPARATOR = "\n\n"
# Control characters PDFium may put in a text layer (all but tab and newline), and the
# mark it leaves where a word was hyphenated at a line's end.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ufffe]")
# A lone line break inside one of PDFium's lines.
_BREAKS = re.compile(r"[\r\n]")
# A body line that Markdown would read as a heading or a fence is escaped.
_MARKUP = re.compile(r"^ {0,3}(#|```|~~~)")


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    size: float  # the type size of its first character
    top: float
    bottom: float


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {"rules": RULES, "headings": "type-size"}
    return {"name": "pypdfium2", "version": versions("pypdfium2"), "options": options}


@dataclass(frozen=True)
class PdfConverter:
    suffixes: tuple[str, ...] = (".pdf",)

    def info(self) -> ConverterInfo:
        return _info()

    def convert(self, path: str, data: bytes, max_pages: int, max_chars: int) -> Converted:
        import pypdfium2 as pdfium
        import pypdfium2.raw as raw

        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as error:
            if error.err_code in (raw.FPDF_ERR_PASSWORD, raw.FPDF_ERR_SECURITY):
                raise ExplorerError(
                    ErrorCode.ENCRYPTED_DOCUMENT,
                    f"{path!r} is encrypted with a password, so its text cannot be read: "
                    "save a copy without the password (open it and print it to a new "
                    "PDF), then pin that file's SHA-256",
                ) from None
            raise corrupt(path, "PDF", "PDFium cannot open it") from None
        with document:
            count = len(document)
            require_pages(path, count, max_pages)
            pages: list[list[_Line]] = []
            read = 0  # characters of the text layer so far, counted before each is read
            try:
                for i in range(count):
                    lines, read = _page_lines(document, i, raw, path, read, max_chars)
                    pages.append(lines)
            except pdfium.PdfiumError as error:
                raise corrupt(path, "PDF", f"PDFium cannot read a page: {error}") from None
        if not any(line.text.strip() for page in pages for line in page):
            raise ExplorerError(
                ErrorCode.NO_TEXT_LAYER,
                f"{path!r} has no text layer on "
                f"{'its one page' if count == 1 else f'any of its {count:,} pages'} (a scan, "
                "or pictures of text): run OCR on it first (e.g. ocrmypdf), then pin the new "
                "file's SHA-256",
            )
        return _markdown(path, pages, max_chars)


def _page_lines(
    document: object, index: int, raw: object, path: str, read: int, max_chars: int
) -> tuple[list[_Line], int]:
    """A page's lines in PDFium's reading order, each with its type size and height, and
    the characters read with this page's; refused before its text is read if those
    are more than `max_chars`."""
    page = document[index]  # type: ignore[index]
    text_page = page.get_textpage()
    try:
        read += text_page.count_chars()
        require_chars(path, read, max_chars)
        text = text_page.get_text_range()
        # Sizes and boxes are by character: read them only where PDFium's text and its
        # characters line up one to one (they nearly always do), else one plain size.
        aligned = len(text) == text_page.count_chars()
        lines: list[_Line] = []
        at = 0
        for line in text.split("\r\n"):  # PDFium's line break
            size, top, bottom = 0.0, 0.0, 0.0
            first = len(line) - len(line.lstrip())
            if aligned and line.strip():
                char = at + first
                size = raw.FPDFText_GetFontSize(text_page, char)  # type: ignore[attr-defined]
                _, bottom, _, top = text_page.get_charbox(char, loose=True)
            clean = _CONTROLS.sub("", _BREAKS.sub(" ", line))
            lines.append(_Line(clean.rstrip(), size, top, bottom))
            at += len(line) + 2
        return lines, read
    finally:
        text_page.close()
        page.close()


def _heading_levels(pages: Sequence[Sequence[_Line]]) -> tuple[float, dict[float, int]]:
    """The body's type size is the one most characters are set in; each larger size a
    heading's, the largest level 1."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page:
            if line.size:
                sizes[round(line.size, 1)] += len(line.text)
    if not sizes:
        return 0.0, {}
    body = sizes.most_common(1)[0][0]
    larger = sorted((s for s in sizes if s >= body * HEADING_RATIO), reverse=True)
    return body, {size: min(rank + 1, HEADING_LEVELS) for rank, size in enumerate(larger)}


def _markdown(path: str, pages: Sequence[Sequence[_Line]], max_chars: int) -> Converted:
    body, levels = _heading_levels(pages)
    texts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page in pages:
        page_text = _page_markdown(page, levels, body)
        if page_text and texts:
            texts.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        starts.append(offset)
        texts.append(page_text)
        offset += len(page_text)
        require_chars(path, offset, max_chars)  # headings' `#`s and escapes add some
    return Converted("".join(texts), tuple(starts))


def _page_markdown(page: Sequence[_Line], levels: dict[float, int], body: float) -> str:
    blocks: list[list[str]] = []
    previous: _Line | None = None
    previous_level = 0
    for line in page:
        if not line.text.strip():
            previous = None
            continue
        level = levels.get(round(line.size, 1), 0) if len(line.text) <= HEADING_MAX_CHARS else 0
        text = line.text.strip()
        if level:
            if previous_level == level and previous is not None and blocks:
                blocks[-1][0] += f" {text}"  # a heading set on two lines is one heading
            else:
                blocks.append([f"{'#' * level} {text}"])
        else:
            text = "\\" + text if _MARKUP.match(text) else text
            gap = previous.bottom - line.top if previous is not None else 0.0
            if previous is None or previous_level or gap > PARAGRAPH_GAP * (body or line.size):
                blocks.append([text])
            else:
                blocks[-1].append(text)
        previous, previous_level = line, level
    return "\n\n".join("\n".join(block) for block in blocks)


PDF = PdfConverter()
