"""Span checks (docs/contract.md §7): does one chunk hold everything that belongs together?"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from typing_extensions import TypedDict

from ..chunking.index import ChunkRecord
from ..digests import digest
from ..errors import ErrorCode, ExplorerError
from ..limits import DEFAULT_LIMITS, Limits, require_span_check_work
from ..models import strict_shape, validated
from ..sources.manifest import ManifestSpan, SpanCheck


@dataclass(frozen=True)
class ResolvedSpan:
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class ResolvedCheck:
    id: str
    source_id: str
    spans: tuple[ResolvedSpan, ...]


@strict_shape
class SpanResult(TypedDict):
    """Where one span lies among one policy's chunks (docs/contract.md §7)."""

    label: str
    start: int
    end: int
    containing_chunk_ids: list[str]
    overlapping_chunk_ids: list[str]


@strict_shape
class CheckResult(TypedDict):
    """One span check under one policy: `together` when one chunk holds every span."""

    id: str
    source_id: str
    together: bool
    spans: list[SpanResult]


# What a person types for what a document prints: straight quotes for curly ones, a
# hyphen for any dash. Each maps one character to one, so offsets carry over.
_TYPED = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
    }
)
_SPACES = re.compile(r"\s+")
# The whitespace runs folding changes: all but a lone space, which stays itself.
_RUNS = re.compile(r"[^\S ]\s*| \s+")


@dataclass(frozen=True)
class Folded:
    """A text as quotes are matched in it: typographic quotes and dashes in their ASCII
    forms, each run of whitespace (line breaks included) one space. `runs` are the
    `(folded offset, offset in the text, run length)` of every whitespace run, so a match
    in the folded text is placed back on the text's own characters."""

    text: str
    runs: tuple[tuple[int, int, int], ...]

    @classmethod
    @lru_cache(maxsize=2)  # the spans of a document's checks share its folded text
    def of(cls, text: str) -> Folded:
        parts: list[str] = []
        runs: list[tuple[int, int, int]] = []
        done = folded = 0
        for run in _RUNS.finditer(text):
            parts.append(text[done : run.start()])
            folded += run.start() - done
            runs.append((folded, run.start(), run.end() - run.start()))
            parts.append(" ")
            folded += 1
            done = run.end()
        parts.append(text[done:])
        return cls("".join(parts).translate(_TYPED), tuple(runs))

    def _before(self, at: int) -> tuple[int, int]:
        """The text offset of folded offset `at`, and how many characters that folded
        character stands for (a whitespace run's length, else 1)."""
        shift = 0
        position = bisect_right(self.runs, at, key=lambda run: run[0]) - 1
        if position >= 0:
            folded, original, length = self.runs[position]
            if folded == at:
                return original, length
            shift = original + length - (folded + 1)
        return at + shift, 1

    def place(self, start: int, end: int) -> tuple[int, int]:
        """The text's `[start, end)` that folded `[start, end)` stands for: a whitespace
        run at either edge counts whole."""
        first, _ = self._before(start)
        last, length = self._before(end - 1)
        return first, last + length


def fold_quote(quote: str) -> str:
    """A quote folded as `Folded` folds a text."""
    return _SPACES.sub(" ", quote).translate(_TYPED)


def locate_quote(text: str, quote: str, where: str) -> tuple[int, int]:
    """Where `quote` occurs in `text`, exactly once, as people type quotes: a whitespace
    run matches any whitespace run (a line break too), a straight quote a curly one, a
    hyphen any dash. The offsets cover the text's own characters."""
    folded = Folded.of(text)
    needle = fold_quote(quote)
    first = folded.text.find(needle)
    if first < 0:
        raise ExplorerError(
            ErrorCode.SPAN_QUOTE_NOT_FOUND,
            f"{where}: the quote {quote!r} is not in the text",
        )
    again = folded.text.find(needle, first + 1)
    start, end = folded.place(first, first + len(needle))
    if again >= 0:
        raise ExplorerError(
            ErrorCode.SPAN_QUOTE_AMBIGUOUS,
            f"{where}: the quote {quote!r} occurs more than once (at {start} and "
            f"{folded.place(again, again + len(needle))[0]})",
        )
    return start, end


def resolve_span(text: str, span: ManifestSpan, where: str) -> ResolvedSpan:
    """A quote's unique position, or offsets checked against the text."""
    if span.quote is not None:
        return ResolvedSpan(span.label, *locate_quote(text, span.quote, where))
    length = len(text)
    start, end = span.start, span.end
    if start is None or end is None or not 0 <= start < end <= length:
        raise ExplorerError(
            ErrorCode.SPAN_OUT_OF_RANGE,
            f"{where}: [{start}, {end}) is not a non-empty span of the text's "
            f"{length:,} characters",
        )
    return ResolvedSpan(span.label, start, end)


def resolve_check(check: SpanCheck, text: str) -> ResolvedCheck:
    spans = tuple(
        resolve_span(text, span, f"check {check.id!r}, span {span.label!r}") for span in check.spans
    )
    return ResolvedCheck(check.id, check.source_id, spans)


def evaluate_check(check: ResolvedCheck, chunks: Sequence[ChunkRecord]) -> CheckResult:
    """Containing and overlapping chunks per span; together when one chunk holds them all."""
    own = [c for c in chunks if c["source_id"] == check.source_id]
    spans: list[SpanResult] = []
    shared: set[str] | None = None
    for span in check.spans:
        containing = [
            c["chunk_id"] for c in own if c["start"] <= span.start and span.end <= c["end"]
        ]
        overlapping = [
            c["chunk_id"] for c in own if c["start"] < span.end and span.start < c["end"]
        ]
        shared = set(containing) if shared is None else shared & set(containing)
        spans.append(
            {
                "label": span.label,
                "start": span.start,
                "end": span.end,
                "containing_chunk_ids": containing,
                "overlapping_chunk_ids": overlapping,
            }
        )
    return {"id": check.id, "source_id": check.source_id, "together": bool(shared), "spans": spans}


def evaluate_checks(
    checks: Sequence[ResolvedCheck], chunks: Sequence[ChunkRecord], limits: Limits = DEFAULT_LIMITS
) -> list[CheckResult]:
    """Every check against the chunks of its own document, once the work (each span
    against every chunk, at most) is known to be within `limits.span_check_work`."""
    require_span_check_work(sum(len(check.spans) for check in checks), len(chunks), limits)
    by_source: dict[str, list[ChunkRecord]] = {}
    for chunk in chunks:
        by_source.setdefault(chunk["source_id"], []).append(chunk)
    return [evaluate_check(check, by_source.get(check.source_id, [])) for check in checks]


def own_starts(chunks: Sequence[ChunkRecord]) -> list[int]:
    """Where each chunk's own part begins, for one document's chunks in order.

    With overlap, a chunk repeats the end of the chunk before it in its section:
    `[start, own_start)` is that repeated part and `[own_start, end)` the chunk's own,
    where `own_start = max(start, previous end)`. Without overlap every chunk is all its
    own (`own_start == start`).
    """
    starts: list[int] = []
    section, previous_end = None, 0
    for chunk in chunks:
        same_section = chunk["section_id"] == section
        starts.append(max(chunk["start"], previous_end) if same_section else chunk["start"])
        section, previous_end = chunk["section_id"], chunk["end"]
    return starts


def together_only_by_overlap(check: ResolvedCheck, chunks: Sequence[ChunkRecord]) -> bool:
    """Whether the check is together only thanks to overlap: some chunk holds every span
    of it, but none holds them all with every span starting in its own part (see
    `own_starts`); that is, each chunk that keeps them together does so because it
    repeats the end of the chunk before it. Always false without overlap."""
    own = [c for c in chunks if c["source_id"] == check.source_id]
    together = False
    for chunk, own_start in zip(own, own_starts(own), strict=True):
        if all(chunk["start"] <= s.start and s.end <= chunk["end"] for s in check.spans):
            if all(own_start <= s.start for s in check.spans):
                return False
            together = True
    return together


MAX_ADDED_CHECKS = 50


def new_check(raw: object, text: str, taken: set[str], added: int) -> SpanCheck:
    """A check a person adds beside the manifest's: a fresh name, at least one span, that
    places in `text`, and no more than `MAX_ADDED_CHECKS` of them."""
    if isinstance(raw, dict) and not raw.get("spans"):
        raise ExplorerError(ErrorCode.INVALID_MANIFEST, "give at least one span")
    check = validated(SpanCheck.model_validate, raw, ErrorCode.INVALID_MANIFEST)
    if check.id in taken:
        raise ExplorerError(ErrorCode.INVALID_MANIFEST, f"a check named {check.id!r} exists")
    if added >= MAX_ADDED_CHECKS:
        raise ExplorerError(
            ErrorCode.INVALID_MANIFEST,
            f"at most {MAX_ADDED_CHECKS} checks can be added here: remove one first",
        )
    resolve_check(check, text)
    return check


def checks_key(checks: Sequence[ResolvedCheck]) -> str:
    """One digest of where every check's spans lie: a cache key for what depends on them."""
    return digest(
        [[c.id, c.source_id, [[s.label, s.start, s.end] for s in c.spans]] for c in checks]
    )
