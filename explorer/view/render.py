"""HTML for the app, as pure functions: every piece of document text is escaped here."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from itertools import pairwise
from typing import TYPE_CHECKING

from ..checking.checks import CheckResult, ResolvedCheck, own_starts
from ..checking.flags import FLAG_WORDS
from ..checking.report import PolicyResult
from ..chunking.index import ChunkRecord, Index, page_label
from ..sources.loading import LoadResult
from .display import EXPLICIT_BIDI, plain_text, size_words
from .navigation import render_minimap

if TYPE_CHECKING:
    from ..retrieval.evaluate import QuestionResult, ReferenceRange
    from .scoreboard import MatrixRow

# Chunks, span marks and verdicts one view may draw: each is a few hundred bytes of HTML,
# so this bounds a view at a few MB beside its (at most 1 MiB of) escaped text.
MAX_DRAWN_PIECES = 10_000
# What a view's count of flagged chunks counts (the scoreboard's counts every flag).
_FLAGGED_HERE = (
    "chunks of this document whose badge a chosen flag colours; the scoreboard counts "
    "every flag in every document"
)

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
    ".cbx-head{font:600 14px/1.4 sans-serif;margin:0 0 6px}"
    ".cbx-name{overflow-wrap:anywhere;min-height:2.8em}"
    ".cbx-docname{font-weight:600;color:#222}"
    ".cbx-k{cursor:pointer}.cbx-n{cursor:pointer}"
    ".cbx-picked{outline:3px solid #1976d2;outline-offset:1px}"
    ".cbx-reached::before{background:#1976d2!important;box-shadow:0 0 0 3px #90caf9}"
    ".cbx-note-step{font:400 12px/1.5 sans-serif;color:#0d47a1;margin-left:4px}"
    ".cbx-line{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    ".cbx-verdicts{white-space:nowrap;overflow-x:auto}"
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
    ".cbx-nf::before{background:#b45309}"
    ".cbx-dim{opacity:.35}"
    ".cbx-flagcount{font-weight:400;color:#b45309}"
    ".cbx-page{font:400 12px/1.6 sans-serif;color:#37474f}"
    ".cbx-ov{background-image:repeating-linear-gradient(135deg,rgba(0,0,0,.09) 0 2px,"
    "transparent 2px 6px)}"
    ".cbx-legend{font:13px/2 sans-serif;color:#333}"
    ".cbx-scroll{overflow-x:auto;max-width:100%}"
    ".cbx-matrix{border-collapse:collapse;font:13px/1.4 sans-serif;margin:4px 0 12px}"
    ".cbx-matrix th,.cbx-matrix td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;"
    "vertical-align:top}"
    ".cbx-matrix thead th{background:#f4f6f8;white-space:nowrap}"
    ".cbx-cell{font-weight:600;min-width:9em}"
    ".cbx-where{font-weight:400;font-size:12px;color:#444}"
    ".cbx-note{font:14px/1.5 sans-serif;color:#333;background:#f4f6f8;border-radius:6px;"
    "padding:8px 12px;margin:4px 0 12px}"
    ".cbx-legend span{padding:1px 4px;border-radius:3px}"
    # Navigation: the minimap beside each view, the boundary steps, the matrix's jumps.
    ".cbx-body{display:flex;gap:5px;align-items:stretch}"
    ".cbx-body>.cbx-doc{flex:1 1 auto;min-width:0}"
    ".cbx-map{flex:0 0 16px;position:relative;cursor:pointer;border:1px solid #d0d0d0;"
    "border-radius:4px;background:#f7f8fa;overflow:hidden}"
    ".cbx-map i{position:absolute;left:0;right:0}"
    ".cbx-mp{background:rgba(25,118,210,.13)}"
    ".cbx-mh{border:2px solid #1976d2;border-radius:2px;min-height:4px;top:0;height:0;"
    "pointer-events:none}"
    ".cbx-mt{height:1px;background:#37474f;opacity:.55}"
    ".cbx-ms{right:50%!important;min-height:2px;background:#c2185b}"
    ".cbx-mf{left:50%!important;min-height:2px;background:#f59e0b}"
    ".cbx-steps{display:block;white-space:nowrap}"
    ".cbx-step,.cbx-jump{font:400 12px/1.5 sans-serif;color:#1f3a5f;background:#eef3f8;"
    "border:1px solid #c5d3e2;border-radius:9px;padding:0 7px;margin:0 4px 2px 0;"
    "cursor:pointer}"
    ".cbx-step:hover,.cbx-jump:hover{background:#dde8f3}"
    ".cbx-step:disabled{color:#888;background:#f4f4f4;border-color:#ddd;cursor:default}"
    # A PDF's page break: a dashed rule named by the page that starts there.
    ".cbx-pb{display:block;border-top:1px dashed #78909c;margin:3px 0 1px;line-height:1}"
    ".cbx-pb::before{content:attr(data-p);font:600 10px/1.4 sans-serif;color:#546e7a;"
    "background:#eceff1;border-radius:0 0 4px 4px;padding:0 5px}"
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
    '<b style="color:#c2185b">label</b> &nbsp;·&nbsp; '
    '<span class="cbx-n cbx-nf" data-n="4"></span> a flagged chunk &nbsp;·&nbsp; '
    '<span class="cbx-ov">striped</span> repeated by the next chunk (overlap) &nbsp;·&nbsp; '
    "hover a chunk for its id, offsets, lines, section and flags &nbsp;·&nbsp; "
    "the strip beside a view is the whole document: click it to go there; scrolling one "
    "view scrolls the others to the same line"
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


def _chunk_title(chunk: ChunkRecord, flags: Sequence[str] = ()) -> str:
    flagged = f" · flags: {', '.join(FLAG_WORDS[f] for f in flags)}" if flags else ""
    return escape(
        f"chunk {chunk['order']} · {chunk['chunk_id'][:12]}… · "
        f"[{chunk['start']}, {chunk['end']}) · lines {chunk['start_line']}-{chunk['end_line']}"
        + (f" · {page_label(chunk['pages'])}" if "pages" in chunk else "")
        + f" · § {plain_text(chunk['section_title'])}{flagged}"
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


def render_text(
    text: str,
    chunks: Sequence[ChunkRecord],
    marks: Sequence[Highlight],
    ranks: Mapping[int, int] | None = None,
    flags: Sequence[tuple[str, ...]] | None = None,
    shown: frozenset[str] = frozenset(),
    window: tuple[int, int] | None = None,
    page_starts: Sequence[int] = (),
) -> str:
    """The whole text, cut at every chunk and span boundary, one `<span>` per piece.

    `chunks` are one document's, in order. Nothing is left out, however long the text,
    and nothing is added to it: badges and labels are drawn from attributes, so the
    view's text is exactly the document's (and copies as such). A piece belongs to the
    chunk whose own part holds it; where a later chunk repeats it (overlap) it is also
    marked `cbx-ov`. `ranks` maps a retrieved chunk's order to its rank: its pieces are
    marked `cbx-hit`, and a rank badge is drawn at its start.

    `flags` (aligned with `chunks`) badge a flagged chunk in amber and name its flags in
    its hover text; with a filter `shown`, chunks carrying none of those flags are dimmed.

    Each piece names the offset of its first character (`data-o`) and each badge its
    chunk's start (`data-at`): the page's navigation script finds places by them.

    `page_starts` (a PDF's) mark each page break after the first with an empty
    `cbx-pb` span that names the page (`data-p`), drawn as a rule.
    """
    flags = flags if flags is not None else [()] * len(chunks)
    owns = own_starts(chunks)
    low, high = window if window is not None else (0, len(text))
    cuts = {low, high}
    starts: defaultdict[int, list[int]] = defaultdict(list)  # positions in `chunks`
    for position, (record, own) in enumerate(zip(chunks, owns, strict=True)):
        cuts.update((record["start"], own, record["end"]))
        starts[record["start"]].append(position)
    delta: Counter[int] = Counter()
    labels: defaultdict[int, list[Highlight]] = defaultdict(list)
    for mark in marks:
        cuts.update((mark.start, mark.end))
        delta[mark.start] += 1
        delta[mark.end] -= 1
        labels[mark.start].append(mark)
    breaks: defaultdict[int, list[int]] = defaultdict(list)
    for number, at in enumerate(page_starts[1:], 2):
        cuts.add(at)
        breaks[at].append(number)
    points = sorted(cut for cut in cuts if low <= cut <= high)  # `window`: only its part
    parts: list[str] = []
    current = 0  # the chunk whose own part may hold the piece
    repeat = 0  # the chunk whose repeated part may hold it
    inside = sum(change for at, change in delta.items() if at < low)  # spans open at `low`
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
        parts.extend(f'<span class="cbx-pb" data-p="p. {n}"></span>' for n in breaks[start])
        for position in starts[start]:
            order = chunks[position]["order"]
            if ranks and order in ranks:  # a retrieved chunk: its rank, then its order
                parts.append(f'<span class="cbx-r" data-r="#{ranks[order]}"></span>')
            if flags[position]:
                parts.append(
                    f'<span class="cbx-n cbx-nf" data-n="{order}" '
                    f'data-flags="{" ".join(flags[position])}" data-at="{start}"></span>'
                )
            else:
                parts.append(f'<span class="cbx-n" data-n="{order}" data-at="{start}"></span>')
        parts.extend(_label(mark) for mark in labels[start])
        extra = (" cbx-in" if inside > 0 else "") + (" cbx-ov" if repeated else "")
        piece = _cut_pieces(text[start:end])
        if EXPLICIT_BIDI.search(piece):  # an override reverses its own piece, no neighbour
            piece = f"<bdi>{piece}</bdi>"
        if chunk is None:
            parts.append(f'<span class="cbx-gap{extra}" data-o="{start}">{piece}</span>')
        else:
            colour = chunk["order"] % len(PALETTE)
            extra += " cbx-hit" if ranks and chunk["order"] in ranks else ""
            names = flags[current]
            extra += " cbx-dim" if shown and not shown.intersection(names) else ""
            parts.append(
                f'<span class="cbx-k cbx-k{colour}{extra}" data-o="{start}" '
                f'data-c="{chunk["order"]}" title="{_chunk_title(chunk, names)}">{piece}</span>'
            )
    return "".join(parts)


def _page_starts(index: Index, source_id: str) -> Sequence[int]:
    """Where each page of a document starts, if it has pages."""
    document = next((d for d in index["documents"] if d["source_id"] == source_id), None)
    return () if document is None else document.get("page_starts", ())


def chunk_text_html(text: str) -> str:
    """One chunk's text on its own, drawn as faithfully as a view draws it."""
    piece = _cut_pieces(text)
    if EXPLICIT_BIDI.search(piece):
        piece = f"<bdi>{piece}</bdi>"
    return f'<div class="cbx-doc cbx-detail">{piece}</div>'


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
    flags: Sequence[tuple[str, ...]] | None = None,
    shown: frozenset[str] = frozenset(),
    window: tuple[int, int] | None = None,
    aside: str = "",
) -> str:
    """One policy's view of one document: a header with its verdicts, then the text,
    and `aside` (HTML: a semantic column's curve) beside it.

    `flags` are `flags.index_flags` of the whole index (aligned with its chunks); `shown`
    the flags a filter asks for. `window` draws one page of the text (`paging.pages`),
    and the header says which characters and chunks it holds.

    A view with more than `MAX_DRAWN_PIECES` chunks, marks and verdicts is not drawn: it
    says so instead of building HTML without bound.
    """
    every = flags if flags is not None else [()] * len(index["chunks"])
    pairs = [
        (c, f) for c, f in zip(index["chunks"], every, strict=True) if c["source_id"] == source_id
    ]
    chunks = [c for c, _ in pairs]
    chunk_flags = [f for _, f in pairs]
    own = [c for c in result["checks"] if c["source_id"] == source_id]
    flagged = sum(1 for names in chunk_flags if names)
    matching = sum(1 for names in chunk_flags if shown.intersection(names))
    low, high = window if window is not None else (0, len(text))
    # The flags the filter asks for, for the steps from match to match.
    filtered = f' data-shown="{escape(" ".join(sorted(shown)))}"' if shown else ""
    # The column's name is shown whole (it wraps); every other header line is one line
    # (cut with an ellipsis, whole on hover).
    sized = size_words(result["config"])
    named = f"{result['name']} ({sized})"
    document = plain_text(source_id)
    counted = f"{len(chunks):,} chunk{'' if len(chunks) == 1 else 's'} in {document}"
    head = (
        f'<div class="cbx-view" data-policy="{escape(result["name"])}" '
        f'data-doc="{escape(source_id)}" data-len="{len(text)}" data-window="{low} {high}"'
        f"{filtered}>"
        f'<div class="cbx-head"><div class="cbx-name" title="{escape(named)}">'
        f'{escape(result["name"])} <span class="cbx-sub">({escape(sized)})</span></div>'
        f'<div class="cbx-line" title="{escape(counted)}"><span class="cbx-count">'
        f"{len(chunks):,} chunk{'' if len(chunks) == 1 else 's'} in "
        f'<bdi class="cbx-docname">{escape(document)}</bdi></span>'
        f'<span class="cbx-sub"> · {result["chunk_count"]:,} in all documents</span></div>'
        f'<div class="cbx-line"><span class="cbx-flagcount" title="{_FLAGGED_HERE}">'
        f"{flagged:,} flagged</span>"
        + (f'<span class="cbx-sub"> · {matching:,} match the filter</span>' if shown else "")
        + "</div>"
    )
    drawn = [i for i, c in enumerate(chunks) if c["start"] < high and low < c["end"]]
    drawn_marks = [m for m in marks if m.start < high and low < m.end]
    if (low, high) != (0, len(text)):
        first, last = (chunks[drawn[0]]["order"], chunks[drawn[-1]]["order"]) if drawn else (0, 0)
        which = f"chunks {first:,} to {last:,}" if drawn else "no chunk"
        said = f"page: [{low:,}, {high:,}) of {len(text):,} chars · {which}"
        head += (
            f'<div class="cbx-page cbx-line" data-window="{low} {high}" title="{said}">{said}</div>'
        )
    if len(drawn) + len(drawn_marks) + len(own) > MAX_DRAWN_PIECES:
        return (
            f'{head}</div><div class="cbx-limit">Not drawn: this {"page" if window else "view"} '
            f"has {len(drawn):,} "
            f"chunks, {len(drawn_marks):,} span marks and {len(own):,} checks, and a view "
            f"draws at most {MAX_DRAWN_PIECES:,} in all. Raise max_chars or choose a smaller "
            "document; the table above still says where each span lies.</div></div>"
        )
    strip = render_minimap(
        len(text),
        [c["start"] for c in chunks],
        [(m.start, m.end) for m in marks],
        [(c["start"], c["end"]) for c, names in zip(chunks, chunk_flags, strict=True) if names],
        (low, high),
    )
    if window is not None:
        chunks = [chunks[i] for i in drawn]
        chunk_flags = [chunk_flags[i] for i in drawn]
    body = render_text(
        text,
        chunks,
        drawn_marks,
        None,
        chunk_flags,
        shown,
        (low, high),
        _page_starts(index, source_id),
    )
    return (
        f"{head}{STEPS}{(MATCH_STEPS if matching else NO_MATCH_STEPS) if shown else ''}"
        f'<div class="cbx-verdicts">{_verdicts(own)}</div></div>'
        f'<div class="cbx-body">{strip}<div class="cbx-doc">{body}</div>{aside}</div></div>'
    )


def _steps(what: str, title: str, match: bool, disabled: bool = False) -> str:
    """A view's pair of step buttons: the navigation script (ui/navigation.js) scrolls the
    view to the previous or next chunk start of its column (of a chunk the flag filter
    matches, with `match`), turning the page if it must, and the others follow."""
    marked = ' data-match="1"' if match else ""
    marked += " disabled" if disabled else ""
    return (
        '<span class="cbx-steps">'
        + "".join(
            f'<button type="button" class="cbx-step" data-step="{step}"{marked} '
            f'title="{title.format(way=way)}">{arrow} {way} {what}</button>'
            for step, way, arrow in ((-1, "previous", "↑"), (1, "next", "↓"))
        )
        + "</span>"
    )


STEPS = _steps("boundary", "Scroll to the {way} chunk start of this column", match=False)
# While the flag filter is on, every view has the match steps (so the views still start
# at the same height); they are disabled where no chunk of the document matches.
MATCH_STEPS = _steps(
    "match", "Scroll to the {way} chunk of this column that the flag filter matches", match=True
)
NO_MATCH_STEPS = _steps(
    "match", "No chunk of this column in this document matches the flag filter", True, True
)


# The retrieval panel's views: retrieved chunks keep their colours and wear their rank;
# the chunks not retrieved are drawn grey, so the winners stand out.
RANKED_STYLE = (
    "<style>"
    ".cbx-r::before{content:attr(data-r);display:inline-block;font:700 10px/1.3 sans-serif;"
    "background:#1565c0;color:#fff;border-radius:7px;padding:0 4px;margin:0 2px 0 0;"
    "vertical-align:1px}"
    ".cbx-ranked .cbx-k:not(.cbx-hit){background-color:#ececec;color:#666}"
    ".cbx-hits{font:400 12px/1.7 sans-serif;color:#333;min-height:3.4em}"
    ".cbx-hits .cbx-hitref{display:inline-block;margin-right:8px}"
    ".cbx-fig{font:400 12px/1.6 sans-serif;color:#333}"
    ".cbx-fig b{font-weight:700}"
    "</style>"
)

RANKED_LEGEND = (
    '<div class="cbx-legend">'
    '<span class="cbx-r" data-r="#1"></span> a retrieved chunk starts here: its rank '
    "(#1 is the best match), then its order "
    '<span class="cbx-n" data-n="3"></span> &nbsp;·&nbsp; '
    '<span class="cbx-k cbx-k0">coloured</span> retrieved &nbsp;·&nbsp; '
    '<span style="background:#ececec;color:#666">grey background</span> a chunk not '
    "retrieved &nbsp;·&nbsp; "
    '<span class="cbx-in">outlined</span> the question\'s answer (its references)'
    "</div>"
)


def _figures(result: QuestionResult) -> str:
    hit = "✓ one chunk holds it all" if result["hit"] else "✗ no chunk holds it all"
    return (
        f'<div class="cbx-fig">recall <b>{result["recall"]:.3f}</b> · precision '
        f"<b>{result['precision']:.3f}</b> · IoU <b>{result['iou']:.3f}</b> · {hit}</div>"
    )


def render_ranked_view(
    text: str, name: str, config: Mapping[str, object], index: Index, result: QuestionResult
) -> str:
    """One column's view of a question's document: its references outlined, each
    retrieved chunk marked with its rank; a header with the question's figures and the
    ranked hits (those in other documents named by source and offsets).

    Drawn within `MAX_DRAWN_PIECES`, as `render_view` is.
    """
    source_id = result["source_id"]
    chunks = [c for c in index["chunks"] if c["source_id"] == source_id]
    low, high = answer_window(chunks, result["references"], len(text))
    orders = {c["chunk_id"]: c["order"] for c in chunks}
    ranks = {
        orders[h["chunk_id"]]: h["rank"] for h in result["retrieved"] if h["chunk_id"] in orders
    }
    references = result["references"]
    marks = [
        Highlight(
            result["id"], "answer" if len(references) == 1 else f"answer {n}", r["start"], r["end"]
        )
        for n, r in enumerate(references, 1)
    ]
    hits = "".join(
        f'<span class="cbx-hitref"><span class="cbx-r" data-r="#{h["rank"]}"></span>'
        + (
            f"chunk {orders[h['chunk_id']]}"
            if h["chunk_id"] in orders
            else f"<bdi>{escape(h['source_id'])}</bdi> [{h['start']:,}, {h['end']:,})"
        )
        + (f" ({page_label(h['pages'])})" if "pages" in h else "")
        + "</span>"
        for h in result["retrieved"]
    )
    head = (
        f'<div class="cbx-view cbx-ranked" data-ranked="{escape(name)}">'
        f'<div class="cbx-head">{escape(name)} '
        f'<span class="cbx-sub">({escape(size_words(config))})</span>'
        f'{_figures(result)}<div class="cbx-hits">top {len(result["retrieved"])}: {hits}</div>'
    )
    if (low, high) != (0, len(text)):
        head += (
            f'<div class="cbx-fig cbx-window" data-window="{low} {high}">drawn: characters '
            f"[{low:,}, {high:,}) of {len(text):,}: the answer and a chunk either side</div>"
        )
    if len(chunks) + len(marks) > MAX_DRAWN_PIECES:
        return (
            f'{head}</div><div class="cbx-limit">Not drawn: this view has {len(chunks):,} '
            f"chunks and a view draws at most {MAX_DRAWN_PIECES:,}. Raise max_chars or "
            "choose a smaller document; the hits above still say where each lies.</div></div>"
        )
    drawn = render_text(
        text, chunks, marks, ranks, window=(low, high), page_starts=_page_starts(index, source_id)
    )
    return f'{head}</div><div class="cbx-doc">{drawn}</div></div>'


MARGIN = 300  # characters drawn either side of an answer that no chunk touches


def answer_window(
    chunks: Sequence[ChunkRecord], references: Sequence[ReferenceRange], length: int
) -> tuple[int, int]:
    """What a ranked view draws of a long document: from the chunk before the first that
    touches the answer to the chunk after the last (`MARGIN` characters around the answer
    when no chunk touches it)."""
    low = min(r["start"] for r in references)
    high = max(r["end"] for r in references)
    touching = [i for i, c in enumerate(chunks) if c["start"] < high and low < c["end"]]
    if not touching:
        return max(low - MARGIN, 0), min(high + MARGIN, length)
    first, last = chunks[max(touching[0] - 1, 0)], chunks[min(touching[-1] + 1, len(chunks) - 1)]
    return min(first["start"], low), max(last["end"], high)


_VERDICT_MARK = {
    "together": "✓ together",
    "together by overlap": "✓ together, only thanks to overlap",
    "split": "✗ split",
    "not evaluated": "not evaluated",
}
_VERDICT_CLASS = {
    "together": "cbx-yes",
    "together by overlap": "cbx-yes",
    "split": "cbx-no",
    "not evaluated": "cbx-skip",
}


def _jumps(check: ResolvedCheck | None) -> str:
    """A button per span of a check: the navigation script shows it in the views."""
    if check is None:
        return ""
    return (
        '<div class="cbx-jumps">'
        + "".join(
            f'<button type="button" class="cbx-jump" data-doc="{escape(check.source_id)}" '
            f'data-at="{span.start}" title="Show this span in the views">'
            f"↧ <bdi>{escape(plain_text(span.label))}</bdi></button>"
            for span in check.spans
        )
        + "</div>"
    )


SCROLL_HINT_COLUMNS = 4  # a narrow window (ui/layout.py) shows the hint from this many


def render_matrix(
    names: Sequence[str], rows: Sequence[MatrixRow], checks: Sequence[ResolvedCheck] = ()
) -> str:
    """A row per span check, a cell per column: the verdict coloured, where each span lies;
    under a check's name, a button per span (of `checks`) that shows it in the views."""
    if not rows:
        return (
            '<div class="cbx-note">No span checks yet: list them in the manifest, or add one '
            "under <b>Span checks</b> below, to see which columns keep them together.</div>"
        )
    head = "".join(f"<th><bdi>{escape(plain_text(name))}</bdi></th>" for name in names)
    resolved = {(check.id, check.source_id): check for check in checks}
    body = "".join(
        f'<tr><th scope="row"><bdi>{escape(plain_text(row.check_id))}</bdi>'
        f'<div class="cbx-where"><bdi>{escape(plain_text(row.source_id))}</bdi></div>'
        f"{_jumps(resolved.get((row.check_id, row.source_id)))}</th>"
        + "".join(
            f'<td class="cbx-cell {_VERDICT_CLASS[cell.verdict]}" data-verdict="{cell.verdict}">'
            f"{_VERDICT_MARK[cell.verdict]}"
            f'<div class="cbx-where">{escape(plain_text(cell.where))}</div></td>'
            for cell in row.cells
        )
        + "</tr>"
        for row in rows
    )
    hint = (
        '<div class="cbx-scrollhint">Scroll the table sideways for every column →</div>'
        if len(names) >= SCROLL_HINT_COLUMNS
        else ""
    )
    return (
        '<div class="cbx-scroll"><table class="cbx-matrix"><thead><tr><th>Span check</th>'
        f"{head}</tr></thead><tbody>{body}</tbody></table></div>{hint}"
    )


def document_rows(load: LoadResult) -> list[dict[str, str]]:
    """One row per document of the manifest: where it is, and whether it loaded."""
    return [
        {"Source": s.source_id, "Path": s.path, "Status": str(s.status), "Detail": s.detail}
        for s in load.statuses
    ]
