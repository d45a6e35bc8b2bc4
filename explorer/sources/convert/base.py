"""What every converter shares: its interface, its result, and the refusals of a file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from typing_extensions import TypedDict

from ...errors import ErrorCode, ExplorerError
from ...limits import DEFAULT_LIMITS, MAX_CONVERTED_CHARS_LIMIT, MAX_PAGES_LIMIT
from ...models import PlainText, strict_shape

DEFAULT_MAX_PAGES = DEFAULT_LIMITS.pages_per_document
DEFAULT_MAX_CHARS = DEFAULT_LIMITS.converted_chars_per_document
# A Word file unpacks to at most this many times its own size, or 8 MiB if more: a zip
# bomb is refused, and mammoth (which reads about 0.2 MB of XML a second) is bounded.
MAX_UNPACKED_RATIO = 20


@strict_shape
class ConverterInfo(TypedDict):
    """Which converter made a document's text: part of the document's revision."""

    name: PlainText
    version: PlainText
    options: dict[str, str | int]


@dataclass(frozen=True)
class Converted:
    """A file's Markdown text, and where each page starts in it (None without pages)."""

    text: str
    page_starts: tuple[int, ...] | None = None


class Converter(Protocol):
    @property
    def suffixes(self) -> tuple[str, ...]:
        """The file suffixes it reads, lower case, with the dot."""

    def info(self) -> ConverterInfo:
        """Its name, version and options, as a document's record holds them."""

    def convert(self, path: str, data: bytes, max_pages: int, max_chars: int) -> Converted:
        """The file's bytes (already verified) as Markdown text, or a refusal naming `path`;
        refused (`require_chars`) as soon as the text made so far holds more than
        `max_chars` characters, so that the work follows the limit, not the file."""


def versions(*distributions: str) -> str:
    """The installed versions of the libraries a converter uses, joined by `+`."""
    from importlib.metadata import version  # asked when a file is converted, not at import

    return "+".join(version(name) for name in distributions)


def require_pages(path: str, pages: int, max_pages: int) -> None:
    if pages > max_pages:
        raise ExplorerError(
            ErrorCode.TOO_MANY_PAGES,
            f"{path!r} has {pages:,} pages, more than the limit of {max_pages:,}; split it, "
            f"or raise the limit with --max-pages N (at most {MAX_PAGES_LIMIT:,})",
        )


def require_chars(path: str, chars: int, max_chars: int) -> None:
    if chars > max_chars:
        raise ExplorerError(
            ErrorCode.DOCUMENT_TOO_LARGE,
            f"{path!r} converts to more than {max_chars:,} characters of text, the limit "
            "for a converted file; split it, or raise the limit with --max-converted-chars "
            f"N (at most {MAX_CONVERTED_CHARS_LIMIT:,})",
        )


def corrupt(path: str, what: str, reason: object) -> ExplorerError:
    return ExplorerError(
        ErrorCode.CORRUPT_DOCUMENT,
        f"{path!r} is not a readable {what} ({reason}); it may be damaged or cut short: "
        "open it in its program and save or export it again",
    )
