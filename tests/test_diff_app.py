"""AppTest: *Diff two columns* (pickers, the diff view, the scoreboard's row for the pair,
the questions that flip) and *Export a column* (downloads and the snippet)."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from explorer import (
    DirectoryReader,
    Exploration,
    Settings,
    explore,
    load_documents,
    parse_manifest,
)
from explorer.checking.diff import boundaries
from explorer.chunking.snippet import snippet
from explorer.pipeline import export_column
from explorer.retrieval.flips import Measured, diff_columns
from explorer.retrieval.questions import parse_questions
from tests.conftest import MANIFEST, ROOT
from tests.test_app import download_labels, errors, shown
from tests.test_store_app import library_upload

APP = str(ROOT / "app.py")
LIBRARY = ROOT / "fixtures" / "library"

pytestmark = pytest.mark.usefixtures("private_index")


def start() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120).run()


def diff_view(at: AppTest) -> str:
    views = [e.proto.body for e in at.get("html") if "cbx-view cbx-dv" in e.proto.body]
    assert len(views) == 1, "one diff view"
    return str(views[0])


def pair_rows(at: AppTest) -> list[dict[str, str]]:
    tables = [t for t in at.table if "Boundary F1" in t.value.columns]
    assert len(tables) == 1
    return [{k: shown(v) for k, v in r.items()} for r in tables[0].value.to_dict("records")]


def fixture_exploration() -> Exploration:
    manifest = parse_manifest(MANIFEST.read_bytes())
    load = load_documents(manifest, DirectoryReader(MANIFEST.parent))
    return explore(load, manifest.span_checks, Settings.default())


def test_the_first_two_columns_are_diffed_and_marked_in_the_view() -> None:
    at = start()
    assert not at.exception and not errors(at)
    assert at.selectbox(key="diff_a").value == "fixed-char"
    assert at.selectbox(key="diff_b").value == "paragraph"
    view = diff_view(at)
    assert 'data-policy="fixed-char ⇄ paragraph"' in view
    exploration = fixture_exploration()
    doc = str(at.selectbox(key="doc").value)
    columns = {c.name: c for c in exploration.columns}
    text = exploration.text(doc)
    a, b = (
        set(boundaries([(c["start"], c["end"]) for c in columns[n].chunks_of(doc)], len(text)))
        for n in ("fixed-char", "paragraph")
    )
    marked_a = {int(x) for x in re.findall(r'cbx-da" data-n="A" data-at="(\d+)"', view)}
    marked_b = {int(x) for x in re.findall(r'cbx-db" data-n="B" data-at="(\d+)"', view)}
    assert marked_a == a - b and marked_b == b - a
    assert view.count('class="cbx-dab"') == len(a & b)
    assert "next difference" in view and 'class="cbx-map"' in view
    # The view draws the document's text, every character of it.
    pieces = re.findall(r'<span data-o="\d+">([^<]*)</span>', view)
    assert "".join(pieces).replace("&#10;", "\n") == __import__("html").escape(text)


def test_picking_b_and_a_tolerance_redraws_and_the_scoreboard_row_follows() -> None:
    at = start()
    at.selectbox(key="diff_b").set_value("heading-aware").run()
    assert not at.exception
    assert 'data-policy="fixed-char ⇄ heading-aware"' in diff_view(at)
    exploration = fixture_exploration()
    columns = {c.name: c for c in exploration.columns}
    expected = diff_columns(exploration, columns["fixed-char"], columns["heading-aware"])
    (row,) = pair_rows(at)
    assert row["Pair (A ⇄ B)"] == "fixed-char ⇄ heading-aware"
    assert row["Boundary F1"] == f"{expected['summary']['boundary_f1']:.3f}"
    assert row["Pk"] == f"{expected['summary']['pk']:.3f}"
    assert row["WindowDiff"] == f"{expected['summary']['windowdiff']:.3f}"
    at.number_input(key="diff_tolerance").set_value(5).run()
    looser = diff_columns(
        exploration,
        columns["fixed-char"],
        columns["heading-aware"],
        5,
    )
    (row,) = pair_rows(at)
    assert row["Boundary F1"] == f"{looser['summary']['boundary_f1']:.3f}"
    assert row["Tolerance"] == "5"


def test_a_equal_to_b_moves_b_to_another_column() -> None:
    at = start()
    at.selectbox(key="diff_a").set_value("paragraph").run()
    assert not at.exception
    assert at.selectbox(key="diff_b").value != "paragraph"
    assert "paragraph" not in at.selectbox(key="diff_b").options


def test_questions_that_flip_link_to_where_the_answer_is_cut() -> None:
    at = start()
    library_upload(at, "manifest.json")
    assert not at.exception and not errors(at)
    at.selectbox(key="diff_b").set_value("heading-aware").run()
    manifest = parse_manifest((LIBRARY / "manifest.json").read_bytes())
    load = load_documents(manifest, DirectoryReader(LIBRARY))
    exploration = explore(load, manifest.span_checks, Settings.default())
    columns = {c.name: c for c in exploration.columns}
    questions = parse_questions((LIBRARY / "questions.json").read_bytes())
    expected = diff_columns(
        exploration, columns["fixed-char"], columns["heading-aware"], 0, Measured(questions)
    )
    said = next(m.value for m in at.markdown if "Questions that flip" in m.value)
    hits = expected["hits"]
    assert expected["questions"] and any(q["cut_by"] for q in expected["questions"])
    assert f"{hits['a_only']} hit by A only, {hits['b_only']} by B only" in said
    table = next(e.proto.body for e in at.get("html") if '<table class="cbx-flips"' in e.proto.body)
    for question in expected["questions"]:
        assert question["id"] in table
        for offset in question["cut_by"]:
            assert f'data-doc="{question["source_id"]}" data-at="{offset}"' in table


def test_export_offers_three_downloads_and_the_snippet() -> None:
    at = start()
    labels = set(download_labels(at))
    assert {"Download for LangChain", "Download for LlamaIndex", "Download for JSONL"} <= labels
    at.selectbox(key="export_column").set_value("heading-aware").run()
    exploration = fixture_exploration()
    column = next(c for c in exploration.columns if c.name == "heading-aware")
    (code,) = [c for c in at.code if "def chunk(text: str)" in c.value]
    assert code.value == snippet("heading-aware", column.config).rstrip("\n")
    assert code.language == "python"
    lines = export_column(column, "langchain").decode().splitlines()
    assert len(lines) == len(column.index["chunks"])
    assert json.loads(lines[0])["metadata"]["index_id"] == column.index["index_id"]
