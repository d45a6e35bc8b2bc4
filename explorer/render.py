"""HTML for the app, as pure functions: every piece of document text is escaped here."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from itertools import pairwise

from .checks import CheckResult, ResolvedCheck, SpanResult, own_starts
from .display import EXPLICIT_BIDI, plain_text
from .index import ChunkRecord, Index
from .loading import LoadResult
from .report import PolicyResult

# Chunks, span marks and verdicts one view may draw: each is a few hundred bytes of HTML,
# so this bounds a view at a few MB beside its (at most 1 MiB of) escaped text.
MAX_DRAWN_PIECES = 10_000

PALETTE = (
    "#cfe5ff",
    "#ffe0b0",
    "#d3f2d0",
    "#f8d3e8",
    "#e2dbff",
    "#fff1a6",
    "#c8efe9",
    "#ffd5cc",
)

# Monospace first, then fonts that hold CJK and emoji, so no character is drawn as a box.
MONO = (
    'ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono","Liberation Mono",'
    '"Noto Sans Mono CJK SC","Noto Sans CJK SC","Noto Sans CJK JP","Source Han Sans",'
    '"WenQuanYi Zen Hei","Microsoft YaHei","Apple Color Emoji","Segoe UI Emoji",'
    '"Noto Color Emoji","Twemoji Mozilla",monospace'
)

STYLE = (
    "<style>"
    '[data-testid="stMainBlockContainer"]{padding-top:2.5rem}'
    ".cbx-view{margin-bottom:.5rem;min-width:0}"
    ".cbx-head{font:600 14px/1.4 sans-serif;margin:0 0 6px;min-height:3.2em}"
    ".cbx-head .cbx-sub{font-weight:400;color:#555}"
    ".cbx-verdict{display:inline-block;border-radius:10px;padding:0 8px;margin:2px 4px 0 0;"
    "font:600 12px/1.6 sans-serif}"
    ".cbx-yes{background:#d7f5dd;color:#0b6b22}.cbx-no{background:#fde0e0;color:#a11212}"
    ".cbx-skip{background:#eceff1;color:#455a64}"
    ".cbx-doc{white-space:pre-wrap;overflow-wrap:anywhere;tab-size:4;"
    f"font:13px/1.7 {MONO};"
    "max-height:75vh;overflow:auto;border:1px solid #d0d0d0;border-radius:6px;padding:8px;"
    "background:#fff;color:#111}"
    ".cbx-gap{color:#6f6f6f}"
    ".cbx-limit{font:14px/1.5 sans-serif;border:1px solid #e0b252;background:#fff8e1;"
    "border-radius:6px;padding:8px;color:#5d4200}"
    ".cbx-k{box-decoration-break:clone;-webkit-box-decoration-break:clone}"
    + "".join(f".cbx-k{i}{{background:{colour}}}" for i, colour in enumerate(PALETTE))
    + ".cbx-n::before{content:attr(data-n);display:inline-block;font:700 10px/1.3 sans-serif;"
    "background:#37474f;color:#fff;border-radius:7px;padding:0 4px;margin:0 2px 0 0;"
    "vertical-align:1px}"
    # The outline lies outside the piece (offset >= 0), in the line gap: never on a glyph.
    ".cbx-in{outline:2px solid #c2185b;outline-offset:1px}"
    ".cbx-hl::before{content:attr(data-l);unicode-bidi:isolate;"
    "font:700 10px/1 sans-serif;color:#c2185b;vertical-align:super;margin-right:2px}"
    ".cbx-ov{background-image:repeating-linear-gradient(135deg,rgba(0,0,0,.09) 0 2px,"
    "transparent 2px 6px)}"
    ".cbx-legend{font:13px/2 sans-serif;color:#333}"
    ".cbx-legend span{padding:1px 4px;border-radius:3px}"
    "</style>"
)

LEGEND = (
    '<div class="cbx-legend">'
    '<span class="cbx-k cbx-k0">one chunk</span> <span class="cbx-k cbx-k1">the next</span>'
    " colours tell neighbouring chunks apart &nbsp;·&nbsp; "
    '<span class="cbx-n" data-n="3"></span> a chunk starts here: its order in the index, from 0'
    " &nbsp;·&nbsp; "
    '<span class="cbx-gap">grey text</span> is in no chunk (headings, blank lines)'
    " &nbsp;·&nbsp; "
    '<span class="cbx-in">outlined</span> a span of a check, with its '
    '<b style="color:#c2185b">label</b> &nbsp;·&nbsp; hover a chunk for its id, '
    "offsets, lines and section"
    "</div>"
)


@dataclass(frozen=True)
class Highlight:
    check_id: str
    label: str
    start: int
    end: int


def highlights(checks: Sequence[ResolvedCheck], source_id: str) -> list[Highlight]:
    """The spans of one document's checks."""
    return [
        Highlight(check.id, span.label, span.start, span.end)
        for check in checks
        if check.source_id == source_id
        for span in check.spans
    ]


def _chunk_title(chunk: ChunkRecord) -> str:
    return escape(
        f"chunk {chunk['order']} · {chunk['chunk_id'][:12]}… · "
        f"[{chunk['start']}, {chunk['end']}) · lines {chunk['start_line']}-{chunk['end_line']}"
        f" · § {plain_text(chunk['section_title'])}"
    )


def _label(mark: Highlight) -> str:
    title = escape(
        f"span {plain_text(repr(mark.label))} of check {plain_text(repr(mark.check_id))}"
    )
    return f'<span class="cbx-hl" title="{title}" data-l="{escape(mark.label)}"></span>'


def _cut_pieces(text: str) -> str:
    """Escaped text whose line breaks are character references: `st.html` dedents and
    strips what it is given, which would empty whitespace-only lines; one line cannot be."""
    return escape(text).replace("\n", "&#10;")


def render_text(text: str, chunks: Sequence[ChunkRecord], marks: Sequence[Highlight]) -> str:
    """The whole text, cut at every chunk and span boundary, one `<span>` per piece.

    `chunks` are one document's, in order. Nothing is left out, however long the text,
    and nothing is added to it: badges and labels are drawn from attributes, so the
    view's text is exactly the document's (and copies as such). A piece belongs to the
    chunk whose own part holds it; where a later chunk repeats it (overlap) it is also
    marked `cbx-ov`.
    """
    owns = own_starts(chunks)
    cuts = {0, len(text)}
    starts: defaultdict[int, list[int]] = defaultdict(list)
    for record, own in zip(chunks, owns, strict=True):
        cuts.update((record["start"], own, record["end"]))
        starts[record["start"]].append(record["order"])
    delta: Counter[int] = Counter()
    labels: defaultdict[int, list[Highlight]] = defaultdict(list)
    for mark in marks:
        cuts.update((mark.start, mark.end))
        delta[mark.start] += 1
        delta[mark.end] -= 1
        labels[mark.start].append(mark)
    points = sorted(cuts)
    parts: list[str] = []
    current = 0  # the chunk whose own part may hold the piece
    repeat = 0  # the chunk whose repeated part may hold it
    inside = 0
    for start, end in pairwise(points):
        inside += delta[start]
        while current < len(chunks) and chunks[current]["end"] <= start:
            current += 1
        while repeat < len(chunks) and owns[repeat] <= start:
            repeat += 1
        chunk: ChunkRecord | None = chunks[current] if current < len(chunks) else None
        if chunk is not None and owns[current] > start:
            chunk = None
        repeated = repeat < len(chunks) and chunks[repeat]["start"] <= start
        parts.extend(f'<span class="cbx-n" data-n="{order}"></span>' for order in starts[start])
        parts.extend(_label(mark) for mark in labels[start])
        extra = (" cbx-in" if inside > 0 else "") + (" cbx-ov" if repeated else "")
        piece = _cut_pieces(text[start:end])
        if EXPLICIT_BIDI.search(piece):  # an override reverses its own piece, no neighbour
            piece = f"<bdi>{piece}</bdi>"
        if chunk is None:
            parts.append(f'<span class="cbx-gap{extra}">{piece}</span>')
        else:
            colour = chunk["order"] % len(PALETTE)
            parts.append(
                f'<span class="cbx-k cbx-k{colour}{extra}" title="{_chunk_title(chunk)}">'
                f"{piece}</span>"
            )
    return "".join(parts)


def size_words(config: Mapping[str, object]) -> str:
    """A column's size as every place names it: `max_chars 220`, `max_tokens 256`."""
    parts = [
        f"{key} {value:,}" if isinstance(value, int) else f"{key} {value}"
        for key in ("max_chars", "max_tokens", "overlap")
        if (value := config.get(key)) is not None and not (key == "overlap" and value == 0)
    ]
    return " · ".join(parts) if parts else "unsized: one chunk per paragraph"


def _verdicts(checks: Sequence[CheckResult]) -> str:
    return "".join(
        f'<span class="cbx-verdict cbx-yes">✓ <bdi>{escape(c["id"])}</bdi>: together</span>'
        if c["together"]
        else f'<span class="cbx-verdict cbx-no">✗ <bdi>{escape(c["id"])}</bdi>: split</span>'
        for c in checks
    )


def render_view(
    text: str,
    source_id: str,
    result: PolicyResult,
    index: Index,
    marks: Sequence[Highlight],
) -> str:
    """One policy's view of one document: a header with its verdicts, then the text.

    A view with more than `MAX_DRAWN_PIECES` chunks, marks and verdicts is not drawn: it
    says so instead of building HTML without bound.
    """
    chunks = [c for c in index["chunks"] if c["source_id"] == source_id]
    own = [c for c in result["checks"] if c["source_id"] == source_id]
    head = (
        f'<div class="cbx-view" data-policy="{escape(result["name"])}">'
        f'<div class="cbx-head">{escape(result["name"])} '
        f'<span class="cbx-sub">({escape(size_words(result["config"]))})</span><br>'
        f'<span class="cbx-count" title="chunks of this document; of all documents">'
        f"{len(chunks):,} chunks in this document</span>"
        f'<span class="cbx-sub"> · {result["chunk_count"]:,} in all documents</span>'
    )
    if len(chunks) + len(marks) + len(own) > MAX_DRAWN_PIECES:
        return (
            f'{head}</div><div class="cbx-limit">Not drawn: this view has {len(chunks):,} '
            f"chunks, {len(marks):,} span marks and {len(own):,} checks, and a view draws at "
            f"most {MAX_DRAWN_PIECES:,} in all. Raise max_chars or choose a smaller document; "
            "the table above still says where each span lies.</div></div>"
        )
    return (
        f"{head}<br>{_verdicts(own)}</div>"
        f'<div class="cbx-doc">{render_text(text, chunks, marks)}</div></div>'
    )


def _where(span: SpanResult, orders: Mapping[str, int]) -> str:
    containing = span["containing_chunk_ids"]
    overlapping = span["overlapping_chunk_ids"]
    if containing:
        return ", ".join(str(orders[c]) for c in containing)
    if overlapping:
        return "split across " + ", ".join(str(orders[c]) for c in overlapping)
    return "in no chunk"


def containment_rows(evaluated: Sequence[tuple[PolicyResult, Index]]) -> list[dict[str, str]]:
    """One row per policy and check: where each span lies, and whether they are together."""
    rows = []
    for result, index in evaluated:
        orders = {c["chunk_id"]: c["order"] for c in index["chunks"]}
        base = {"Policy": result["name"], "Chunks": str(result["chunk_count"])}
        if not result["checks"]:
            rows.append({**base, "Check": "—", "Chunk of each span": "—", "Together": "—"})
        for check in result["checks"]:
            where = " · ".join(
                f"{span['label']}: {_where(span, orders)}" for span in check["spans"]
            )
            rows.append(
                {
                    **base,
                    "Check": f"{check['id']} ({check['source_id']})",
                    "Chunk of each span": where,
                    "Together": "yes" if check["together"] else "no",
                }
            )
    return rows


def document_rows(load: LoadResult) -> list[dict[str, str]]:
    """One row per document of the manifest: where it is, and whether it loaded."""
    return [
        {"Source": s.source_id, "Path": s.path, "Status": str(s.status), "Detail": s.detail}
        for s in load.statuses
    ]
