"""HTML to Markdown: the page's main content, without scripts, styles or the page's
chrome (navigation, banners, footers, sidebars, permalink anchors), by markdownify
(headings `h1`-`h6` as `#` lines, their titles as plain text; `pre` as fenced code,
verbatim)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ...errors import ErrorCode, ExplorerError
from .base import Converted, ConverterInfo, versions

if TYPE_CHECKING:
    from bs4 import Tag
    from markdownify import MarkdownConverter

# How the page is read (a change here is another converter identity).
RULES = 3
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
# A line grammar v1 reads as a heading (docs/contract.md §4): one to six `#` and a space.
_V1_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_BACKTICKS = re.compile(r"`{3,}")
# While a page converts, each line of a code block starts with a NUL (the text's own
# NULs are dropped first), so that no blank line inside code is merged; then removed.
_CODE_LINE = "\x00"
# CommonMark strips up to three spaces of a fenced block's indentation from its lines.
_FENCE_INDENT = "   "


@cache
def _info() -> ConverterInfo:
    options: dict[str, str | int] = {
        "rules": RULES,
        "headings": "atx",
        "dropped": ",".join(_DROPPED),
        "chrome": "landmarks,generators,permalinks",
        "code": "fenced,verbatim",
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


def code_block(code: str) -> str:
    """A fenced block of `code` as it is: its indentation, blank lines and characters
    (no escapes). The fence is longer than any run of backticks in it; the block is
    indented three spaces (which CommonMark strips from its lines) when a line would
    otherwise read as a heading to grammar v1, such as a `# comment` in Python."""
    code = _LINE_BREAKS.sub("\n", code).strip("\n")
    if not code.strip():
        return ""
    fence = "`" * max(3, max(map(len, _BACKTICKS.findall(code)), default=0) + 1)
    indent = _FENCE_INDENT if _V1_HEADING.search(code) else ""
    lines = (fence, *code.split("\n"), fence)
    marked = (f"{indent if line else ''}{_CODE_LINE}{line}" for line in lines)
    return "\n\n" + "\n".join(marked) + "\n\n"


@cache
def _converter() -> type[MarkdownConverter]:
    """markdownify's converter, with code kept verbatim (imported when HTML is converted,
    not with the package)."""
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):  # type: ignore[misc]
        def process_text(self, el: Any, parent_tags: Any = None) -> str:
            return str(super().process_text(el, parent_tags)).replace(_CODE_LINE, "")

        def convert_br(self, el: Any, text: str, parent_tags: Any) -> str:
            if "pre" in parent_tags:  # a line break in code is a line break
                return "\n" + text
            return str(super().convert_br(el, text, parent_tags))

        def convert_pre(self, el: Any, text: str, parent_tags: Any) -> str:
            return code_block(text)

    return Converter


def html_markdown(path: str, html: str | bytes) -> str:
    """The Markdown of an HTML page or fragment (bytes decoded as the page declares)."""
    from bs4 import BeautifulSoup  # loaded when HTML is converted, not with the package

    body = _content(BeautifulSoup(html, "html.parser"))
    if _depth(body) > MAX_DEPTH:
        raise ExplorerError(
            ErrorCode.CORRUPT_DOCUMENT,
            f"{path!r} nests its HTML elements more than {MAX_DEPTH} deep, more than a page "
            "needs and more than this converter reads: simplify it or export it again",
        )
    markdown = _converter()(heading_style="ATX", bullets="-").convert_soup(body)
    markdown = _BLANK_LINES.sub("\n\n", _LINE_BREAKS.sub("\n", markdown))
    return markdown.replace(_CODE_LINE, "").strip("\n").rstrip() + "\n"


@dataclass(frozen=True)
class HtmlConverter:
    suffixes: tuple[str, ...] = (".html", ".htm")

    def info(self) -> ConverterInfo:
        return _info()

    def convert(self, path: str, data: bytes, max_pages: int) -> Converted:
        return Converted(html_markdown(path, data))


HTML = HtmlConverter()
