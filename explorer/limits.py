"""How much work one request may ask for: every count the input controls has a ceiling.

The defaults leave the real corpus (267 Markdown files) and the bundled fixtures far
inside them at the default sizes; each refusal names its limit and the command-line
option that raises it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ErrorCode, ExplorerError

# The most any limit may be raised to on the command line.
MAX_CHUNKS_LIMIT = 10_000_000
MAX_SPAN_CHECK_WORK_LIMIT = 1_000_000_000
MAX_SCORES_HELD_LIMIT = 1_000_000_000
# The command line's time limit for one library call, and the most it may be raised to.
DEFAULT_LIBRARY_SECONDS = 60
MAX_LIBRARY_SECONDS = 86_400
MAX_PAGES_LIMIT = 100_000
# The characters of text a PDF, Word or HTML file may convert to, and the most
# `--max-converted-chars` may raise it to (an upload holds at most 64 MiB).
DEFAULT_CONVERTED_CHARS = 8 * 1024 * 1024
MAX_CONVERTED_CHARS_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """`chunks_per_document` and `chunks_per_index` bound what a build or a validation
    holds; `span_check_work` bounds the spans of span checks times the chunks each is
    compared with; `scores_held` bounds the retrieval scores held at once (questions
    times chunks, 8 bytes each): `evaluate` ranks a block of questions at a time.
    `library_seconds` bounds one library call (a live column on one document): with it,
    the call runs in a child process that is killed past it; without it (the app), the
    call runs in this process, and a parameter that would make the library run a regular
    expression is refused (explorer/chunking/policies/libraries.py). `pages_per_document`
    bounds a PDF that is converted, and `converted_chars_per_document` the text any
    converted file makes (checked while it converts)."""

    chunks_per_document: int = 50_000
    chunks_per_index: int = 200_000
    span_check_work: int = 20_000_000
    scores_held: int = 4_000_000
    library_seconds: int | None = None
    pages_per_document: int = 2_000
    converted_chars_per_document: int = DEFAULT_CONVERTED_CHARS


DEFAULT_LIMITS = Limits()


def too_many_chunks(what: str, limit: int, option: str) -> ExplorerError:
    """The refusal for a chunk count past `limit`, naming the option that raises it."""
    return ExplorerError(
        ErrorCode.TOO_MANY_CHUNKS,
        f"{what} gives more than {limit:,} chunks, the limit; "
        f"raise it with {option} N (at most {MAX_CHUNKS_LIMIT:,})",
    )


def require_chunks_per_document(source_id: str, count: int, limits: Limits) -> None:
    if count > limits.chunks_per_document:
        raise too_many_chunks(
            f"document {source_id!r}", limits.chunks_per_document, "--max-document-chunks"
        )


def require_chunks_per_index(count: int, limits: Limits) -> None:
    if count > limits.chunks_per_index:
        raise too_many_chunks("the index", limits.chunks_per_index, "--max-chunks")


def require_span_check_work(spans: int, chunks: int, limits: Limits) -> None:
    """Each span of each check is compared with the chunks of every policy's index."""
    if spans * chunks > limits.span_check_work:
        raise ExplorerError(
            ErrorCode.TOO_MANY_SPAN_CHECKS,
            f"{spans:,} spans of span checks over {chunks:,} chunks make more than the limit of "
            f"{limits.span_check_work:,} comparisons; raise it with --max-span-check-work N "
            f"(at most {MAX_SPAN_CHECK_WORK_LIMIT:,}), or use fewer checks or larger chunks",
        )
