"""A session's choices survive a browser that draws the page anew without its widget state.

Under load (several sessions uploading 1 MiB each at once) a browser can draw a widget
again without the state it held, and it then sends the widget's default back as if it
had been chosen. Every widget of the sidebar and the document picker must default to
what the session holds, or a page jumps to max_chars 1 (a size's minimum) or drops its
upload (the source radio's first option) though nobody touched it.
"""

from __future__ import annotations

from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explorer.grammars import GRAMMARS
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("private_index")

APP = str(ROOT / "app.py")
# Each sidebar radio's options, as the script gives them (the test sends one back).
RADIOS = {"source": ["Bundled example", "Upload files", "Paste text"], "grammar": list(GRAMMARS)}
TEXT = "# Rotating keys\n\n" + "".join(
    f"## Part {n}\n\nCall rotate_key(id) once the new key is deployed, part {n}.\n\n"
    for n in range(60)
)


def sizes(at: AppTest) -> dict[str, Any]:
    return {key: at.slider(key=key).value for key in ("fixed-char", "heading-aware")}


def uploaded() -> AppTest:
    """A session seeded from a link, with a plain file uploaded and a size moved."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["fixed-char"] = "500"
    at.query_params["heading-aware"] = "300"
    at.run()
    at.radio(key="source").set_value("Upload files").run()
    at.file_uploader(key="upload").set_value([("keys.md", TEXT.encode(), "text/markdown")]).run()
    at.slider(key="heading-aware").set_value(640).run()
    at.number_input(key="fixed-char-overlap").set_value(40).run()
    assert not at.exception
    assert sizes(at) == {"fixed-char": 500, "heading-aware": 640}
    return at


def redraw_without_state(at: AppTest) -> None:
    """What a browser that lost its widget state sends: each widget's default."""
    for widget in [*at.sidebar.slider, *at.sidebar.number_input]:
        default = widget.proto.default
        value = default[0] if hasattr(default, "__len__") else default
        widget.set_value(int(value))
    for toggle in [*at.sidebar.toggle, *at.sidebar.checkbox]:
        toggle.set_value(toggle.proto.default)
    for radio in at.sidebar.radio:
        radio.set_value(RADIOS[str(radio.key)][radio.proto.default])
    picker = at.selectbox(key="doc")
    picker.set_value(picker.options[picker.proto.default])


def test_each_widget_defaults_to_what_the_session_holds() -> None:
    at = uploaded()
    for widget in [*at.sidebar.slider, *at.sidebar.number_input]:
        default = widget.proto.default
        assert (default[0] if hasattr(default, "__len__") else default) == widget.value, widget.key
    for toggle in [*at.sidebar.toggle, *at.sidebar.checkbox]:
        assert toggle.proto.default == toggle.value, toggle.key
    for radio in at.sidebar.radio:
        assert radio.proto.default == radio.index, radio.key


def test_a_redrawn_page_keeps_its_sizes_its_upload_and_its_document() -> None:
    at = uploaded()
    redraw_without_state(at)
    at.run()
    assert not at.exception
    assert sizes(at) == {"fixed-char": 500, "heading-aware": 640}
    assert at.number_input(key="fixed-char-overlap").value == 40
    assert at.radio(key="source").value == "Upload files"
    assert at.selectbox(key="doc").value == "keys"
    assert not [e for e in at.error if "too_many_chunks" in e.value]
