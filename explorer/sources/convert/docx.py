"""Word (.docx) to Markdown: mammoth maps the heading styles, lists and tables to HTML,
and the HTML converter makes Markdown of that."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from functools import cache

from ...errors import ErrorCode, ExplorerError
from .base import MAX_UNPACKED_RATIO, Converted, ConverterInfo, corrupt, versions
from .html import html_markdown

_ZIP_MAGIC = b"PK\x03\x04"
# Code as pandoc and Word write it (a "Source Code" or "HTML Preformatted" paragraph,
# "Verbatim Char" runs) is code: verbatim, never Markdown of its lines.
_STYLE_MAP = """
p[style-name='Source Code'] => pre:separator('\\n')
p[style-name='HTML Preformatted'] => pre:separator('\\n')
r[style-name='Verbatim Char'] => code
"""
# The least a Word file may unpack to, however small it is.
_MIN_UNPACKED = 8 * 1024 * 1024


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {
        "images": "dropped",
        "headings": "styles",
        "code": "Source Code,HTML Preformatted,Verbatim Char",
    }
    return {
        "name": "mammoth+markdownify",
        "version": versions("mammoth", "markdownify"),
        "options": options,
    }


@dataclass(frozen=True)
class DocxConverter:
    suffixes: tuple[str, ...] = (".docx",)

    def info(self) -> ConverterInfo:
        return _info()

    def convert(self, path: str, data: bytes, max_pages: int, max_chars: int) -> Converted:
        import mammoth

        if not data.startswith(_ZIP_MAGIC):
            raise ExplorerError(
                ErrorCode.NOT_A_DOCX,
                f"{path!r} is not a Word .docx file (a .docx is a zip archive; this one is "
                "not): if it is an old .doc or another format, open it in Word or "
                "LibreOffice and save it as .docx, then pin the new file's SHA-256",
            )
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                unpacked = sum(info.file_size for info in archive.infolist())
                if "word/document.xml" not in archive.namelist():
                    raise corrupt(path, "Word file", "it has no word/document.xml")
        except (zipfile.BadZipFile, ValueError, OSError) as error:
            raise corrupt(path, "Word file", error) from None
        limit = max(_MIN_UNPACKED, MAX_UNPACKED_RATIO * len(data))
        if unpacked > limit:
            raise ExplorerError(
                ErrorCode.DOCUMENT_TOO_LARGE,
                f"{path!r} unpacks to {unpacked:,} bytes, more than the {limit:,} a Word "
                "file of its size may hold",
            )
        try:
            html = mammoth.convert_to_html(io.BytesIO(data), style_map=_STYLE_MAP).value
        except Exception as error:
            raise corrupt(path, "Word file", type(error).__name__) from None
        return Converted(html_markdown(path, html, max_chars))


DOCX = DocxConverter()
