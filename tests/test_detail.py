"""The chunk detail panel's facts."""

from __future__ import annotations

from explorer import build_index, make_config
from explorer.chunking.tokens import count_tokens
from explorer.view.detail import chunk_facts
from tests.test_render import doc


def test_the_facts_of_a_chunk() -> None:
    text = "# Intro\n\nfirst words here\n"
    [chunk] = build_index([doc(text)], make_config("paragraph"))["chunks"]
    facts = {row["Field"]: row["Value"] for row in chunk_facts(chunk, ("tiny", "mid_sentence"))}
    assert facts == {
        "Order": "0",
        "Offsets [start, end)": f"[{chunk['start']}, {chunk['end']})",
        "Lines": "3 to 3",
        "Section": "Intro",
        "Size": f"{len(chunk['text'])} characters · {count_tokens(chunk['text'])} tokens "
        "(cl100k_base)",
        "Flags": "under a tenth of the size, cut mid-sentence",
    }
