"""Navigation's pure parts: the minimap, where a jump lands, the offsets the views carry
for the navigation script, the matrix's span buttons; and the app turning the page for a
jump (the browser's part is tests/test_browser_nav.py)."""

from __future__ import annotations

import html
import re
from functools import partial

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import make_config
from explorer.checking.checks import ResolvedCheck, ResolvedSpan
from explorer.pipeline import run_column
from explorer.view.navigation import ROWS, jump_target, render_minimap, step_boundary
from explorer.view.paging import page_of, pages
from explorer.view.render import render_matrix, render_view
from explorer.view.scoreboard import check_matrix
from tests.test_app import PASTE, long_document, shown, start, views
from tests.test_render import HOSTILE, doc, visible_text

TICK = re.compile(r'<i class="cbx-mt" style="top:([\d.]+)%" data-at="(\d+)"></i>')
BAR = re.compile(r'<i class="(cbx-m[psf])" style="top:([\d.]+)%;height:([\d.]+)%"></i>')
PIECE = re.compile(r'<span class="cbx-(?:k|gap)[^"]*" data-o="(\d+)"[^>]*>(.*?)</span>')
BADGE = re.compile(r'<span class="cbx-n[^"]*" data-n="(\d+)"[^>]*data-at="(\d+)"></span>')


def test_a_minimap_has_a_tick_per_row_with_a_start_carrying_its_first_start() -> None:
    length = 1_000_000
    starts = list(range(0, length, 150))  # 6,667 chunks, many to a row
    strip = render_minimap(length, starts, [], [], (0, length))
    ticks = [(float(top), int(at)) for top, at in TICK.findall(strip)]
    assert len(ticks) == ROWS
    rows = {start * ROWS // length: start for start in reversed(starts)}  # first per row
    assert [at for _, at in ticks] == [rows[row] for row in sorted(rows)]
    assert all(abs(top - at / length * 100) < 100 / ROWS for top, at in ticks)
    assert visible_text(strip) == ""  # no text: a view's text stays the document's


def test_a_minimap_merges_touching_marks_and_boxes_only_a_page() -> None:
    length = 4_000
    strip = render_minimap(
        length, [0, 2_000], [(100, 200), (200, 300), (3_000, 3_001)], [(0, 10)], (0, length)
    )
    bars = [(kind, float(top), float(height)) for kind, top, height in BAR.findall(strip)]
    assert bars == [
        ("cbx-ms", 2.5, 5.0),  # the two touching spans are one bar, rows 10 to 29
        ("cbx-ms", 75.0, 0.25),  # a one-character span still has its row
        ("cbx-mf", 0.0, 0.25),
    ]
    paged = render_minimap(length, [0], [], [], (1_000, 3_000))
    assert BAR.findall(paged) == [("cbx-mp", "25.00", "50.00")]
    assert paged.endswith('<i class="cbx-mh"></i></div>')
    assert 'data-len="4000"' in paged


def test_a_boundary_step_goes_to_the_next_or_previous_start_strictly() -> None:
    starts = [0, 10, 25]
    assert step_boundary(starts, 10, 1) == 25
    assert step_boundary(starts, 11, 1) == 25
    assert step_boundary(starts, 10, -1) == 0
    assert step_boundary(starts, 11, -1) == 10
    assert step_boundary(starts, 25, 1) is None
    assert step_boundary(starts, 0, -1) is None


def test_a_jump_lands_inside_the_document_or_nowhere() -> None:
    starts = {"fixed-char": [0, 80, 160]}
    matching = {"fixed-char": [80]}  # the starts of the chunks the flag filter matches
    land = partial(jump_target, length=200, starts=starts, matching=matching)
    assert land({"offset": 50}) == 50
    assert land({"offset": 200}) == 200  # the very end
    assert land({"offset": 50, "column": "fixed-char", "step": 1}) == 80
    assert land({"offset": 50, "column": "fixed-char", "step": -1}) == 0
    assert land({"offset": 170, "column": "fixed-char", "step": 1}) is None
    # A match step lands on the next or previous start of a matching chunk only.
    assert land({"offset": 0, "column": "fixed-char", "step": 1, "match": True}) == 80
    assert land({"offset": 80, "column": "fixed-char", "step": 1, "match": True}) is None
    assert land({"offset": 170, "column": "fixed-char", "step": -1, "match": True}) == 80
    assert land({"offset": 170, "column": "fixed-char", "step": -1, "match": False}) == 160
    for refused in (
        None,
        "50",
        [50],
        {},
        {"offset": "50"},
        {"offset": 5.0},
        {"offset": True},
        {"offset": -1},
        {"offset": 201},
        {"offset": 50, "step": 2},
        {"offset": 50, "step": True, "column": "fixed-char"},
        {"offset": 50, "step": 1},
        {"offset": 50, "step": 1, "column": "paragraph"},
        {"offset": 50, "step": 1, "column": "fixed-char", "match": "yes"},
        {"offset": 50, "step": 1, "column": "fixed-char", "match": 1},
    ):
        assert land(refused) is None, refused


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab <>&\n#é😀\u202e")), max_size=300),
    st.sampled_from(["fixed-char", "paragraph", "heading-aware"]),
    st.integers(1, 60),
)
def test_every_piece_names_its_offset_and_every_badge_its_chunk_start(
    body: str, strategy: str, size: int
) -> None:
    """What the navigation script reads: a piece's `data-o` is the offset (in code points)
    of its first character, a badge's `data-at` its chunk's start."""
    text = "# T\n" + body
    config = make_config(strategy, None if strategy == "paragraph" else size)
    column = run_column(strategy, [doc(text)], [], config)
    markup = render_view(text, "d", column.result, column.index, [])
    body = markup.split('<div class="cbx-doc">')[1]
    found = PIECE.findall(body)
    assert "".join(visible_text(piece) for _, piece in found) == text
    for offset, piece in found:
        shown = html.unescape(piece.replace("<bdi>", "").replace("</bdi>", ""))
        assert text[int(offset) : int(offset) + len(shown)] == shown
    chunks = column.index["chunks"]
    assert [(int(n), int(at)) for n, at in BADGE.findall(body)] == [
        (c["order"], c["start"]) for c in chunks
    ]


def test_the_matrix_has_a_button_per_span_naming_its_document_and_start() -> None:
    text = HOSTILE
    check = ResolvedCheck(
        'c"<b>', 'd"<i>', (ResolvedSpan("<b>first</b>", 2, 7), ResolvedSpan('x" y', 40, 44))
    )
    column = run_column("paragraph", [doc(text)], [check], make_config("paragraph"))
    markup = render_matrix(["paragraph"], check_matrix([column], [check], []), [check])
    buttons = re.findall(r'<button type="button" class="cbx-jump" ([^>]*)>(.*?)</button>', markup)
    assert [html.unescape(label) for _, label in buttons] == [
        "↧ <bdi><b>first</b></bdi>",
        '↧ <bdi>x" y</bdi>',
    ]
    assert [re.findall(r'data-(doc|at)="([^"]*)"', attributes) for attributes, _ in buttons] == [
        [("doc", "d&quot;&lt;i&gt;"), ("at", "2")],
        [("doc", "d&quot;&lt;i&gt;"), ("at", "40")],
    ]
    assert "<b>" not in markup and "<i>" not in markup


def test_a_jump_the_page_asks_for_turns_every_view_to_its_page() -> None:
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    text = long_document()
    at.text_area(key="paste").set_value(text).run()
    bounds = pages(text)
    far = text.index("Part 58")
    at.session_state["nav_request"] = {"offset": far}  # what the jump trigger's callback keeps
    at.run()
    assert at.number_input(key="page").value == page_of(bounds, far) + 1 == len(bounds)
    assert "Part 58" in views(at)["heading-aware"]
    assert at.session_state["nav_target"] == {"doc": "pasted", "offset": far, "seq": 1}
    # A step past the page's first chunk start goes back to the previous page's last.
    low = bounds[-1][0]
    at.session_state["nav_request"] = {"offset": low, "column": "heading-aware", "step": -1}
    at.run()
    target = at.session_state["nav_target"]
    assert target["seq"] == 2 and target["offset"] < low
    assert at.number_input(key="page").value == len(bounds) - 1
    # Anything else is no jump: the page stays.
    at.session_state["nav_request"] = {"offset": "far"}
    at.run()
    assert at.number_input(key="page").value == len(bounds) - 1
    assert at.session_state["nav_target"]["seq"] == 2


def test_a_match_step_the_page_asks_for_lands_on_a_chunk_the_filter_matches() -> None:
    # Every third part's paragraph is longer than heading-aware's 220 characters.
    text = "# Mixed\n\n" + "".join(
        f"## Part {n}\n\n" + f"Sentence {n} of the part. " * (12 if n % 3 == 1 else 3) + "\n\n"
        for n in range(30)
    )
    at = start()
    at.radio(key="source").set_value(PASTE).run()
    at.text_area(key="paste").set_value(text).run()
    at.toggle(key="flag_by_design").set_value(False)  # v1 keeps long paragraphs whole
    at.multiselect(key="flag_filter").set_value(["over_size"]).run()
    request = {"offset": 0, "column": "heading-aware", "step": 1}
    at.session_state["nav_request"] = request
    at.run()
    assert at.session_state["nav_target"]["offset"] == text.index("Sentence 0 ")
    at.session_state["nav_request"] = {**request, "match": True}
    at.run()
    assert at.session_state["nav_target"]["offset"] == text.index("Sentence 1 ")
    after = text.index("Sentence 1 ")
    at.session_state["nav_request"] = {**request, "offset": after, "match": True}
    at.run()
    assert at.session_state["nav_target"]["offset"] == text.index("Sentence 4 ")
    assert not at.toast
    # Past the last match, or the last chunk start, a step says that it found nothing.
    last = text.index("Sentence 28 ")
    at.session_state["nav_request"] = {**request, "offset": last, "match": True}
    at.run()
    assert at.session_state["nav_target"]["offset"] == text.index("Sentence 4 ")  # unmoved
    said = [shown(toast.value) for toast in at.toast]
    assert said == ["No chunk that the flag filter matches after this place in heading-aware."]
    at.session_state["nav_request"] = {**request, "offset": len(text)}
    at.run()
    assert [shown(t.value) for t in at.toast] == [
        "No chunk start after this place in heading-aware."
    ]
    at.session_state["nav_request"] = {**request, "step": True}  # not a step: no word
    at.run()
    assert not at.toast
