"""HTML to Markdown: the page's main content, without scripts, styles or the page's
chrome (navigation, banners, footers, sidebars, permalink anchors), by markdownify
(headings `h1`-`h6` as `#` lines, their titles as plain text)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from ...errors import ErrorCode, ExplorerError
from .base import Converted, ConverterInfo, versions

if TYPE_CHECKING:
    from bs4 import Tag

# How the page is read (a change here is another converter identity).
RULES = 2
# Elements whose content is not the page's text.
_DROPPED = ("head", "script", "style", "noscript", "template", "nav", "svg", "iframe", "img")
# The page's chrome: landmarks that are not its content, search forms, and the blocks
# documentation generators wrap around it (Sphinx's link bars, sidebar and footer).
_CHROME = (
    "[role=navigation], [role=banner], [role=contentinfo], [role=search], form, "
    "div.related, div.sphinxsidebar, div.footer, div.mobile-nav, div.md-sidebar, "
    "div.wy-nav-side, div.rst-footer-buttons"
)
# A `header` or `footer` is the page's banner or footer unless it sits in one of these.
_SECTIONING = ("article", "aside", "main", "nav", "section")
# Anchors that only link to the place they stand at: a heading's or a definition's
# permalink ("¶" in Sphinx), by class or by their text.
_PERMALINK_CLASSES = ("headerlink", "anchor", "anchorjs-link", "hash-link", "header-anchor")
_PERMALINK_TEXTS = ("", "¶", "§", "#", "🔗")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLANK_LINES = re.compile(r"\n{3,}")
# markdownify recurses into each element: deeper nesting is refused, well before Python's
# recursion limit (real pages nest a few dozen deep).
MAX_DEPTH = 128
# What a normalized text never holds: carriage returns (as line breaks) and NULs.
_LINE_BREAKS = re.compile(r"\r\n?")


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {
        "rules": RULES,
        "headings": "atx",
        "dropped": ",".join(_DROPPED),
        "chrome": "landmarks,generators,permalinks",
    }
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


def _is_permalink(anchor: Tag) -> bool:
    classes = anchor.get("class") or ()
    if any(name in _PERMALINK_CLASSES for name in classes):
        return True
    href = anchor.get("href")
    return (
        isinstance(href, str)
        and href.startswith("#")
        and anchor.get_text().strip() in _PERMALINK_TEXTS
    )


def _content(soup: Tag) -> Tag:
    """The page without its chrome: its one `main` element (or `role=main`) if it has
    one, else its body; navigation, banners, footers and permalinks removed."""
    for element in soup.find_all(_DROPPED):
        element.decompose()
    for element in soup.select(_CHROME):
        element.decompose()
    for element in soup.find_all(("header", "footer")):
        if element.find_parent(_SECTIONING) is None:
            element.decompose()
    for anchor in soup.find_all("a"):
        if _is_permalink(anchor):
            anchor.decompose()
    for heading in soup.find_all(_HEADINGS):  # a heading's title is its text
        for anchor in heading.find_all("a"):
            anchor.unwrap()
    mains = soup.select("main, [role=main]")
    if len(mains) == 1:
        return mains[0]
    return soup.body or soup


def html_markdown(path: str, html: str | bytes) -> str:
    """The Markdown of an HTML page or fragment (bytes decoded as the page declares)."""
    from bs4 import BeautifulSoup  # loaded when HTML is converted, not with the package
    from markdownify import MarkdownConverter

    body = _content(BeautifulSoup(html, "html.parser"))
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
