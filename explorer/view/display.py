"""Text a user supplied, made safe to show: literal in Markdown, isolated in direction.

Streamlit renders alert bodies, `st.markdown` and every `st.table` cell as Markdown, so
an id with a backtick or an `![](…)` in a quote would become markup (an image is a
request to a foreign host). `markdown_literal` turns any string into Markdown that
shows exactly those characters.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Mapping, Sequence

FSI, PDI = "\u2068", "\u2069"
# Bidi classes that can reorder what surrounds them: right-to-left letters and numbers,
# and the explicit embeddings, overrides and isolates.
_REORDERING = {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
_EXPLICIT = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# CommonMark lets a backslash escape every ASCII punctuation character. A colon becomes a
# character reference instead: Streamlit rewrites the raw `:material/` before parsing.
# GFM turns `http://…`, `www.…` and `a@b.c` in the parsed text into links, whatever was
# escaped: text that holds one (or a `mailto:`, an `xmpp:`, any `://`) is shown as code,
# where nothing is a link, rather than broken by an invisible character that a copy of it
# would carry along. Its colons stay outside the code, as references, so no `:…:` of it
# reaches Streamlit's icon and emoji rewriting.
_LINKABLE = re.compile(
    r"://|\bwww\.|\b(?:mailto|xmpp):|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE
)
_MARKDOWN = {
    **{ord(c): "\\" + c for c in string.punctuation},
    ord(":"): "&#58;",
}


# The explicit embeddings, overrides and isolates (LRE…RLO, LRI…PDI): the characters that
# reverse or re-nest what follows them.
EXPLICIT_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def visible_controls(text: str) -> str:
    """Control and bidi-formatting characters spelled out (`\\n`, `\\u202e`), so a line
    break cannot start a heading and an override cannot reverse its neighbours."""
    if text.isascii() and text.isprintable():  # no control, no bidi format character
        return text
    return "".join(
        _SHORT.get(c, f"\\u{ord(c):04x}")
        if unicodedata.category(c) == "Cc" or unicodedata.bidirectional(c) in _EXPLICIT
        else c
        for c in text
    )


def isolate(text: str) -> str:
    """Wrap text that could reorder its surroundings in FSI…PDI (a bidi isolate)."""
    if text.isascii():  # ASCII holds no right-to-left letter and no bidi control
        return text
    if any(unicodedata.bidirectional(c) in _REORDERING for c in text):
        return f"{FSI}{text}{PDI}"
    return text


def plain_text(text: str) -> str:
    """User text for a place that is not Markdown (a tooltip, a table cell as text)."""
    return isolate(visible_controls(text))


def _reference(spaces: str) -> str:
    return "".join(f"&#{ord(c)};" for c in spaces)


def markdown_literal(text: str) -> str:
    """Markdown that renders as exactly `text` (controls spelled out, direction isolated),
    and copies as exactly it: no invisible character is added.

    Spaces at either end become character references: four would start a code block,
    and a renderer would drop the rest. Text that GFM would make a link is a code span.
    """
    visible = visible_controls(text)
    if _LINKABLE.search(visible):  # code, its colons outside: Streamlit rewrites `:…:`
        return isolate("&#58;".join(_code_piece(piece) for piece in visible.split(":")))
    body = visible.translate(_MARKDOWN)
    core = body.strip()
    if not core:
        return _reference(body)
    start = body.index(core)
    end = start + len(core)
    return isolate(_reference(body[:start]) + core + _reference(body[end:]))


def _code_piece(text: str) -> str:
    """A piece of linkable text between colons: a code span, or spaces as references."""
    return code_span(text) if text.strip(" ") else _reference(text)


def code_span(text: str) -> str:
    """A Markdown code span that shows `text` (one line) exactly: fenced by more backticks
    than it holds in a row, padded where CommonMark would strip or join a space."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    padded = text.startswith(("`", " ")) or text.endswith(("`", " "))
    pad = " " if padded else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_rows(rows: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """Rows for `st.table`, whose every cell is Markdown: each value shown literally."""
    return [{key: markdown_literal(value) for key, value in row.items()} for row in rows]


_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
MAX_FILE_NAME_PART = 100


def file_name_part(text: str) -> str:
    """A piece of a download's file name: ASCII letters, digits, `.`, `-` and `_` only,
    so an override (U+202E) cannot disguise the extension, and at most 100 of them."""
    return _FILE_NAME_UNSAFE.sub("_", text)[:MAX_FILE_NAME_PART]


def count_words(count: int, noun: str) -> str:
    """`1 document`, `2,000 documents`: a count and its noun, in the right number."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def failed_documents_line(failed: int, total: int) -> str:
    """The warning over a set of documents some of which did not load: what became of
    them, and of the others only when there are others."""
    where = "listed under Documents below with what to change"
    if failed >= total:
        if total == 1:
            return f"The document failed to load; it is {where}."
        return f"All {total:,} documents failed to load; they are {where}."
    one = failed == 1
    others = total - failed
    return (
        f"{failed:,} of {total:,} documents failed to load; {'it is' if one else 'they are'} "
        f"{where}, {'its' if one else 'their'} span checks are marked not evaluated, and "
        f"the {'other one' if others == 1 else count_words(others, 'other')} can be explored."
    )


def size_words(config: Mapping[str, object]) -> str:
    """A column's size as every place names it: `max_chars 220`, `max_tokens 256`."""
    chunk_file, library = config.get("chunk_file"), config.get("library")
    if isinstance(chunk_file, Mapping):
        return f"imported {chunk_file.get('shape')} chunks"
    parts = [
        f"{key} {value:,}" if isinstance(value, int) else f"{key} {value}"
        for key in ("max_chars", "max_tokens", "overlap")
        if (value := config.get(key)) is not None and not (key == "overlap" and value == 0)
    ]
    if isinstance(library, Mapping):
        parts.append(f"{library.get('name')} {library.get('version')}")
    if not parts:
        parts.append("unsized, one chunk per paragraph")
    if config.get("grammar") is not None:
        parts.append(f"{config['grammar']} grammar")
    return " · ".join(parts)
