"""What the detail panel says of one chunk: its identity, where it lies, its size and flags."""

from __future__ import annotations

from collections.abc import Sequence

from ..checking.flags import FLAG_WORDS
from ..chunking.index import ChunkRecord, page_label
from ..chunking.tokens import count_tokens
from .display import plain_text


def chunk_facts(chunk: ChunkRecord, flags: Sequence[str]) -> list[dict[str, str]]:
    """Rows of (what, value): order, offsets, lines, section, size, flags (the id, too
    long for a table cell, goes in a copy box of its own)."""
    size = chunk["end"] - chunk["start"]
    facts = [
        ("Order", f"{chunk['order']:,}"),
        ("Offsets [start, end)", f"[{chunk['start']:,}, {chunk['end']:,})"),
        ("Lines", f"{chunk['start_line']:,} to {chunk['end_line']:,}"),
        *((("Pages of the PDF", page_label(chunk["pages"])),) if "pages" in chunk else ()),
        ("Section", plain_text(chunk["section_title"]) or "(before the first heading)"),
        (
            "Size",
            f"{size:,} characters · {count_tokens(chunk['text']):,} tokens (cl100k_base)",
        ),
        ("Flags", ", ".join(FLAG_WORDS[f] for f in flags) or "none"),
    ]
    return [{"Field": name, "Value": value} for name, value in facts]


FIRST_WORDS = 12


def chunk_list(
    chunks: Sequence[ChunkRecord], flags: Sequence[tuple[str, ...]]
) -> list[dict[str, object]]:
    """One row per chunk (one document's, in order): its order, section, size, flags and
    first words, for a list the page lets a person search and pick from."""
    return [
        {
            "Order": chunk["order"],
            "Section": plain_text(chunk["section_title"]),
            "Chars": chunk["end"] - chunk["start"],
            "Flags": ", ".join(FLAG_WORDS[f] for f in names),
            "First words": plain_text(" ".join(chunk["text"].split()[:FIRST_WORDS])),
        }
        for chunk, names in zip(chunks, flags, strict=True)
    ]
