"""One name per column everywhere: the sidebar's widgets are named as the views, the
scoreboard and the report name the column (`Settings.config_names`)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.test_app import shown

pytestmark = pytest.mark.usefixtures("private_index")


def test_the_sidebar_names_each_column_as_the_views_and_the_scoreboard_do() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    at.selectbox(key="add_column").set_value("heading-aware").run()
    at.toggle(key="heading-aware_2-in-tokens").set_value(True).run()
    assert not at.exception
    board = next(t for t in at.table if "Checks kept" in t.value.columns)
    names = [shown(name) for name in board.value["Column"]]
    views = [html.value for html in at.html if "cbx-view" in html.value]
    sliders = [slider.label for slider in at.sidebar.slider]
    overlaps = [box.label for box in at.sidebar.number_input if box.label.endswith("overlap")]
    assert names == ["fixed-char", "paragraph", "heading-aware@220", "heading-aware@55t"]
    assert sliders == [
        "fixed-char max_chars",
        "heading-aware@220 max_chars",
        "heading-aware@55t max_tokens",
    ]
    assert overlaps == [
        "fixed-char overlap",
        "heading-aware@220 overlap",
        "heading-aware@55t overlap",
    ]
    for name in ("heading-aware@220", "heading-aware@55t"):
        assert any(
            f"data-policy='{name}'" in view or f'data-policy="{name}"' in view for view in views
        )
        assert f"**{name}**" in [shown(m.value) for m in at.sidebar.markdown]
