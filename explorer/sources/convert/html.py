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
from ...limits import MAX_CONVERTED_CHARS_LIMIT
from .base import Converted, ConverterInfo, require_chars, versions

if TYPE_CHECKING:
    from bs4 import Tag

# How the page is read (a change here is another converter identity).
RULES = 3
# Elements whose content is not the page's text.
_DROPPED = ("head", "script", "style", "noscript", "template", "nav", "svg", "iframe", "img")
# The page's chrome: landmarks that are not its content, search forms, and the blocks
# documentation generators wrap around it (Sphinx's link bars, sidebar and footer).
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "search")
_CHROME_TAGS = (*_DROPPED, "form")
_CHROME_DIVS = frozenset(
    {
        *("related", "sphinxsidebar", "footer", "mobile-nav"),  # Sphinx
        *("md-sidebar", "wy-nav-side", "rst-footer-buttons"),  # MkDocs Material, Read the Docs
    }
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


def _require_nesting(path: str, root: Tag, max_chars: int) -> None:
    """Elements nest at most `MAX_DEPTH` deep below `root` (`corrupt_document`), and
    their depths add up to at most `max_chars`: markdownify looks up each element's
    ancestors, so its work is that sum, which a page of tens of thousands of elements
    nested a hundred deep makes huge (`document_too_large`). Real pages stay far inside
    (Python's documentation: less than their characters of text). Counted without
    recursion, and stopped at the first excess."""
    from bs4 import Tag

    total = 0
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ExplorerError(
                ErrorCode.CORRUPT_DOCUMENT,
                f"{path!r} nests its HTML elements more than {MAX_DEPTH} deep, more than a "
                "page needs and more than this converter reads: simplify it or export it "
                "again",
            )
        total += depth
        if total > max_chars:
            raise ExplorerError(
                ErrorCode.DOCUMENT_TOO_LARGE,
                f"{path!r} nests so many HTML elements so deep that their depths add up to "
                f"more than {max_chars:,}, the limit of a converted file's characters that "
                "also bounds the converter's work: simplify it, or raise the limit with "
                f"--max-converted-chars N (at most {MAX_CONVERTED_CHARS_LIMIT:,})",
            )
        stack.extend((child, depth + 1) for child in element.contents if isinstance(child, Tag))


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


def _is_chrome(element: Tag) -> bool:
    if element.name in _CHROME_TAGS or element.get("role") in _CHROME_ROLES:
        return True
    if element.name == "div" and not _CHROME_DIVS.isdisjoint(element.get("class") or ()):
        return True
    return element.name in ("header", "footer") and element.find_parent(_SECTIONING) is None


def _content(soup: Tag) -> Tag:
    """The page without its chrome: its one `main` element (or `role=main`) if it has
    one, else its body; navigation, banners, footers and permalinks removed, and each
    heading's links reduced to their text. One pass over the elements, none into what
    is removed."""
    from bs4 import Tag

    removed: list[Tag] = []
    headings: list[Tag] = []
    mains: list[Tag] = []
    stack = [child for child in soup.contents if isinstance(child, Tag)]
    while stack:
        element = stack.pop()
        if _is_chrome(element) or (element.name == "a" and _is_permalink(element)):
            removed.append(element)
            continue
        if element.name in _HEADINGS:
            headings.append(element)
        elif element.name == "main" or element.get("role") == "main":
            mains.append(element)
        stack.extend(child for child in element.contents if isinstance(child, Tag))
    for element in removed:
        element.decompose()
    for heading in headings:  # a heading's title is its text
        for anchor in heading.find_all("a"):
            anchor.unwrap()
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
def _converter() -> type[Any]:
    """markdownify's converter, with code kept verbatim, that counts what it makes: each
    element's text, and its children's as they come, is refused past `max_chars` (a page
    of nested quotes around many lines multiplies its lines' markers), so the work and
    the memory follow the limit (imported when HTML is converted, not with the package)."""
    from markdownify import MarkdownConverter

    # Typed as Any: markdownify's stubs declare neither its hooks nor its options.
    base: Any = MarkdownConverter

    class Converter(base):  # type: ignore[misc]
        def __init__(self, path: str, max_chars: int, **options: Any) -> None:
            super().__init__(**options)
            self.path, self.max_chars = path, max_chars
            self.made: list[int] = []  # per element being converted, its children's text

        def process_tag(self, node: Any, parent_tags: Any = None) -> str:
            self.made.append(0)
            try:
                text = str(super().process_tag(node, parent_tags))
            finally:
                self.made.pop()
            require_chars(self.path, len(text), self.max_chars)
            return text

        def process_element(self, node: Any, parent_tags: Any = None) -> str:
            text = str(super().process_element(node, parent_tags))
            if self.made:
                self.made[-1] += len(text)
                require_chars(self.path, self.made[-1], self.max_chars)
            return text

        def process_text(self, el: Any, parent_tags: Any = None) -> str:
            return str(super().process_text(el, parent_tags)).replace(_CODE_LINE, "")

        def convert_br(self, el: Any, text: str, parent_tags: Any) -> str:
            if "pre" in parent_tags:  # a line break in code is a line break
                return "\n" + text
            return str(super().convert_br(el, text, parent_tags))

        def convert_pre(self, el: Any, text: str, parent_tags: Any) -> str:
            return code_block(text)

    return Converter


def html_markdown(path: str, html: str | bytes, max_chars: int) -> str:
    """The Markdown of an HTML page or fragment (bytes decoded as the page declares), of
    at most `max_chars` characters (`document_too_large`, checked while it converts)."""
    from bs4 import BeautifulSoup  # loaded when HTML is converted, not with the package

    body = _content(BeautifulSoup(html, "html.parser"))
    _require_nesting(path, body, max_chars)
    converter = _converter()(path, max_chars, heading_style="ATX", bullets="-")
    markdown = converter.convert_soup(body)
    markdown = _BLANK_LINES.sub("\n\n", _LINE_BREAKS.sub("\n", markdown))
    return markdown.replace(_CODE_LINE, "").strip("\n").rstrip() + "\n"


@dataclass(frozen=True)
class HtmlConverter:
    suffixes: tuple[str, ...] = (".html", ".htm")

    def info(self) -> ConverterInfo:
        return _info()

    def convert(self, path: str, data: bytes, max_pages: int, max_chars: int) -> Converted:
        return Converted(html_markdown(path, data, max_chars))


HTML = HtmlConverter()
