"""Word (.docx) to Markdown: mammoth maps the heading styles, lists and tables to HTML,
and the HTML converter makes Markdown of that."""

from __future__ import annotations

import io
import re
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
# The least a Word file may unpack to, however small it is: python-docx's own empty
# file unpacks to 0.8 MB (22 times its size, its styles are long and repetitive).
_MIN_UNPACKED = 1024 * 1024
# The parts mammoth reads (its XML parser and its reader recurse into each element):
# they nest at most this deep (Word's own files, a table in a table in a text box,
# stay well inside), checked while they are parsed, before mammoth reads them.
MAX_XML_DEPTH = 64
_READ_PARTS = re.compile(
    r"\[Content_Types\]\.xml|_rels/\.rels|word/[^/]+\.xml|word/_rels/[^/]+\.rels"
)


class _TooDeep(Exception):
    pass


def _require_shallow_xml(path: str, archive: zipfile.ZipFile) -> None:
    """Each XML part mammoth reads is parsed once, streaming (expat), to refuse one that
    nests past `MAX_XML_DEPTH` at the first element too deep, or that declares a DTD
    (entities that expand), which a Word file never does."""
    from xml.parsers import expat

    for info in archive.infolist():
        name = info.filename
        if not _READ_PARTS.fullmatch(name):
            continue  # media, themes, embedded files: not read as text
        depth = 0

        def start(tag: str, attributes: object) -> None:
            nonlocal depth
            depth += 1
            if depth > MAX_XML_DEPTH:
                raise _TooDeep

        def end(tag: str) -> None:
            nonlocal depth
            depth -= 1

        def doctype(*declaration: object) -> None:
            raise expat.ExpatError("a document type declaration")

        parser = expat.ParserCreate()
        parser.StartElementHandler = start
        parser.EndElementHandler = end
        parser.StartDoctypeDeclHandler = doctype
        try:
            with archive.open(info) as handle:
                parser.ParseFile(handle)
        except _TooDeep:
            raise ExplorerError(
                ErrorCode.CORRUPT_DOCUMENT,
                f"{path!r} nests the XML elements of its part {name!r} more than "
                f"{MAX_XML_DEPTH} deep, more than a Word file needs and more than this "
                "converter reads: open it in Word or LibreOffice and save it again",
            ) from None
        except expat.ExpatError as error:
            raise corrupt(path, "Word file", f"{name}: {error}") from None


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {
        "images": "dropped",
        "headings": "styles",
        "code": "Source Code,HTML Preformatted,Verbatim Char",
        "xml_depth": MAX_XML_DEPTH,
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
                limit = max(_MIN_UNPACKED, MAX_UNPACKED_RATIO * len(data))
                if unpacked > limit:
                    raise ExplorerError(
                        ErrorCode.DOCUMENT_TOO_LARGE,
                        f"{path!r} unpacks to {unpacked:,} bytes, more than the {limit:,} "
                        f"a Word file of its size may hold ({MAX_UNPACKED_RATIO} times its "
                        f"size, or {_MIN_UNPACKED:,} bytes if more)",
                    )
                _require_shallow_xml(path, archive)
        except (
            zipfile.BadZipFile,
            ValueError,
            OSError,
            RuntimeError,
            NotImplementedError,
        ) as error:
            raise corrupt(path, "Word file", error) from None
        try:
            html = mammoth.convert_to_html(io.BytesIO(data), style_map=_STYLE_MAP).value
        except Exception as error:
            raise corrupt(path, "Word file", type(error).__name__) from None
        return Converted(html_markdown(path, html, max_chars))


DOCX = DocxConverter()
