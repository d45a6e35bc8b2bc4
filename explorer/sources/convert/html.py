"""HTML to Markdown: the page's body, without scripts, styles or navigation, by
markdownify (headings `h1`-`h6` as `#` lines)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from ...errors import ErrorCode, ExplorerError
from .base import Converted, ConverterInfo, versions

if TYPE_CHECKING:
    from bs4 import Tag

# Elements whose content is not the page's text.
_DROPPED = ("head", "script", "style", "noscript", "template", "nav", "svg", "iframe", "img")
_BLANK_LINES = re.compile(r"\n{3,}")
# markdownify recurses into each element: deeper nesting is refused, well before Python's
# recursion limit (real pages nest a few dozen deep).
MAX_DEPTH = 128
# What a normalized text never holds: carriage returns (as line breaks) and NULs.
_LINE_BREAKS = re.compile(r"\r\n?")


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {"headings": "atx", "dropped": ",".join(_DROPPED)}
    return {
        "name": "markdownify",
        "version": versions("markdownify", "beautifulsoup4"),
        "options": options,
    }


def _depth(root: Tag) -> int:
    """How deep elements nest below `root`, counted without recursion."""
    deepest = 0
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in element.find_all(recursive=False))
    return deepest


def html_markdown(path: str, html: str | bytes) -> str:
    """The Markdown of an HTML page or fragment (bytes decoded as the page declares)."""
    from bs4 import BeautifulSoup  # loaded when HTML is converted, not with the package
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all(_DROPPED):
        element.decompose()
    body = soup.body or soup
    if _depth(body) > MAX_DEPTH:
        raise ExplorerError(
            ErrorCode.CORRUPT_DOCUMENT,
            f"{path!r} nests its HTML elements more than {MAX_DEPTH} deep, more than a page "
            "needs and more than this converter reads: simplify it or export it again",
        )
    markdown = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(body)
    markdown = _LINE_BREAKS.sub("\n", markdown).replace("\x00", "")
    return _BLANK_LINES.sub("\n\n", markdown).strip() + "\n"


@dataclass(frozen=True)
class HtmlConverter:
    suffixes: tuple[str, ...] = (".html", ".htm")

    def info(self) -> ConverterInfo:
        return _info()

    def convert(self, path: str, data: bytes, max_pages: int) -> Converted:
        return Converted(html_markdown(path, data))


HTML = HtmlConverter()
