"""A semantic column in the app: its sidebar box, its link, and its curve beside its view
(explorer/view/curve.py), redrawn by a percentile step without embedding again."""

from __future__ import annotations

import re
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.chunking.policies import semantic
from explorer.embedders import embed_texts
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
COLUMNS = "semantic:300;heading-aware:220"

pytestmark = pytest.mark.usefixtures("private_index")


def start(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def curve_html(at: AppTest) -> str:
    return next(e.value for e in at.html if 'class="cbx-curve"' in e.value)


def test_a_semantic_column_draws_its_curve_and_a_step_embeds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    semantic._DISTANCES.clear()
    calls: list[int] = []

    def counted(embedder: Any, texts: list[str]) -> Any:
        calls.append(len(texts))
        return embed_texts(embedder, texts)

    monkeypatch.setattr(semantic, "embed_texts", counted)
    at = start(columns=COLUMNS)
    assert not at.exception and not at.error
    assert at.slider(key="semantic-percentile").value == 95
    drawn = curve_html(at)
    assert 'data-policy="semantic"' in drawn
    assert "threshold" in drawn and "cbx-ct" in drawn
    mark = r'class="cbx-c[pbf]" style="top:[0-9.]+%;width:[0-9.]+%" data-at="\d+"'
    assert re.findall(mark, drawn)
    assert 'title="gap at ' in drawn and "left [" in drawn and "right [" in drawn  # hover
    embedded = len(calls)
    assert embedded > 0
    at.slider(key="semantic-percentile").set_value(50).run()
    assert not at.exception and not at.error
    assert len(calls) == embedded  # the distances were kept: nothing embedded again
    assert at.query_params["semantic.p"] == "50"
    assert at.query_params["columns"] == COLUMNS
    assert curve_html(at).count("cbx-cb") > drawn.count("cbx-cb")  # more breakpoints


def test_the_link_restores_a_semantic_column() -> None:
    at = start(columns=COLUMNS, **{"semantic.p": "70", "semantic.w": "3"})
    assert at.slider(key="semantic-percentile").value == 70
    assert at.number_input(key="semantic-window").value == 3
    assert at.slider(key="semantic").value == 300


def test_semantic_can_be_added_from_the_picker() -> None:
    at = start()
    at.selectbox(key="add_column").set_value("semantic").run()
    assert not at.exception and not at.error
    assert "semantic" in at.query_params["columns"]
    assert curve_html(at)
