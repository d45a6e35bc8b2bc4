"""Quality flags on chunks (docs/contract.md §12): passages a reviewer should look at.

The seeds' chunking review asks to "inspect passages that are too long or depend on a
preceding heading". Each flag is a plain rule over one chunk, its document's text and its
column's config, so the app, the report and a test compute the same flags.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..chunking.config import ChunkConfig
from ..chunking.index import ChunkRecord
from ..chunking.tokens import count_tokens
from ..grammars.prose import SENTENCE_END
from ..memo import once
from .report import FlagCounts

OVER_SIZE, TINY, MID_SENTENCE, IN_CODE_BLOCK, DANGLING = (
    "over_size",
    "tiny",
    "mid_sentence",
    "in_code_block",
    "dangling_reference",
)
FLAGS = (OVER_SIZE, TINY, MID_SENTENCE, IN_CODE_BLOCK, DANGLING)
FLAG_WORDS = {
    OVER_SIZE: "longer than the size",
    TINY: "under a tenth of the size",
    MID_SENTENCE: "cut mid-sentence",
    IN_CODE_BLOCK: "cut inside a code block",
    DANGLING: "refers back, away from its heading",
}

# Short names, for a scoreboard column each.
FLAG_SHORT = {
    OVER_SIZE: "Longer than size",
    TINY: "Tiny",
    MID_SENTENCE: "Cut mid-sentence",
    IN_CODE_BLOCK: "Cut in code",
    DANGLING: "Dangling reference",
}
# What a policy does by design, so a flag says nothing about it: a fixed window cuts
# wherever its size ends, inside sentences and code blocks alike; under grammar v1,
# heading-aware keeps a paragraph longer than the size whole. The page leaves these out of
# a column's badge colours unless asked; the report counts every flag.
BY_DESIGN: Mapping[tuple[str, str | None], frozenset[str]] = {
    ("fixed-char", None): frozenset({MID_SENTENCE, IN_CODE_BLOCK}),
    ("heading-aware", "v1"): frozenset({OVER_SIZE}),
}


def by_design(config: ChunkConfig) -> frozenset[str]:
    """The flags `config`'s policy raises by design (under any grammar, or its own)."""
    return BY_DESIGN.get((config.strategy, None), frozenset()) | BY_DESIGN.get(
        (config.strategy, config.grammar_name), frozenset()
    )


def colour_flags(config: ChunkConfig, chosen: frozenset[str], leave_out: bool) -> frozenset[str]:
    """The flags that colour a column's badges: those `chosen`, less what its policy does
    by design when `leave_out` says so."""
    return chosen - by_design(config) if leave_out else chosen


def only_flags(flagged: Sequence[tuple[str, ...]], kept: frozenset[str]) -> list[tuple[str, ...]]:
    """Each chunk's flags, only those in `kept` (in `FLAGS` order)."""
    return [tuple(name for name in names if name in kept) for names in flagged]


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
# A sentence ends with . ! ? or … , then perhaps closing quotes, brackets or emphasis
# (as the markdown grammar cuts a long line after one).
_SENTENCE_END = re.compile(SENTENCE_END + "$")
# What a chunk may open with before its first word: blanks, list and quote markers, emphasis.
_LEAD = re.compile(r"[\s>*+\-_`#]*(?:\d+[.)]\s+)?[*_`]*")
_BACK_REFERENCE = re.compile(
    r"(?:This|That|These|Those|It|Its|They|Their|Them|Such|Above|"
    r"The (?:above|former|latter)|See (?:above|the above)|"
    r"As (?:above|mentioned|noted|shown|described|explained|discussed))\b"
)


@dataclass(frozen=True)
class Fences:
    """The fenced code blocks of one text, as `[start, end)` of whole lines, in order."""

    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, text: str) -> Fences:
        starts: list[int] = []
        ends: list[int] = []
        position = 0
        while (opening := _FENCE.search(text, position)) is not None:
            marker = opening.group(1)
            closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$", re.M)
            line_end = text.find("\n", opening.end())
            after = len(text) if line_end < 0 else line_end + 1
            close = closing.search(text, after)
            end = len(text) if close is None else _line_end(text, close.end())
            starts.append(opening.start())
            ends.append(end)
            position = end if end > opening.start() else len(text)
        return cls(tuple(starts), tuple(ends))

    def inside(self, offset: int) -> bool:
        """Whether `offset` cuts a fenced block: strictly between its first and last line."""
        at = bisect_right(self.starts, offset) - 1
        return at >= 0 and self.starts[at] < offset < self.ends[at]


def _line_end(text: str, offset: int) -> int:
    newline = text.find("\n", offset)
    return len(text) if newline < 0 else newline + 1


# How far `mid_sentence` reads along a cut's line, either way: a cut on a long line
# costs this much at most, not the whole line (each cut of a 1 MiB line read it all).
MID_SENTENCE_READ = 1_000


def mid_sentence(text: str, offset: int) -> bool:
    """Whether a cut at `offset` falls inside a sentence: the line holding it has text on
    both sides, and what comes before on that line does not end a sentence; the line
    read at most `MID_SENTENCE_READ` characters either side of the cut."""
    if not 0 < offset < len(text):
        return False
    low, high = max(0, offset - MID_SENTENCE_READ), min(len(text), offset + MID_SENTENCE_READ)
    newline = text.rfind("\n", low, offset)
    line_start = low if newline < 0 else newline + 1
    newline = text.find("\n", offset, high)
    line_end = high if newline < 0 else newline
    before = text[line_start:offset].rstrip()
    after = text[offset:line_end].strip()
    return bool(before) and bool(after) and not _SENTENCE_END.search(before)


def opens_with_back_reference(chunk_text: str) -> bool:
    """Whether the chunk's first word points back: This, It, Such, See above, …"""
    lead = _LEAD.match(chunk_text)
    return _BACK_REFERENCE.match(chunk_text, lead.end() if lead else 0) is not None


def _measure(config: ChunkConfig) -> tuple[int | None, bool]:
    """The size flags compare against (None: an unsized policy has no size flags), and
    whether it counts tokens."""
    if config.unit is not None and config.max_tokens is not None:
        return config.max_tokens, True
    return config.max_chars, False


def document_flags(
    text: str, chunks: Sequence[ChunkRecord], config: ChunkConfig
) -> list[tuple[str, ...]]:
    """Each of one document's chunks (in order) with its flags, in `FLAGS` order."""
    size, in_tokens = _measure(config)
    fences = once(text, "fences", lambda: Fences.of(text))
    seen_sections: set[str] = set()
    flagged: list[tuple[str, ...]] = []
    for chunk in chunks:
        body = chunk["text"]
        length = (count_tokens(body) if in_tokens else len(body)) if size else 0
        cuts = (chunk["start"], chunk["end"])
        in_code = any(fences.inside(cut) for cut in cuts)
        first_of_section = chunk["section_id"] not in seen_sections
        seen_sections.add(chunk["section_id"])
        found = {
            OVER_SIZE: size is not None and length > size,
            TINY: size is not None and length * 10 < size,
            MID_SENTENCE: any(mid_sentence(text, cut) and not fences.inside(cut) for cut in cuts),
            IN_CODE_BLOCK: in_code,
            DANGLING: not first_of_section and opens_with_back_reference(body),
        }
        flagged.append(tuple(name for name in FLAGS if found[name]))
    return flagged


def index_flags(
    texts: Mapping[str, str], chunks: Sequence[ChunkRecord], config: ChunkConfig
) -> list[tuple[str, ...]]:
    """`document_flags` for every chunk of an index (chunks grouped by document, as an
    index holds them), aligned with `chunks`."""
    flagged: list[tuple[str, ...]] = []
    start = 0
    while start < len(chunks):
        source_id = chunks[start]["source_id"]
        end = start
        while end < len(chunks) and chunks[end]["source_id"] == source_id:
            end += 1
        flagged.extend(document_flags(texts[source_id], chunks[start:end], config))
        start = end
    return flagged


def flag_counts(flagged: Sequence[tuple[str, ...]]) -> FlagCounts:
    """How many chunks carry each flag, and `flagged`: how many carry at least one."""
    counts = Counter(name for names in flagged for name in names)
    return {
        "over_size": counts[OVER_SIZE],
        "tiny": counts[TINY],
        "mid_sentence": counts[MID_SENTENCE],
        "in_code_block": counts[IN_CODE_BLOCK],
        "dangling_reference": counts[DANGLING],
        "flagged": sum(1 for names in flagged if names),
    }
